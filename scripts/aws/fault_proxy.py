#!/usr/bin/env python3
"""HTTP proxy that injects AWS faults in front of a moto server.

The HTTP-level test suite runs the product's DynamoDB and SQS clients against moto. Moto
answers every well-formed request successfully, but real AWS does not: DynamoDB throttles,
fails internally, cancels transactions, lags behind on global secondary indexes and keeps a
new table in CREATING for a while; SQS refuses message bodies with characters outside the XML
range; connections drop after a write was applied; TransactWriteItems with a ClientRequestToken
is idempotent for ten minutes. This proxy sits between the product and moto and adds those
behaviours, so the tests can prove the product survives them.

Usage:
    python scripts/aws/fault_proxy.py --port LISTEN_PORT --upstream http://127.0.0.1:MOTO_PORT [--seed N]

Requests are identified by their X-Amz-Target header (DynamoDB_20120810.<Op>, AmazonSQS.<Op>,
AmazonSSM.<Op> or KMS's TrentService.<Op>), and S3's by their SigV4 scope (`/s3/aws4_request`, in the Authorization header
or a presigned URL's query) and path-style path (`/<bucket>/<key>`: PutObject, GetObject,
HeadObject, CreateBucket), and EventBridge Scheduler's by their REST path (`/schedules/<name>`:
CreateSchedule, UpdateSchedule, DeleteSchedule, GetSchedule); everything else (/moto-api/, ...)
is forwarded as is.

Fault rules are registered per scope string; a rule applies to a DynamoDB request when the
scope is a substring of one of its table names, to an SQS request when it is a substring of its
QueueUrl, to an SSM request when it is a substring of the parameter's Name, to an S3 request
when it is a substring of its bucket's name, and to a Scheduler request when it is a substring of
its schedule group's name, and to a KMS request when it is a substring of its encryption
context's `table` (the product's) or of the key it names. Control API on the same port (never forwarded):

    PUT    /__faults/<scope>   body: JSON rules; replaces the scope's rules, resets its stats
    DELETE /__faults/<scope>   removes the scope's rules and stats
    GET    /__faults/<scope>   {"requests": N, "injected": {"<kind>": N, ...}}
    GET    /__faults           the stats of every scope, by scope
    GET    /__totals           every request and injected fault since start, removed scopes too

Rules (all optional; probabilities between 0 and 1, drawn per request):
    fail_ops: [op, ...]          those operations answer the service's internal error
    denied_ops: [op, ...]        KMS: those operations answer 400 AccessDeniedException, as to a
                                 role its policy does not grant them
    slow_ops: {op: ms, ...}      those operations are forwarded after waiting ms (a slow service)
    throttling                   DynamoDB, SSM and KMS: 400 ThrottlingException; Scheduler: 429
    provisioned_throughput       DynamoDB: 400 ProvisionedThroughputExceededException
    internal_error               DynamoDB and SSM: 500 InternalServerError; Scheduler: 500
                                 InternalServerException; KMS: 500 KMSInternalException
    transaction_conflict         PutItem/UpdateItem/DeleteItem: 400 TransactionConflictException
    transaction_throttled        TransactWriteItems: TransactionCanceledException, ThrottlingError
    lost_response                writes are applied, then the connection drops without an answer
    sqs_500                      SQS: 500 InternalError
    s3_500                       S3: 500 InternalError (XML)
    s3_slow_down                 S3: 503 SlowDown (XML), S3's throttling
    gsi_stale                    Query/Scan on an index answers no items
    stale_index                  Query on an index answers the last answer forwarded for the same
                                 index partition (table, index, the partition key's value;
                                 whatever the range bounds), as an index that lags behind its
                                 table; a query with no recorded answer yet, or a page after the
                                 first, is forwarded. Answers are recorded while the rule is on,
                                 and forgotten when the scope's rules are replaced
    unprocessed                  BatchGetItem/BatchWriteItem: each key or write request is left
                                 unprocessed with this probability (drawn per entry, so at 1 none
                                 is ever processed). The unprocessed ones are answered under
                                 UnprocessedKeys (each table's entry as requested, with its
                                 ProjectionExpression, ConsistentRead, ExpressionAttributeNames)
                                 or UnprocessedItems; only the rest is forwarded, nothing when
                                 none is left. Batches over the service's limits are forwarded
                                 as they are, for the service's own error
    conflicts: {"hold_ms": N}    DynamoDB's optimistic concurrency: each TransactWriteItems holds
                                 the items it touches for N ms before it is forwarded, until its
                                 answer. Meanwhile a TransactWriteItems touching a held item is
                                 cancelled (400 TransactionCanceledException, reason
                                 TransactionConflict at the conflicting actions, None at the
                                 others) and a PutItem/UpdateItem/DeleteItem of a held item
                                 answers 400 TransactionConflictException; neither is forwarded,
                                 and neither holds anything. An item is its table name and key:
                                 the Key of Update, Delete and ConditionCheck as sent, the `pk`
                                 and `sk` attributes of a Put's Item (the product's tables key
                                 on those two strings). Transactions with the same
                                 ClientRequestToken do not conflict (the token's replay applies)
    partition_write_units: N     DynamoDB's per-partition write throughput: each partition key value
                                 (table and `pk`) takes N write units a second (a token bucket
                                 holding one second's units). A write costs 1 unit per KB of the
                                 item it sends, started (DynamoDB bills the larger of the item
                                 before and after; the request's is a floor), twice that inside
                                 TransactWriteItems, ConditionCheck included. A write beyond the
                                 rate is refused, not forwarded, and spends nothing: a single-item
                                 write with 400 ProvisionedThroughputExceededException and the
                                 throttling reason TableWriteKeyRangeThroughputExceeded, a
                                 transaction with TransactionCanceledException, ThrottlingError at
                                 the throttled actions and None at the others. AWS's limit is
                                 1,000 units a second per partition; tests run it at 1/100 (10)
                                 against moto's few hundred requests a second. BatchWriteItem is
                                 not metered
    table_creating_ms: N         for N ms after CreateTable the table is CREATING
    refuse_bodies_containing: S  SQS SendMessage whose body contains S: 400 InvalidMessageContents,
                                 and a SendMessageBatch entry whose body does: failed with that
                                 code (one message that can never be sent, among others that can)

Always on, whatever the scopes: SQS refuses message bodies and string attributes with
characters outside the XML range, and TransactWriteItems honours ClientRequestToken.

Stats count injected faults by rule name (unprocessed: one per key or write request left
unprocessed; conflicts: under `conflict`, one per refused write or cancelled transaction), plus
invalid_message_contents (one per refused message or batch entry), idempotent_replay and
idempotent_mismatch for the always-on rules.
Each injected fault is logged as one line on stderr.
"""

