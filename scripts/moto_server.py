"""moto server with DynamoDB requests serialized.

DynamoDB runs every transaction and conditional write atomically; moto's threaded server
checks conditions and applies writes without holding a lock, so concurrent requests could
interleave in ways DynamoDB never allows. Serializing DynamoDB requests (SQS and the rest
stay concurrent) gives the emulator DynamoDB's guarantee, so the concurrency tests test the
product, not the emulator.

Transactions take up to 100 items, as DynamoDB allows (moto still enforces the former 25).
"""

import sys
import threading

import moto.dynamodb.responses
from moto.dynamodb.responses import DynamoHandler
from moto.server import main

moto.dynamodb.responses.TRANSACTION_MAX_ITEMS = 100

_lock = threading.Lock()
_call_action = DynamoHandler.call_action


def _serialized_call_action(self):
    with _lock:
        return _call_action(self)


DynamoHandler.call_action = _serialized_call_action

if __name__ == "__main__":
    sys.exit(main())
