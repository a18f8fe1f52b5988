"""moto server with DynamoDB requests serialized.

DynamoDB runs every transaction and conditional write atomically; moto's threaded server
checks conditions and applies writes without holding a lock, so concurrent requests could
interleave in ways DynamoDB never allows. Serializing DynamoDB requests (SQS and the rest
stay concurrent) gives the emulator DynamoDB's guarantee, so the concurrency tests test the
product, not the emulator.

Transactions take up to 100 items, as DynamoDB allows (moto still enforces the former 25).

Per request, moto listed its own package folder and matched the host against every service's
URL patterns, and werkzeug logged a line: both are remembered per host here, and the log
keeps its warnings only, so a test suite's thousands of requests do not queue behind them.

The answers of item operations are written as JSON directly: moto's model-driven serializer
spent more time on a read of one stream item than the read itself (over a third of the
server's time in a busy show), and behind the one lock that capped every test's rate. The
JSON is the same: attribute values as DynamoDB writes them, binary values in base64, no
`null` members.

A transaction backs up the items it touches, not whole tables: moto deep-copies every table a
transaction names, once per item, to roll back a cancelled one, so its transactions slow down
with the size of the table (a busy show's thousands of dedupe records made each take tens of
milliseconds, behind the one lock). Serialized as they are here, nothing else can change
those items in between.
"""

import base64
import copy
import inspect
import functools
import json
import logging
import sys
import threading
from datetime import datetime

import moto.backends
import moto.dynamodb.models
import moto.dynamodb.responses
from moto.dynamodb.models import DynamoDBBackend, Table
from moto.dynamodb.responses import DynamoHandler, DynamoResult
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from moto.server import main

moto.dynamodb.responses.TRANSACTION_MAX_ITEMS = 100

_lock = threading.Lock()
_call_action = DynamoHandler.call_action


def _serialized_call_action(self):
    with _lock:
        return _call_action(self)


DynamoHandler.call_action = _serialized_call_action


class _NoTableCopies:
    """moto's `copy` module, except that a table is not copied (its items are backed up)."""

    @staticmethod
    def deepcopy(value, *args, **kwargs):
        if isinstance(value, Table):
            return value
        return copy.deepcopy(value, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(copy, name)


moto.dynamodb.models.copy = _NoTableCopies()
_transact_write_items = DynamoDBBackend.transact_write_items


def _touched_keys(backend, transact_items):
    for entry in transact_items:
        op_type, op = next(iter(entry.items()))
        table_name = op.get("TableName")
        if table_name not in backend.tables:
            continue
        table = backend.tables[table_name]
        if op_type == "Put":
            attrs = op.get("Item", {})
            key = {table.hash_key_attr: attrs.get(table.hash_key_attr)}
            if table.range_key_attr is not None:
                key[table.range_key_attr] = attrs.get(table.range_key_attr)
        else:
            key = op.get("Key")
        if key and all(value is not None for value in key.values()):
            yield table_name, key


def _transact_write_items_backed_up(self, transact_items):
    backups = []
    for table_name, key in _touched_keys(self, transact_items):
        try:
            item = self.get_item(table_name, key)
        except Exception:
            continue
        backups.append((table_name, key, copy.deepcopy(item.to_json()["Attributes"]) if item else None))
    try:
        return _transact_write_items(self, transact_items)
    except Exception:
        # Restored in reverse, so an item a transaction names twice ends as it began.
        for table_name, key, attrs in reversed(backups):
            if attrs is None:
                if self.get_item(table_name, key) is not None:
                    self.delete_item(table_name, key)
            else:
                self.put_item(table_name, attrs)
        raise


DynamoDBBackend.transact_write_items = _transact_write_items_backed_up

_query = Table.query


_QUERY_SIGNATURE = inspect.signature(_query)


def _query_one_partition(self, hash_key, *args, **kwargs):
    """A base-table query reads its partition, not every item of the table, as DynamoDB does.

    moto sorts and filters every item of the table for each one, so a query's cost grew with
    the table; the rest of its logic (range conditions, paging, limits) is kept as it is.
    """
    index_name = _QUERY_SIGNATURE.bind(self, hash_key, *args, **kwargs).arguments.get("index_name")
    if index_name or hash_key is None or not self.range_key_attr:
        return _query(self, hash_key, *args, **kwargs)
    partition = self.items.get(hash_key, {})
    self.all_items = lambda: list(partition.values())
    try:
        return _query(self, hash_key, *args, **kwargs)
    finally:
        del self.all_items


Table.query = _query_one_partition

_ITEM_OPERATIONS = {
    "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
    "BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems",
}
_execute_result = DynamoResult.execute_result


def _without_nulls(value):
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _json_value(value):
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    if isinstance(value, datetime):
        return value.timestamp()
    raise TypeError(f"{type(value).__name__} in a DynamoDB answer")


def _execute_item_result(self, context):
    if isinstance(self.result, Exception) or context.operation_model.name not in _ITEM_OPERATIONS:
        return _execute_result(self, context)
    body = json.dumps(_without_nulls(self.result), default=_json_value, separators=(",", ":"))
    return 200, {"Content-Type": "application/x-amz-json-1.0"}, body


DynamoResult.execute_result = _execute_item_result

_list_of_moto_modules = moto.backends.list_of_moto_modules
moto.backends.list_of_moto_modules = functools.cache(lambda: tuple(_list_of_moto_modules()))
_get_backend_for_host = DomainDispatcherApplication.get_backend_for_host
_backend_by_host = {}


def _remembered_backend_for_host(self, host):
    if host not in _backend_by_host:
        _backend_by_host[host] = _get_backend_for_host(self, host)
    return _backend_by_host[host]


DomainDispatcherApplication.get_backend_for_host = _remembered_backend_for_host
logging.getLogger("werkzeug").setLevel(logging.WARNING)

if __name__ == "__main__":
    sys.exit(main())