import argparse
import http.client
import http.server
import ipaddress
import json
import random
import re
import socket
import sys
import threading
import time
import urllib.parse
import uuid
import zlib
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus

DYNAMODB_TARGET = "DynamoDB_20120810."
SQS_TARGET = "AmazonSQS."
SSM_TARGET = "AmazonSSM."
KMS_TARGET = "TrentService."
KMS_ERRORS = {
    "internal_error": (500, "KMSInternalException", "An internal error occurred."),
    "throttling": (400, "ThrottlingException", "Rate exceeded"),
    "denied_ops": (400, "AccessDeniedException", "The caller is not authorized to perform this operation."),
}
CONTROL_PREFIX = "/__faults"
TOTALS_PATH = "/__totals"
JSON_CONTENT_TYPE = "application/x-amz-json-1.0"

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        # The proxy answers "100 Continue" itself and always sends whole bodies.
        "expect",
    }
)

# The probabilistic faults, in the order they are drawn; the first that fires wins.
PROBABILISTIC = (
    "throttling",
    "provisioned_throughput",
    "internal_error",
    "transaction_conflict",
    "transaction_throttled",
    "lost_response",
    "sqs_500",
    "s3_500",
    "s3_slow_down",
    "gsi_stale",
    "stale_index",
)
# Probabilities drawn per batch entry rather than per request.
PER_ENTRY = ("unprocessed",)
RULE_KEYS = frozenset(
    {
        "partition_write_units",
        "fail_ops",
        "denied_ops",
        "slow_ops",
        "table_creating_ms",
        "refuse_bodies_containing",
        "conflicts",
        *PROBABILISTIC,
        *PER_ENTRY,
    }
)

SINGLE_ITEM_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
# op: (the key of its unprocessed entries in the answer, the most entries the service takes)
BATCH_OPS = {"BatchGetItem": ("UnprocessedKeys", 100), "BatchWriteItem": ("UnprocessedItems", 25)}
# The key attributes of a Put's Item: the product's tables key on these two strings.
KEY_ATTRIBUTES = ("pk", "sk")
MAX_HOLD_MS = 60_000
WRITES = {
    "dynamodb": SINGLE_ITEM_WRITES | {"TransactWriteItems", "BatchWriteItem"},
    "sqs": frozenset({"SendMessage", "SendMessageBatch", "DeleteMessage"}),
    # Only reads are faulted: the product reads its secret, tests write it.
    "ssm": frozenset(),
    "kms": frozenset(),
    "s3": frozenset({"PutObject"}),
    "scheduler": frozenset({"CreateSchedule", "UpdateSchedule", "DeleteSchedule"}),
}

SCHEDULER_OPS = {"POST": "CreateSchedule", "PUT": "UpdateSchedule", "DELETE": "DeleteSchedule", "GET": "GetSchedule"}
SCHEDULER_ERRORS = {
    "throttling": (429, "ThrottlingException", "Rate exceeded."),
    "internal_error": (500, "InternalServerException", "Unexpected error occurred while processing the request."),
}

S3_ERRORS = {
    "s3_500": (500, "InternalError", "We encountered an internal error. Please try again."),
    "s3_slow_down": (503, "SlowDown", "Please reduce your request rate."),
}

# Faults answered by the proxy without forwarding: (status, code, message).
DYNAMODB_ERRORS = {
    "throttling": (400, "ThrottlingException", "Rate of requests exceeds the allowed throughput."),
    "provisioned_throughput": (
        400,
        "ProvisionedThroughputExceededException",
        "The level of configured provisioned throughput for the table was exceeded. "
        "Consider increasing your provisioning level with the UpdateTable API.",
    ),
    "internal_error": (500, "InternalServerError", "Internal server error"),
    "transaction_conflict": (400, "TransactionConflictException", "Transaction is ongoing for the item"),
}
SQS_INTERNAL_ERROR = (500, "InternalError", "We encountered an internal error. Please try again.")

PARTITION_THROTTLING_REASON = {
    "Code": "ThrottlingError",
    "Message": "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API.",
}
GSI_THROTTLING_REASON = {
    "Code": "ThrottlingError",
    "Message": "Throughput exceeds the current capacity for one or more global secondary indexes. "
    "DynamoDB is automatically scaling your index so please try again shortly.",
}
CONFLICT_REASON = {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}

INVALID_MESSAGE_CONTENTS = (
    "Invalid characters found. Valid unicode characters are "
    "#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"
)
# Anything outside the XML 1.0 character range, lone surrogates included.
INVALID_CHARACTER = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

IDEMPOTENCY_WINDOW_S = 600


def log(line):
    print(line, file=sys.stderr, flush=True)


@dataclass
class Response:
    status: int
    headers: list  # [(name, value)], in upstream order
    body: bytes
    reason: str = ""

    def header(self, name):
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def replay(self):
        """The same status, body and content type, as a new answer with its own request id."""
        headers = [
            ("Content-Type", self.header("Content-Type") or JSON_CONTENT_TYPE),
            ("x-amzn-RequestId", str(uuid.uuid4())),
            ("x-amz-crc32", str(zlib.crc32(self.body))),
        ]
        return Response(self.status, headers, self.body, self.reason)

    def with_json(self, payload):
        """The same response with a new JSON body (and a matching CRC32, which boto checks)."""
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = [
            (k, str(zlib.crc32(body)) if k.lower() == "x-amz-crc32" else v) for k, v in self.headers
        ]
        return Response(self.status, headers, body, self.reason)


def json_response(status, payload, extra_headers=()):
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers = [
        ("Content-Type", JSON_CONTENT_TYPE),
        ("x-amzn-RequestId", str(uuid.uuid4())),
        ("x-amz-crc32", str(zlib.crc32(body))),
        *extra_headers,
    ]
    return Response(status, headers, body)


def dynamodb_error(status, code, message, **extra):
    return json_response(
        status, {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message, **extra}
    )


def transaction_canceled(reasons):
    codes = ", ".join(r["Code"] for r in reasons)
    return dynamodb_error(
        400,
        "TransactionCanceledException",
        f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
        CancellationReasons=reasons,
    )


def ssm_error(status, code, message):
    return json_response(status, {"__type": code, "message": message})


def kms_error(status, code, message):
    # KMS's JSON 1.1 protocol: the same shape as SSM's.
    return json_response(status, {"__type": code, "message": message})


def sqs_error(status, code, message):
    # The SQS JSON protocol keeps the query protocol's error codes in x-amzn-query-error.
    fault = "Sender" if status < 500 else "Receiver"
    return json_response(
        status,
        {"__type": f"com.amazonaws.sqs#{code}", "message": message},
        [("x-amzn-query-error", f"{code};{fault}")],
    )


def s3_error(status, code, message):
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message></Error>"
    ).encode()
    return Response(status, [("Content-Type", "application/xml")], body, HTTPStatus(status).phrase)


def s3_operation(method, path, headers):
    """(op, bucket, key) of a path-style S3 request, or None for anything else."""
    split = urllib.parse.urlsplit(path)
    authorization = next((v for k, v in headers if k.lower() == "authorization"), "")
    credential = urllib.parse.parse_qs(split.query).get("X-Amz-Credential", [""])[0]
    if "/s3/aws4_request" not in authorization and "/s3/aws4_request" not in credential:
        return None
    bucket, _, key = urllib.parse.unquote(split.path).lstrip("/").partition("/")
    if not bucket:
        return None
    if key:
        op = {"PUT": "PutObject", "GET": "GetObject", "HEAD": "HeadObject"}.get(method, "Other")
    else:
        op = "CreateBucket" if method == "PUT" else "Other"
    return op, bucket, key


def table_names(payload):
    """Every table a DynamoDB request touches."""
    names = []
    if isinstance(payload.get("TableName"), str):
        names.append(payload["TableName"])
    for item in payload.get("TransactItems") or ():
        if isinstance(item, dict):
            for part in item.values():
                if isinstance(part, dict) and isinstance(part.get("TableName"), str):
                    names.append(part["TableName"])
    if isinstance(payload.get("RequestItems"), dict):
        names.extend(payload["RequestItems"])
    # Tagging operations name the table by ARN.
    if isinstance(payload.get("ResourceArn"), str):
        names.append(payload["ResourceArn"])
    return names


def resource_names(service, payload):
    if service == "dynamodb":
        return table_names(payload)
    if service == "kms":
        context = payload.get("EncryptionContext")
        names = [context.get("table")] if isinstance(context, dict) else []
        names += [payload.get(k) for k in ("KeyId", "TargetKeyId", "AliasName")]
        return [n for n in names if isinstance(n, str)]
    name = payload.get({"sqs": "QueueUrl", "s3": "Bucket", "scheduler": "GroupName"}.get(service, "Name"))
    return [name] if isinstance(name, str) else []


def fault_applies(kind, service, op, payload):
    if kind in ("throttling", "internal_error"):
        return service in ("dynamodb", "ssm", "scheduler", "kms")
    if kind == "provisioned_throughput":
        return service == "dynamodb"
    if kind == "transaction_conflict":
        return service == "dynamodb" and op in SINGLE_ITEM_WRITES
    if kind == "transaction_throttled":
        return service == "dynamodb" and op == "TransactWriteItems"
    if kind == "lost_response":
        return op in WRITES[service]
    if kind == "sqs_500":
        return service == "sqs"
    if kind in S3_ERRORS:
        return service == "s3"
    if kind == "gsi_stale":
        return service == "dynamodb" and op in ("Query", "Scan") and bool(payload.get("IndexName"))
    if kind == "stale_index":
        return is_index_query(service, op, payload)
    return False


def is_index_query(service, op, payload):
    return service == "dynamodb" and op == "Query" and bool(payload.get("IndexName"))


def index_partition(payload):
    """The index partition a Query reads (table, index, the value its partition key equals), or
    None for a page after the first. A lagging index answers any query of a partition from its
    past, whatever its range bounds: the product's sweeps bound theirs by the time now, so no
    two of their queries are alike."""
    expression = payload.get("KeyConditionExpression")
    values = payload.get("ExpressionAttributeValues")
    if not isinstance(expression, str) or not isinstance(values, dict) or payload.get("ExclusiveStartKey"):
        return None
    equality = re.match(r"\s*(#?\w+)\s*=\s*(:\w+)", expression)
    if not equality:
        return None
    return request_signature(
        [payload.get("TableName"), payload.get("IndexName"), equality.group(1), values.get(equality.group(2))]
    )


def request_signature(payload):
    """Equal for requests that would be answered alike: the whole payload, keys sorted."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def item_id(table, key):
    """One item, as the key of its holds; None when the request names it in no usable way."""
    if not isinstance(table, str) or not isinstance(key, dict) or not key:
        return None
    return f"{table}\n{request_signature(key)}"


def put_key(item):
    return {k: item[k] for k in KEY_ATTRIBUTES if k in item} if isinstance(item, dict) else None


def value_size(value):
    """DynamoDB's size of one attribute value: strings and binaries by their bytes, a number by
    one byte per two significant digits plus one, containers by their parts plus 3."""
    if not isinstance(value, dict) or len(value) != 1:
        return 0
    [(kind, inner)] = value.items()
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        digits = str(inner).lstrip("-").replace(".", "").strip("0")
        return (len(digits) + 1) // 2 + 1
    if kind == "B":
        return len(str(inner)) * 3 // 4
    if kind in ("SS", "NS", "BS") and isinstance(inner, list):
        return sum(value_size({kind[0]: part}) for part in inner)
    if kind == "L" and isinstance(inner, list):
        return 3 + sum(value_size(part) + 1 for part in inner)
    if kind == "M" and isinstance(inner, dict):
        return 3 + sum(len(name.encode()) + value_size(part) + 1 for name, part in inner.items())
    return 1


def attributes_size(attributes):
    if not isinstance(attributes, dict):
        return 0
    return sum(len(str(name).encode()) + value_size(value) for name, value in attributes.items())


def write_cost(kind, part, transactional):
    """(the partition the write lands in, its write units), or None when it names none."""
    if not isinstance(part, dict):
        return None
    key = put_key(part.get("Item")) if kind in ("Put", "PutItem") else part.get("Key")
    table, pk = part.get("TableName"), (key or {}).get("pk") if isinstance(key, dict) else None
    if not isinstance(table, str) or not isinstance(pk, dict):
        return None
    if kind in ("Put", "PutItem"):
        size = attributes_size(part.get("Item"))
    else:
        size = attributes_size(key) + attributes_size(part.get("ExpressionAttributeValues"))
    units = max(1, -(-size // 1024))
    return f"{table}\n{request_signature(pk)}", units * (2 if transactional else 1)


def write_costs(op, payload):
    """The partition and units of each write of a request, one per action in order."""
    if op in SINGLE_ITEM_WRITES:
        return [write_cost(op, payload, False)]
    actions = payload.get("TransactItems") if op == "TransactWriteItems" else None
    if not isinstance(actions, list):
        return []
    costs = []
    for action in actions:
        if isinstance(action, dict) and len(action) == 1:
            [(kind, part)] = action.items()
            costs.append(write_cost(kind, part, True))
        else:
            costs.append(None)
    return costs


def action_item(action):
    """The item one TransactItems action ({"Put" | "Update" | "Delete" | "ConditionCheck": ...})
    touches."""
    if not isinstance(action, dict) or len(action) != 1:
        return None
    [(kind, part)] = action.items()
    if not isinstance(part, dict):
        return None
    key = put_key(part.get("Item")) if kind == "Put" else part.get("Key")
    return item_id(part.get("TableName"), key)


def written_items(op, payload):
    """The items a write touches, one per action in order (None where it names none)."""
    if op in SINGLE_ITEM_WRITES:
        key = put_key(payload.get("Item")) if op == "PutItem" else payload.get("Key")
        return [item_id(payload.get("TableName"), key)]
    actions = payload.get("TransactItems")
    return [action_item(a) for a in actions] if isinstance(actions, list) else []


def batch_entries(op, requested):
    """The keys (BatchGetItem) or write requests (BatchWriteItem) of RequestItems by table,
    or None when malformed (then the service's own validation answers)."""
    if not isinstance(requested, dict):
        return None
    entries = {}
    for table, spec in requested.items():
        listed = spec.get("Keys") if op == "BatchGetItem" and isinstance(spec, dict) else spec
        if not isinstance(listed, list):
            return None
        entries[table] = listed
    return entries


def with_entries(op, requested, table, listed):
    """A table's RequestItems entry with only these keys or write requests, its options kept."""
    return {**requested[table], "Keys": listed} if op == "BatchGetItem" else listed


def merge_unprocessed(op, answered, added):
    """The upstream's own unprocessed entries (if any) plus the ones left out on purpose."""
    merged = dict(answered) if isinstance(answered, dict) else {}
    for table, spec in added.items():
        before = merged.get(table)
        if op == "BatchGetItem" and isinstance(before, dict):
            merged[table] = {**before, "Keys": list(before.get("Keys") or []) + spec["Keys"]}
        elif op == "BatchWriteItem" and isinstance(before, list):
            merged[table] = before + spec
        else:
            merged[table] = spec
    return merged


def invalid_text(value):
    return isinstance(value, str) and INVALID_CHARACTER.search(value) is not None


def invalid_message(message):
    """Whether SQS would refuse this SendMessage request or SendMessageBatch entry."""
    if invalid_text(message.get("MessageBody")):
        return True
    attributes = message.get("MessageAttributes")
    if isinstance(attributes, dict):
        return any(isinstance(a, dict) and invalid_text(a.get("StringValue")) for a in attributes.values())
    return False


def validate_rules(rules):
    """Returns an error message, or None when the rules are well formed."""
    if not isinstance(rules, dict):
        return "rules must be a JSON object"
    unknown = sorted(set(rules) - RULE_KEYS)
    if unknown:
        return f"unknown rules: {', '.join(unknown)}"
    for name in ("fail_ops", "denied_ops"):
        ops = rules.get(name, [])
        if not isinstance(ops, list) or not all(isinstance(op, str) for op in ops):
            return f"{name} must be a list of operation names"
    slow = rules.get("slow_ops", {})
    if not isinstance(slow, dict) or not all(
        isinstance(ms, int) and not isinstance(ms, bool) and 0 <= ms <= 60_000 for ms in slow.values()
    ):
        return "slow_ops must map operation names to milliseconds (0 to 60000)"
    for kind in (*PROBABILISTIC, *PER_ENTRY):
        p = rules.get(kind, 0)
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            return f"{kind} must be a probability between 0 and 1"
    needle = rules.get("refuse_bodies_containing", "x")
    if not isinstance(needle, str) or not needle:
        return "refuse_bodies_containing must be a non-empty string"
    ms = rules.get("table_creating_ms", 0)
    if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
        return "table_creating_ms must be a non-negative integer"
    units = rules.get("partition_write_units", 1)
    if isinstance(units, bool) or not isinstance(units, (int, float)) or units <= 0:
        return "partition_write_units must be a positive number of write units a second"
    conflicts = rules.get("conflicts", {"hold_ms": 0})
    hold = conflicts.get("hold_ms") if isinstance(conflicts, dict) else None
    if (
        not isinstance(conflicts, dict)
        or set(conflicts) != {"hold_ms"}
        or isinstance(hold, bool)
        or not isinstance(hold, int)
        or not 0 <= hold <= MAX_HOLD_MS
    ):
        return f'conflicts must be {{"hold_ms": N}} with N milliseconds (0 to {MAX_HOLD_MS})'
    return None


@dataclass
class Scope:
    name: str
    rules: dict
    requests: int = 0
    injected: Counter = field(default_factory=Counter)
    creating: dict = field(default_factory=dict)  # table name -> monotonic deadline
    answers: dict = field(default_factory=dict)  # index Query signature -> its last Response

    def stats(self):
        return {"requests": self.requests, "injected": dict(self.injected)}

    def is_creating(self, table):
        deadline = self.creating.get(table)
        return deadline is not None and time.monotonic() < deadline


class Faults:
    """The registered scopes and the random source, shared by all handler threads."""

    def __init__(self, seed):
        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        self._scopes = {}  # insertion order decides which of several matching scopes wins
        # Since start, whatever scopes were removed since: for the run's summary.
        self._totals = {"requests": 0, "injected": Counter()}
        # Items held by in-flight transactions, whatever scope they matched: item id -> owner.
        self._holds = {}
        # Per partition key value: (write units left, when last filled).
        self._buckets = {}

    def put(self, name, rules):
        with self._lock:
            self._scopes[name] = Scope(name, rules)

    def delete(self, name):
        with self._lock:
            self._scopes.pop(name, None)

    def stats(self, name=None):
        with self._lock:
            if name is None:
                return {s.name: s.stats() for s in self._scopes.values()}
            scope = self._scopes.get(name)
            return scope.stats() if scope else None

    def match(self, names):
        """The first registered scope matching one of the names; counts the request in it."""
        with self._lock:
            for scope in self._scopes.values():
                if any(scope.name in n for n in names):
                    scope.requests += 1
                    self._totals["requests"] += 1
                    return scope
        return None

    def count(self, scope, kind, n=1):
        if scope is not None:
            with self._lock:
                scope.injected[kind] += n
                self._totals["injected"][kind] += n

    def totals(self):
        with self._lock:
            return {"requests": self._totals["requests"], "injected": dict(self._totals["injected"])}

    def draw(self, scope, service, op, payload):
        """The fault to inject into this request, if any."""
        with self._lock:
            if op in scope.rules.get("fail_ops", ()):
                return "fail_ops"
            if service == "kms" and op in scope.rules.get("denied_ops", ()):
                return "denied_ops"
            for kind in PROBABILISTIC:
                p = scope.rules.get(kind, 0)
                if p > 0 and fault_applies(kind, service, op, payload) and self._rng.random() < p:
                    return kind
        return None

    def throttled_reasons(self, count):
        """Cancellation reasons with a random non-empty subset of the items throttled."""
        with self._lock:
            throttled = set(self._rng.sample(range(count), self._rng.randint(1, count)))
        return [dict(GSI_THROTTLING_REASON) if i in throttled else {"Code": "None"} for i in range(count)]

    def spend_write_units(self, rate, costs):
        """Spends each write's units from its partition's bucket, all or none: the indexes of
        the writes whose partition has too few units left (nothing is spent when any has)."""
        now = time.monotonic()
        with self._lock:
            wanted = Counter()
            for cost in costs:
                if cost is not None:
                    wanted[cost[0]] += cost[1]
            left = {}
            for partition, units in wanted.items():
                had, at = self._buckets.get(partition, (rate, now))
                left[partition] = min(rate, had + (now - at) * rate)
            short = {partition for partition, units in wanted.items() if units > left[partition]}
            if not short:
                for partition, units in wanted.items():
                    self._buckets[partition] = (left[partition] - units, now)
            return [i for i, cost in enumerate(costs) if cost is not None and cost[0] in short]

    def unprocessed(self, scope, count):
        """The indexes of the batch entries to leave unprocessed, each drawn on its own."""
        with self._lock:
            p = scope.rules.get("unprocessed", 0)
            return {i for i in range(count) if self._rng.random() < p}

    def hold(self, ids, owner):
        """Holds the items for a transaction unless another one holds one of them, in one step
        so that two transactions on one item cannot both pass. Returns (the ids now held for
        this owner, the indexes of the conflicting actions)."""
        with self._lock:
            conflicting = [
                i for i, item in enumerate(ids) if item is not None and self._holds.get(item, owner) != owner
            ]
            if conflicting:
                return set(), conflicting
            # An item its owner holds already (a retry with the same token) stays with the
            # request that took it, which releases it.
            taken = {item for item in ids if item is not None and item not in self._holds}
            self._holds.update(dict.fromkeys(taken, owner))
            return taken, []

    def release(self, ids):
        with self._lock:
            for item in ids:
                self._holds.pop(item, None)

    def held(self, ids):
        with self._lock:
            return any(item in self._holds for item in ids if item is not None)

    def record(self, scope, signature, response):
        with self._lock:
            scope.answers[signature] = response

    def recorded(self, scope, signature):
        with self._lock:
            return scope.answers.get(signature)

    def start_creating(self, scope, table):
        with self._lock:
            ms = scope.rules.get("table_creating_ms", 0)
            scope.creating[table] = time.monotonic() + ms / 1000


@dataclass
class _TokenEntry:
    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0
    request: object = None
    response: Response = None
    at: float = 0.0


class Idempotency:
    """DynamoDB's ClientRequestToken semantics for TransactWriteItems, which moto ignores."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries = {}
        self._pruned_at = 0.0

    def _acquire(self, token):
        with self._lock:
            now = time.monotonic()
            if now - self._pruned_at > 1:
                self._pruned_at = now
                self._entries = {
                    t: e
                    for t, e in self._entries.items()
                    if e.users or (e.response is not None and now - e.at < IDEMPOTENCY_WINDOW_S)
                }
            entry = self._entries.setdefault(token, _TokenEntry())
            entry.users += 1
            return entry

    def _release(self, entry):
        with self._lock:
            entry.users -= 1

    def run(self, token, payload, forward):
        """Returns (response, kind): kind names the injected fault, or is None when forwarded."""
        entry = self._acquire(token)
        try:
            # Held while forwarding: a concurrent request with the same token waits for the
            # first one's answer instead of being applied a second time.
            with entry.lock:
                if entry.response is not None and time.monotonic() - entry.at < IDEMPOTENCY_WINDOW_S:
                    if entry.request == payload:
                        return entry.response.replay(), "idempotent_replay"
                    return (
                        dynamodb_error(
                            400,
                            "IdempotentParameterMismatchException",
                            "The request uses the same client token as a previous, "
                            "but non-identical request.",
                        ),
                        "idempotent_mismatch",
                    )
                response = forward()
                if response.status == 200 and response.json() is not None:
                    entry.request, entry.response, entry.at = payload, response, time.monotonic()
                return response, None
        finally:
            self._release(entry)


class Request:
    def __init__(self, method, path, headers, body):
        self.method = method
        self.path = path
        self.headers = headers  # [(name, value)]
        self.body = body
        self.service = self.op = None
        self.payload = None
        target = next((v for k, v in headers if k.lower() == "x-amz-target"), "")
        for prefix, service in (
            (DYNAMODB_TARGET, "dynamodb"),
            (SQS_TARGET, "sqs"),
            (SSM_TARGET, "ssm"),
            (KMS_TARGET, "kms"),
        ):
            if target.startswith(prefix):
                self.service, self.op = service, target[len(prefix) :]
        split = urllib.parse.urlsplit(path)
        if not self.service and split.path.startswith("/schedules/") and method in SCHEDULER_OPS:
            # The group is in the body of a create or update, in the query otherwise.
            try:
                payload = json.loads(body.decode("utf-8") or "{}")
            except ValueError:
                payload = {}
            group = urllib.parse.parse_qs(split.query).get("groupName", [None])[0]
            group = group or (payload.get("GroupName") if isinstance(payload, dict) else None) or "default"
            self.service, self.op = "scheduler", SCHEDULER_OPS[method]
            self.payload = {"GroupName": group}
            return
        if not self.service:
            s3 = s3_operation(method, path, headers)
            if s3:
                self.service, self.op = "s3", s3[0]
                self.payload = {"Bucket": s3[1], "Key": s3[2]}
                return
        if self.service:
            try:
                payload = json.loads(body.decode("utf-8", "surrogatepass") or "{}")
            except ValueError:
                payload = None
            self.payload = payload if isinstance(payload, dict) else None

    def with_payload(self, payload):
        body = json.dumps(payload, separators=(",", ":")).encode()
        return Request(self.method, self.path, self.headers, body)


class ConnectionDropped(Exception):
    """Raised after the client connection was closed on purpose; nothing may be written."""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Idle keep-alive connections are closed after this many seconds.
    timeout = 300
    server_version = "fault-proxy"
    # An answer goes out as headers then body: with Nagle's algorithm on, the body waited for
    # the client's delayed ACK of the headers, 40 ms on every request.
    disable_nagle_algorithm = True

    # Set on the class by main().
    upstream = None  # (host, port)
    faults = None
    idempotency = None
    _local = threading.local()

    def log_message(self, format, *args):
        pass

    def handle(self):
        try:
            super().handle()
        finally:
            conn = getattr(self._local, "conn", None)
            if conn is not None:
                conn.close()
                self._local.conn = None

    def handle_one_request(self):
        # Every method goes through _serve, whatever its name.
        try:
            self.raw_requestline = self.rfile.readline(65537)
            if len(self.raw_requestline) > 65536:
                self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG)
                return
            if not self.raw_requestline:
                self.close_connection = True
                return
            if not self.parse_request():
                return
            self._serve()
            if not self.wfile.closed:
                self.wfile.flush()
        except (TimeoutError, ConnectionError, ConnectionDropped):
            self.close_connection = True

    # --- plumbing

    def _read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    # Trailers, up to the blank line.
                    while self.rfile.readline(65537).strip():
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(1024)
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0:
            raise ValueError("negative Content-Length")
        return self.rfile.read(length)

    def _upstream_connection(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(*self.upstream, timeout=120)
            conn.reused = False
            self._local.conn = conn
        return conn

    def _forward(self, request):
        for attempt in range(2):
            conn = self._upstream_connection()
            reused = conn.reused
            try:
                conn.putrequest(request.method, request.path, skip_host=True, skip_accept_encoding=True)
                has_host = False
                for name, value in request.headers:
                    lowered = name.lower()
                    if lowered in HOP_BY_HOP or lowered == "content-length":
                        continue
                    has_host |= lowered == "host"
                    conn.putheader(name, value)
                if not has_host:
                    conn.putheader("Host", "%s:%d" % self.upstream)
                if request.body or request.method in ("POST", "PUT", "PATCH"):
                    conn.putheader("Content-Length", str(len(request.body)))
                conn.endheaders(request.body or None)
                upstream = conn.getresponse()
                body = upstream.read()
            except (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionError):
                conn.close()
                self._local.conn = None
                # A kept-alive connection the upstream closed meanwhile: try once on a new one.
                if reused and attempt == 0:
                    continue
                raise
            except Exception:
                conn.close()
                self._local.conn = None
                raise
            if upstream.will_close:
                conn.close()
                self._local.conn = None
            else:
                conn.reused = True
            return Response(upstream.status, upstream.getheaders(), body, upstream.reason)

    def _send(self, response):
        bodyless = self.command == "HEAD" or response.status < 200 or response.status in (204, 304)
        self.send_response_only(response.status, response.reason or None)
        for name, value in response.headers:
            lowered = name.lower()
            if lowered in HOP_BY_HOP or (lowered == "content-length" and self.command != "HEAD"):
                continue
            self.send_header(name, value)
        if not bodyless:
            self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if not bodyless:
            self.wfile.write(response.body)

    def _drop_connection(self):
        """Closes the client connection without a byte of answer, as a lost response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()
        raise ConnectionDropped()

    # --- requests

    def _serve(self):
        try:
            body = self._read_body()
        except ValueError:
            self.close_connection = True
            self._send(json_response(400, {"error": "malformed request body framing"}))
            return
        path = self.path
        if "://" in path.split("?")[0]:
            # Absolute-form target: keep the path and query only.
            parts = urllib.parse.urlsplit(path)
            path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        request = Request(self.command, path, self.headers.items(), body)
        try:
            if path == TOTALS_PATH and self.command == "GET":
                response = json_response(200, self.faults.totals())
            elif path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
                response = self._control(request)
            elif request.service and request.payload is not None:
                response = self._aws(request)
            else:
                response = self._forward(request)
        except ConnectionDropped:
            raise
        except Exception as error:  # never let a request take the proxy down
            log(f"fault proxy: {request.method} {path}: {type(error).__name__}: {error}")
            self.close_connection = True
            response = json_response(502, {"error": f"{type(error).__name__}: {error}"})
        self._send(response)

    def _control(self, request):
        name = urllib.parse.unquote(urllib.parse.urlsplit(request.path).path[len(CONTROL_PREFIX) + 1 :])
        if not name:
            if request.method == "GET":
                return json_response(200, self.faults.stats())
            return json_response(400, {"error": "missing scope: /__faults/<scope>"})
        if request.method == "PUT":
            try:
                rules = json.loads(request.body or b"{}")
            except ValueError:
                return json_response(400, {"error": "rules must be JSON"})
            error = validate_rules(rules)
            if error:
                return json_response(400, {"error": error})
            self.faults.put(name, rules)
            return json_response(200, {})
        if request.method == "DELETE":
            self.faults.delete(name)
            return json_response(200, {})
        if request.method == "GET":
            stats = self.faults.stats(name)
            if stats is None:
                return json_response(404, {"error": f"no scope {name!r}"})
            return json_response(200, stats)
        return json_response(405, {"error": "use PUT, GET or DELETE"})

    def _inject(self, scope, kind, request, count=1, detail=""):
        """Counts an injected fault in its scope's stats and logs it."""
        self.faults.count(scope, kind, count)
        where = f" scope={scope.name}" if scope else ""
        log(f"fault {kind}: {request.service} {request.op}{where}{detail}")

    def _aws(self, request):
        service, op, payload = request.service, request.op, request.payload
        scope = self.faults.match(resource_names(service, payload))
        kind = self.faults.draw(scope, service, op, payload) if scope else None
        delay_ms = scope.rules.get("slow_ops", {}).get(op) if scope else None
        if delay_ms:
            # Only this connection's thread waits: other requests pass meanwhile.
            self._inject(scope, "slow_ops", request, detail=f" {delay_ms} ms")
            time.sleep(delay_ms / 1000)

        if kind in S3_ERRORS or (kind == "fail_ops" and service == "s3"):
            self._inject(scope, kind, request)
            return s3_error(*S3_ERRORS.get(kind, S3_ERRORS["s3_500"]))
        if service == "kms" and kind in ("fail_ops", *KMS_ERRORS):
            self._inject(scope, kind, request)
            status, code, message = KMS_ERRORS.get(kind, KMS_ERRORS["internal_error"])
            return kms_error(status, code, message)
        if service == "scheduler" and kind in ("fail_ops", *SCHEDULER_ERRORS):
            self._inject(scope, kind, request)
            status, code, message = SCHEDULER_ERRORS.get(kind, SCHEDULER_ERRORS["internal_error"])
            return json_response(status, {"Message": message}, [("x-amzn-ErrorType", code)])
        if kind == "fail_ops" or kind == "sqs_500":
            self._inject(scope, kind, request)
            if service == "sqs":
                return sqs_error(*SQS_INTERNAL_ERROR)
            if service == "ssm":
                return ssm_error(*DYNAMODB_ERRORS["internal_error"])
            return dynamodb_error(*DYNAMODB_ERRORS["internal_error"])
        if kind in DYNAMODB_ERRORS:
            self._inject(scope, kind, request)
            if service == "ssm":
                # SSM answers the same codes, without DynamoDB's namespace.
                return ssm_error(*DYNAMODB_ERRORS[kind])
            return dynamodb_error(*DYNAMODB_ERRORS[kind])
        if kind == "transaction_throttled":
            self._inject(scope, kind, request)
            items = payload.get("TransactItems")
            reasons = self.faults.throttled_reasons(max(len(items) if isinstance(items, list) else 0, 1))
            return transaction_canceled(reasons)
        table = payload.get("TableName") if isinstance(payload.get("TableName"), str) else None
        if scope and op == "UpdateTimeToLive" and scope.is_creating(table):
            self._inject(scope, "table_creating_ms", request)
            return dynamodb_error(
                400,
                "ResourceInUseException",
                "Attempt to change a resource which is still in use: Table is being created",
            )

        needle = scope.rules.get("refuse_bodies_containing") if scope else None
        body = payload.get("MessageBody")
        if needle and op == "SendMessage" and isinstance(body, str) and needle in body:
            self._inject(scope, "refuse_bodies_containing", request)
            return sqs_error(400, "InvalidMessageContents", INVALID_MESSAGE_CONTENTS)

        rate = scope.rules.get("partition_write_units") if scope else None
        if rate and service == "dynamodb":
            costs = write_costs(op, payload)
            throttled = self.faults.spend_write_units(rate, costs)
            if throttled:
                self._inject(scope, "partition_write_units", request)
                if op == "TransactWriteItems":
                    return transaction_canceled(
                        [dict(PARTITION_THROTTLING_REASON) if i in throttled else {"Code": "None"}
                         for i in range(len(costs))]
                    )
                return dynamodb_error(
                    400,
                    "ProvisionedThroughputExceededException",
                    PARTITION_THROTTLING_REASON["Message"],
                    ThrottlingReasons=[
                        {"reason": "TableWriteKeyRangeThroughputExceeded",
                         "resource": f"arn:aws:dynamodb:us-east-1:123456789012:table/{table}"}
                    ],
                )

        signature = index_partition(payload) if is_index_query(service, op, payload) else None
        if kind == "stale_index":
            earlier = self.faults.recorded(scope, signature)
            if earlier is not None:
                self._inject(scope, kind, request)
                return earlier.replay()

        response = self._apply_rules(request, scope)

        if signature and scope and scope.rules.get("stale_index") and response.status == 200:
            # The latest answer, not the first: an index lags behind its table, but not forever.
            self.faults.record(scope, signature, response)
        if scope and service == "dynamodb" and response.status == 200:
            if op == "CreateTable" and table and scope.rules.get("table_creating_ms"):
                self.faults.start_creating(scope, table)
                response = self._as_creating(response, "TableDescription")
            elif op == "DescribeTable" and scope.is_creating(table):
                self._inject(scope, "table_creating_ms", request)
                response = self._as_creating(response, "Table")
        if kind == "gsi_stale" and response.status == 200:
            data = response.json()
            if isinstance(data, dict):
                self._inject(scope, kind, request)
                data.pop("LastEvaluatedKey", None)
                if "Items" in data or payload.get("Select") != "COUNT":
                    data["Items"] = []
                data.update(Count=0, ScannedCount=0)
                response = response.with_json(data)
        if kind == "lost_response":
            self._inject(scope, kind, request)
            self._drop_connection()
        return response

    @staticmethod
    def _as_creating(response, key):
        data = response.json()
        description = data.get(key) if isinstance(data, dict) else None
        if not isinstance(description, dict):
            return response
        description["TableStatus"] = "CREATING"
        for index in description.get("GlobalSecondaryIndexes") or ():
            if isinstance(index, dict):
                index["IndexStatus"] = "CREATING"
        return response.with_json(data)

    def _apply_rules(self, request, scope):
        """Forwards a request through the rules that answer all or part of it instead."""
        rules, op = scope.rules if scope else {}, request.op
        if request.service == "dynamodb":
            if "conflicts" in rules and (op == "TransactWriteItems" or op in SINGLE_ITEM_WRITES):
                return self._apply_conflicts(request, scope)
            if rules.get("unprocessed") and op in BATCH_OPS:
                return self._apply_unprocessed(request, scope)
        return self._apply(request, scope)

    def _apply_conflicts(self, request, scope):
        ids = written_items(request.op, request.payload)
        if request.op in SINGLE_ITEM_WRITES:
            # Only transactions hold items: a single-item write is refused, never waited for.
            if self.faults.held(ids):
                self._inject(scope, "conflict", request)
                return dynamodb_error(*DYNAMODB_ERRORS["transaction_conflict"])
            return self._apply(request, scope)
        # A retry with the transaction's own token is the same transaction: the token's replay
        # answers it, once the first attempt is answered.
        token = request.payload.get("ClientRequestToken")
        owner = token if isinstance(token, str) else uuid.uuid4().hex
        taken, conflicting = self.faults.hold(ids, owner)
        if conflicting:
            self._inject(scope, "conflict", request, detail=f" at actions {conflicting}")
            return transaction_canceled(
                [dict(CONFLICT_REASON) if i in conflicting else {"Code": "None"} for i in range(len(ids))]
            )
        try:
            # Only this connection's thread waits: other requests, and their conflicts, pass meanwhile.
            time.sleep(scope.rules["conflicts"]["hold_ms"] / 1000)
            return self._apply(request, scope)
        finally:
            self.faults.release(taken)

    def _apply_unprocessed(self, request, scope):
        op, payload = request.op, request.payload
        answer_key, limit = BATCH_OPS[op]
        requested = payload.get("RequestItems")
        entries = batch_entries(op, requested)
        flat = [(table, entry) for table, listed in (entries or {}).items() for entry in listed]
        # A malformed or oversized batch is forwarded whole, for the service's own error.
        left = self.faults.unprocessed(scope, len(flat)) if entries and len(flat) <= limit else set()
        if not left:
            return self._apply(request, scope)
        kept, unprocessed = {}, {}
        for i, (table, entry) in enumerate(flat):
            (unprocessed if i in left else kept).setdefault(table, []).append(entry)
        unprocessed = {t: with_entries(op, requested, t, listed) for t, listed in unprocessed.items()}
        self._inject(scope, "unprocessed", request, len(left), f", {len(left)} of {len(flat)} entries")
        if not kept:
            nothing = {"Responses": {t: [] for t in requested}} if op == "BatchGetItem" else {}
            return json_response(200, {**nothing, answer_key: unprocessed})
        forwarded = {t: with_entries(op, requested, t, listed) for t, listed in kept.items()}
        response = self._forward(request.with_payload({**payload, "RequestItems": forwarded}))
        data = response.json()
        if response.status != 200 or not isinstance(data, dict):
            return response
        data[answer_key] = merge_unprocessed(op, data.get(answer_key), unprocessed)
        if op == "BatchGetItem" and isinstance(data.setdefault("Responses", {}), dict):
            for table in requested:
                data["Responses"].setdefault(table, [])
        return response.with_json(data)

    def _apply(self, request, scope):
        """Forwards a request with the always-on rules: SQS characters, DynamoDB idempotency."""
        op, payload = request.op, request.payload
        if request.service == "sqs" and op == "SendMessage" and invalid_message(payload):
            self._inject(scope, "invalid_message_contents", request)
            return sqs_error(400, "InvalidMessageContents", INVALID_MESSAGE_CONTENTS)
        if request.service == "sqs" and op == "SendMessageBatch":
            return self._send_message_batch(request, scope)
        token = payload.get("ClientRequestToken")
        if request.service == "dynamodb" and op == "TransactWriteItems" and isinstance(token, str):
            response, kind = self.idempotency.run(token, payload, lambda: self._forward(request))
            if kind:
                self._inject(scope, kind, request)
            return response
        return self._forward(request)

    def _send_message_batch(self, request, scope):
        entries = request.payload.get("Entries")
        if not isinstance(entries, list):
            return self._forward(request)
        needle = scope.rules.get("refuse_bodies_containing") if scope else None

        def refused(entry):
            body = entry.get("MessageBody")
            return invalid_message(entry) or bool(needle and isinstance(body, str) and needle in body)

        good = [e for e in entries if not (isinstance(e, dict) and refused(e))]
        failed = [
            {
                "Id": e.get("Id"),
                "SenderFault": True,
                "Code": "InvalidMessageContents",
                "Message": INVALID_MESSAGE_CONTENTS,
            }
            for e in entries
            if isinstance(e, dict) and refused(e)
        ]
        if not failed:
            return self._forward(request)
        detail = f", {len(failed)} of {len(entries)} entries refused"
        self._inject(scope, "invalid_message_contents", request, len(failed), detail)
        if not good:
            return json_response(200, {"Successful": [], "Failed": failed})
        response = self._forward(request.with_payload({**request.payload, "Entries": good}))
        data = response.json()
        if response.status != 200 or not isinstance(data, dict):
            return response
        data["Failed"] = (data.get("Failed") or []) + failed
        data.setdefault("Successful", [])
        return response.with_json(data)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            log(f"fault proxy: connection from {client_address[0]}: {type(error).__name__}: {error}")


def loopback_upstream(url):
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError("upstream must be an http:// URL")
    host = parts.hostname
    if host != "localhost" and not ipaddress.ip_address(host).is_loopback:
        raise ValueError("upstream must be a loopback address")
    return host, parts.port or 80


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True, help="port to listen on, on 127.0.0.1")
    parser.add_argument("--upstream", required=True, help="moto server, e.g. http://127.0.0.1:5000")
    parser.add_argument("--seed", type=int, help="seed of the fault draws (default: random, logged)")
    args = parser.parse_args()
    try:
        upstream = loopback_upstream(args.upstream)
    except ValueError as error:
        parser.error(str(error))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    log(f"fault proxy: seed {seed}")

    Handler.upstream = upstream
    Handler.faults = Faults(seed)
    Handler.idempotency = Idempotency()
    server = Server(("127.0.0.1", args.port), Handler)
    print(f"fault proxy listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
