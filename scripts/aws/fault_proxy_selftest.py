#!/usr/bin/env python3
"""Self-test of scripts/aws/fault_proxy.py.

Starts a moto server and the fault proxy in front of it on free loopback ports, then checks
every fault rule with boto3 clients that do not retry, so each injected fault surfaces.
Prints one line per check and closes with "N passed, N failed"; exits non-zero on a failure.

Run with the moto virtualenv's python:
    "$(scripts/lib/venv.sh moto)/bin/python" scripts/aws/fault_proxy_selftest.py
"""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid

import boto3
import botocore.exceptions
from botocore.config import Config
from botocore.exceptions import ClientError

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
HOST = "127.0.0.1"
INVALID_MESSAGE_CONTENTS = (
    "Invalid characters found. Valid unicode characters are "
    "#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"
)
CONNECTION_ERRORS = (botocore.exceptions.HTTPClientError, botocore.exceptions.ConnectionError)


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def http_request(port, method, path, body=None, headers=None):
    """One request to a loopback port; returns (status, parsed JSON or raw bytes)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
    finally:
        conn.close()
    try:
        return response.status, json.loads(data)
    except ValueError:
        return response.status, data


class Servers:
    """moto and the proxy as subprocesses, logging to temporary files."""

    def __init__(self):
        self.processes = []
        self.logs = tempfile.mkdtemp(prefix="fault-proxy-selftest-")

    def _spawn(self, name, args, stdout=None):
        with open(os.path.join(self.logs, f"{name}.log"), "wb") as log:
            process = subprocess.Popen(
                [sys.executable, *args], stdout=stdout or log, stderr=log, stdin=subprocess.DEVNULL
            )
        self.processes.append(process)
        return process

    def start(self):
        moto_port = free_port()
        self._spawn("moto", [os.path.join(SCRIPTS, "moto_server.py"), "-H", HOST, "-p", str(moto_port)])
        deadline = time.monotonic() + 30
        while True:
            try:
                if http_request(moto_port, "GET", "/moto-api/")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("moto did not start")
            time.sleep(0.1)

        self.port = free_port()
        proxy = self._spawn(
            "proxy",
            [
                os.path.join(SCRIPTS, "fault_proxy.py"),
                *("--port", str(self.port)),
                *("--upstream", f"http://{HOST}:{moto_port}"),
                *("--seed", "7"),
            ],
            stdout=subprocess.PIPE,
        )
        # Read the ready line on a thread, so a proxy that hangs cannot hang the test.
        ready = []
        reader = threading.Thread(target=lambda: ready.append(proxy.stdout.readline()), daemon=True)
        reader.start()
        reader.join(30)
        expected = f"fault proxy listening on http://{HOST}:{self.port}"
        if not ready or ready[0].decode().strip() != expected:
            raise RuntimeError(f"proxy did not start: {ready!r}")
        self.url = f"http://{HOST}:{self.port}"

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def tail(self, name, lines=20):
        try:
            with open(os.path.join(self.logs, f"{name}.log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


servers = Servers()
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def client(service):
    return boto3.client(
        service,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        endpoint_url=servers.url,
        # No retries, so every fault surfaces: botocore's max_attempts counts retries only,
        # total_max_attempts counts the first attempt too.
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def new_name():
    return f"test-{uuid.uuid4().hex}"


def set_rules(scope, rules):
    status, body = http_request(servers.port, "PUT", f"/__faults/{scope}", json.dumps(rules).encode())
    assert status == 200 and body == {}, f"PUT rules: {status} {body!r}"


def clear_rules(scope):
    status, body = http_request(servers.port, "DELETE", f"/__faults/{scope}")
    assert status == 200 and body == {}, f"DELETE rules: {status} {body!r}"


def stats(scope):
    status, body = http_request(servers.port, "GET", f"/__faults/{scope}")
    assert status == 200, f"GET stats: {status} {body!r}"
    return body


def create_table(ddb, name):
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "email", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_email",
                "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def create_queue(sqs, name):
    return sqs.create_queue(QueueName=name)["QueueUrl"]


def item(pk, **attrs):
    return {"pk": {"S": pk}, **{k: {"S": v} for k, v in attrs.items()}}


def expect_error(call, code, status):
    try:
        call()
    except ClientError as error:
        got = (error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"])
        assert got == (code, status), f"expected {code} {status}, got {got}"
        return error
    raise AssertionError(f"expected {code} {status}, the call succeeded")


def expect_connection_error(call):
    try:
        call()
    except CONNECTION_ERRORS:
        return
    raise AssertionError("expected a dropped connection, the call succeeded")


def receive_bodies(sqs, url):
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    return sorted(m["Body"] for m in messages)


def single_item_fault(rule, code, status, message=None):
    """The rule at probability 1 fails every DynamoDB call in scope, and none outside it."""
    ddb = client("dynamodb")
    scope, other = new_name(), new_name()
    create_table(ddb, scope)
    create_table(ddb, other)
    set_rules(scope, {rule: 1.0})
    error = expect_error(lambda: ddb.put_item(TableName=scope, Item=item("a")), code, status)
    if message:
        assert error.response["Error"]["Message"] == message, error.response["Error"]["Message"]
    expect_error(lambda: ddb.get_item(TableName=scope, Key=item("a")), code, status)
    expect_error(
        lambda: ddb.batch_get_item(RequestItems={scope: {"Keys": [item("a")]}}), code, status
    )
    ddb.put_item(TableName=other, Item=item("a"))
    assert "Item" in ddb.get_item(TableName=other, Key=item("a")), "other table affected"
    clear_rules(scope)


@check
def throttling():
    single_item_fault(
        "throttling", "ThrottlingException", 400, "Rate of requests exceeds the allowed throughput."
    )


@check
def provisioned_throughput():
    single_item_fault("provisioned_throughput", "ProvisionedThroughputExceededException", 400)


@check
def internal_error():
    single_item_fault("internal_error", "InternalServerError", 500)


@check
def transaction_conflict():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    ddb.put_item(TableName=scope, Item=item("a"))
    set_rules(scope, {"transaction_conflict": 1.0})
    code = "TransactionConflictException"
    error = expect_error(lambda: ddb.put_item(TableName=scope, Item=item("b")), code, 400)
    assert error.response["Error"]["Message"] == "Transaction is ongoing for the item"
    expect_error(
        lambda: ddb.update_item(
            TableName=scope,
            Key=item("a"),
            UpdateExpression="SET email = :e",
            ExpressionAttributeValues={":e": {"S": "x"}},
        ),
        code,
        400,
    )
    expect_error(lambda: ddb.delete_item(TableName=scope, Key=item("a")), code, 400)
    # Reads and transactions are not single-item writes.
    assert "Item" in ddb.get_item(TableName=scope, Key=item("a"))
    ddb.transact_write_items(TransactItems=[{"Put": {"TableName": scope, "Item": item("c")}}])
    clear_rules(scope)


@check
def transaction_throttled():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    set_rules(scope, {"transaction_throttled": 1.0})
    items = [{"Put": {"TableName": scope, "Item": item(pk)}} for pk in ("a", "b", "c")]
    for _ in range(5):
        error = expect_error(
            lambda: ddb.transact_write_items(TransactItems=items), "TransactionCanceledException", 400
        )
        reasons = error.response.get("CancellationReasons")
        assert isinstance(reasons, list) and len(reasons) == 3, f"reasons: {reasons!r}"
        codes = [r["Code"] for r in reasons]
        assert set(codes) <= {"ThrottlingError", "None"} and "ThrottlingError" in codes, codes
        for r in reasons:
            if r["Code"] == "ThrottlingError":
                assert "global secondary indexes" in r["Message"], r
        message = error.response["Error"]["Message"]
        expected = (
            "Transaction cancelled, please refer cancellation reasons for specific reasons "
            f"[{', '.join(codes)}]"
        )
        assert message == expected, message
    # Single-item writes go through; the cancelled transactions wrote nothing.
    ddb.put_item(TableName=scope, Item=item("d"))
    clear_rules(scope)
    assert ddb.scan(TableName=scope)["Count"] == 1, "a cancelled transaction wrote"


@check
def partition_write_units():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    set_rules(scope, {"partition_write_units": 2})
    # Two 1-unit writes to one partition key spend its second's units.
    for n in range(2):
        ddb.put_item(TableName=scope, Item=item("hot", sk=str(n)))
    # A transaction costs twice: cancelled at the hot action only, spending nothing.
    codes = transact(
        ddb,
        [{"Put": {"TableName": scope, "Item": item("cold", sk="t")}},
         {"Put": {"TableName": scope, "Item": item("hot", sk="t")}}],
    )
    assert codes == ["None", "ThrottlingError"], codes
    error = expect_error(
        lambda: ddb.put_item(TableName=scope, Item=item("hot", sk="2")),
        "ProvisionedThroughputExceededException",
        400,
    )
    reasons = error.response.get("ThrottlingReasons")
    assert reasons and reasons[0]["reason"] == "TableWriteKeyRangeThroughputExceeded", reasons
    # Another partition key has its own units, untouched by the cancelled transaction.
    assert transact(ddb, [{"Put": {"TableName": scope, "Item": item("cold", sk="t")}}]) is None
    # A second later the hot key has its units again.
    time.sleep(1.05)
    ddb.put_item(TableName=scope, Item=item("hot", sk="3"))
    assert stats(scope)["injected"] == {"partition_write_units": 2}, stats(scope)
    clear_rules(scope)
    assert ddb.scan(TableName=scope)["Count"] == 2  # the table keys on pk alone


@check
def lost_response_dynamodb():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    set_rules(scope, {"lost_response": 1.0})
    expect_connection_error(lambda: ddb.put_item(TableName=scope, Item=item("a")))
    expect_connection_error(
        lambda: ddb.transact_write_items(TransactItems=[{"Put": {"TableName": scope, "Item": item("b")}}])
    )
    expect_connection_error(
        lambda: ddb.batch_write_item(RequestItems={scope: [{"PutRequest": {"Item": item("c")}}]})
    )
    # Reads are answered.
    ddb.get_item(TableName=scope, Key=item("a"))
    clear_rules(scope)
    for pk in ("a", "b", "c"):
        assert "Item" in ddb.get_item(TableName=scope, Key=item(pk)), f"write {pk} was not applied"


@check
def lost_response_sqs():
    sqs = client("sqs")
    scope = new_name()
    url = create_queue(sqs, f"{scope}-delivery")
    set_rules(scope, {"lost_response": 1.0})
    expect_connection_error(lambda: sqs.send_message(QueueUrl=url, MessageBody="lost"))
    clear_rules(scope)
    assert receive_bodies(sqs, url) == ["lost"], "message was not sent"


@check
def sqs_500():
    sqs = client("sqs")
    scope = new_name()
    url = create_queue(sqs, f"{scope}-delivery")
    other = create_queue(sqs, f"{new_name()}-delivery")
    set_rules(scope, {"sqs_500": 1.0})
    error = expect_error(lambda: sqs.send_message(QueueUrl=url, MessageBody="x"), "InternalError", 500)
    header = error.response["ResponseMetadata"]["HTTPHeaders"].get("x-amzn-query-error")
    assert header == "InternalError;Receiver", header
    expect_error(lambda: sqs.receive_message(QueueUrl=url), "InternalError", 500)
    sqs.send_message(QueueUrl=other, MessageBody="x")
    clear_rules(scope)
    assert receive_bodies(sqs, url) == [], "a refused message was sent"


def s3_client():
    # Path-style, as the product's S3 client addresses an emulator; no retries, as client().
    return boto3.client(
        "s3",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        endpoint_url=servers.url,
        config=Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            s3={"addressing_style": "path"},
            signature_version="s3v4",
        ),
    )


@check
def s3_faults():
    s3 = s3_client()
    scope = new_name()
    other = new_name()
    for bucket in (scope, other):
        s3.create_bucket(Bucket=bucket)
    set_rules(scope, {"s3_500": 1.0})
    expect_error(lambda: s3.put_object(Bucket=scope, Key="recordings/a.mp4", Body=b"x"), "InternalError", 500)
    # Another bucket is out of the scope.
    s3.put_object(Bucket=other, Key="recordings/a.mp4", Body=b"x")
    set_rules(scope, {"s3_slow_down": 1.0})
    expect_error(lambda: s3.put_object(Bucket=scope, Key="recordings/a.mp4", Body=b"x"), "SlowDown", 503)
    set_rules(scope, {"fail_ops": ["PutObject"]})
    expect_error(lambda: s3.put_object(Bucket=scope, Key="recordings/a.mp4", Body=b"x"), "InternalError", 500)
    # A write whose answer is lost was applied.
    set_rules(scope, {"lost_response": 1.0})
    expect_connection_error(lambda: s3.put_object(Bucket=scope, Key="recordings/b.mp4", Body=b"kept"))
    counted = stats(scope)["injected"]
    assert counted == {"lost_response": 1}, counted
    clear_rules(scope)
    assert s3.get_object(Bucket=scope, Key="recordings/b.mp4")["Body"].read() == b"kept"
    # A presigned GET is S3's too (its scope is in the query), and passes when no rule applies.
    url = s3.generate_presigned_url("get_object", Params={"Bucket": scope, "Key": "recordings/b.mp4"}, ExpiresIn=60)
    path = url.split(servers.url, 1)[1]
    set_rules(scope, {"fail_ops": ["GetObject"]})
    status, _ = http_request(servers.port, "GET", path)
    assert status == 500, status
    clear_rules(scope)
    status, _ = http_request(servers.port, "GET", path)
    assert status == 200, status


@check
def ssm_reads():
    ssm = client("ssm")
    name = f"/{new_name()}/secret"
    other = f"/{new_name()}/secret"
    for parameter in (name, other):
        ssm.put_parameter(Name=parameter, Value="s3cret", Type="SecureString")
    set_rules(name, {"throttling": 1.0})
    expect_error(lambda: ssm.get_parameter(Name=name, WithDecryption=True), "ThrottlingException", 400)
    assert ssm.get_parameter(Name=other, WithDecryption=True)["Parameter"]["Value"] == "s3cret"
    set_rules(name, {"fail_ops": ["GetParameter"]})
    expect_error(lambda: ssm.get_parameter(Name=name, WithDecryption=True), "InternalServerError", 500)
    assert stats(name)["injected"] == {"fail_ops": 1}, stats(name)
    # A slow read is answered, after the wait, while other requests pass meanwhile.
    set_rules(name, {"slow_ops": {"GetParameter": 1500}})
    slow = {}
    reader = threading.Thread(
        target=lambda: slow.update(value=client("ssm").get_parameter(Name=name, WithDecryption=True))
    )
    started = time.monotonic()
    reader.start()
    time.sleep(0.2)
    assert ssm.get_parameter(Name=other, WithDecryption=True)["Parameter"]["Value"] == "s3cret"
    assert reader.is_alive(), "the slow read was answered before its wait"
    reader.join()
    assert time.monotonic() - started >= 1.5
    assert slow["value"]["Parameter"]["Value"] == "s3cret"
    assert stats(name)["injected"] == {"slow_ops": 1}, stats(name)
    clear_rules(name)
    assert ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"] == "s3cret"


@check
def kms_faults():
    kms = client("kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    table, other = new_name(), new_name()

    def data_key(name):
        return kms.generate_data_key(KeyId=key, KeySpec="AES_256", EncryptionContext={"table": name})

    wrapped = data_key(table)["CiphertextBlob"]

    def decrypt():
        return kms.decrypt(CiphertextBlob=wrapped, KeyId=key, EncryptionContext={"table": table})

    set_rules(table, {"denied_ops": ["Decrypt"]})
    expect_error(decrypt, "AccessDeniedException", 400)
    assert data_key(table)["Plaintext"], "only the denied operation is refused"
    set_rules(table, {"fail_ops": ["GenerateDataKey"]})
    expect_error(lambda: data_key(table), "KMSInternalException", 500)
    assert data_key(other)["Plaintext"], "another table's requests pass"
    set_rules(table, {"throttling": 1.0})
    expect_error(decrypt, "ThrottlingException", 400)
    assert stats(table)["injected"] == {"throttling": 1}, stats(table)
    clear_rules(table)
    assert len(decrypt()["Plaintext"]) == 32


@check
def totals_outlive_their_scopes():
    before = http_request(servers.port, "GET", "/__totals")[1]
    ddb = client("dynamodb")
    name = new_name()
    create_table(ddb, name)
    set_rules(name, {"throttling": 1.0})
    expect_error(lambda: ddb.get_item(TableName=name, Key={"pk": {"S": "a"}}), "ThrottlingException", 400)
    clear_rules(name)
    after = http_request(servers.port, "GET", "/__totals")[1]
    assert after["injected"].get("throttling", 0) == before["injected"].get("throttling", 0) + 1, after
    assert after["requests"] > before["requests"], after


@check
def refuse_bodies_containing():
    sqs = client("sqs")
    name = new_name()
    url = create_queue(sqs, name)
    set_rules(name, {"refuse_bodies_containing": "poison-pill"})
    expect_error(lambda: sqs.send_message(QueueUrl=url, MessageBody='{"p": "a poison-pill"}'), "InvalidMessageContents", 400)
    sqs.send_message(QueueUrl=url, MessageBody='{"p": "fine"}')
    assert receive_bodies(sqs, url) == ['{"p": "fine"}']
    assert stats(name)["injected"].get("refuse_bodies_containing") == 1, stats(name)
    # In a batch, the entry is failed and the others are sent.
    answer = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "bad", "MessageBody": '{"p": "a poison-pill"}'},
            {"Id": "good", "MessageBody": '{"p": "also fine"}'},
        ],
    )
    assert [f["Id"] for f in answer["Failed"]] == ["bad"], answer
    assert answer["Failed"][0]["Code"] == "InvalidMessageContents", answer
    assert [s["Id"] for s in answer["Successful"]] == ["good"], answer
    assert receive_bodies(sqs, url) == ['{"p": "also fine"}']


@check
def gsi_stale():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    ddb.put_item(TableName=scope, Item=item("a", email="a@example.com"))
    set_rules(scope, {"gsi_stale": 1.0})
    by_email = ddb.query(
        TableName=scope,
        IndexName="by_email",
        KeyConditionExpression="email = :e",
        ExpressionAttributeValues={":e": {"S": "a@example.com"}},
    )
    assert by_email["Items"] == [] and by_email["Count"] == 0 and by_email["ScannedCount"] == 0, by_email
    assert "LastEvaluatedKey" not in by_email
    assert ddb.scan(TableName=scope, IndexName="by_email")["Count"] == 0
    base = ddb.query(
        TableName=scope,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "a"}},
    )
    assert base["Count"] == 1, base
    assert ddb.scan(TableName=scope)["Count"] == 1
    clear_rules(scope)


@check
def stale_index():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    ddb.put_item(TableName=scope, Item=item("a", email="a@example.com"))
    set_rules(scope, {"stale_index": 1.0})

    def by_email(email):
        answer = ddb.query(
            TableName=scope,
            IndexName="by_email",
            KeyConditionExpression="email = :e",
            ExpressionAttributeValues={":e": {"S": email}},
        )
        return sorted(i["pk"]["S"] for i in answer["Items"])

    # Nothing recorded yet: forwarded, and recorded.
    assert by_email("a@example.com") == ["a"]
    ddb.put_item(TableName=scope, Item=item("b", email="a@example.com"))
    ddb.put_item(TableName=scope, Item=item("c", email="c@example.com"))
    # The earlier answer, without the new item; another request is forwarded.
    assert by_email("a@example.com") == ["a"], "not the recorded answer"
    assert by_email("c@example.com") == ["c"]
    assert stats(scope)["injected"] == {"stale_index": 1}, stats(scope)
    # The base table is never stale.
    base = ddb.query(
        TableName=scope, KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": "b"}}
    )
    assert base["Count"] == 1, base
    set_rules(scope, {"stale_index": 0})
    assert by_email("a@example.com") == ["a", "b"]
    clear_rules(scope)


def batch_write(ddb, scope, pks):
    requests = [{"PutRequest": {"Item": item(pk, email=f"{pk}@example.com")}} for pk in pks]
    return ddb.batch_write_item(RequestItems={scope: requests})


def stored_pks(ddb, table):
    return sorted(i["pk"]["S"] for i in ddb.scan(TableName=table)["Items"])


@check
def unprocessed_items():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    set_rules(scope, {"unprocessed": 1.0})
    answer = batch_write(ddb, scope, ["a", "b"])
    assert answer["UnprocessedItems"] == {
        scope: [{"PutRequest": {"Item": item(pk, email=f"{pk}@example.com")}} for pk in ("a", "b")]
    }, answer
    assert stored_pks(ddb, scope) == [], "an unprocessed write was applied"

    set_rules(scope, {"unprocessed": 0.5})
    written, left_over, partial = set(), 0, False
    for n in range(4):
        pks = [f"{n}-{i}" for i in range(10)]
        answer = batch_write(ddb, scope, pks)
        unprocessed = answer["UnprocessedItems"].get(scope, [])
        assert set(answer["UnprocessedItems"]) <= {scope}, answer
        left = [r["PutRequest"]["Item"]["pk"]["S"] for r in unprocessed]
        assert set(left) <= set(pks) and len(set(left)) == len(left), left
        written |= set(pks) - set(left)
        left_over += len(left)
        partial |= 0 < len(left) < len(pks)
        # What is left over is what was not applied, and the rest was.
        assert stored_pks(ddb, scope) == sorted(written), f"round {n}: {left} left over"
    assert partial, "no batch was processed in part"
    assert stats(scope)["injected"] == {"unprocessed": left_over}, stats(scope)
    clear_rules(scope)


@check
def unprocessed_keys():
    ddb = client("dynamodb")
    scope = new_name()
    tables = [scope, f"{scope}-other"]
    for table in tables:
        create_table(ddb, table)
        batch_write(ddb, table, [str(i) for i in range(8)])
    options = {
        "ProjectionExpression": "#k, email",
        "ExpressionAttributeNames": {"#k": "pk"},
        "ConsistentRead": True,
    }
    requested = {t: {"Keys": [{"pk": {"S": str(i)}} for i in range(8)], **options} for t in tables}
    set_rules(scope, {"unprocessed": 1.0})
    answer = ddb.batch_get_item(RequestItems=requested)
    assert answer["Responses"] == {t: [] for t in tables}, answer["Responses"]
    assert answer["UnprocessedKeys"] == requested, answer["UnprocessedKeys"]

    set_rules(scope, {"unprocessed": 0.5})
    partial = False
    for _ in range(4):
        answer = ddb.batch_get_item(RequestItems=requested)
        for table in tables:
            got = [i["pk"]["S"] for i in answer["Responses"].get(table, [])]
            entry = answer["UnprocessedKeys"].get(table)
            left = [k["pk"]["S"] for k in entry["Keys"]] if entry else []
            if entry:
                assert {k: v for k, v in entry.items() if k != "Keys"} == options, entry
            assert sorted(got + left) == sorted(str(i) for i in range(8)), (got, left)
            partial |= bool(got) and bool(left)
            # The processed keys are answered with their items, projected as requested.
            for returned in answer["Responses"].get(table, []):
                assert returned == item(returned["pk"]["S"], email=f"{returned['pk']['S']}@example.com")
    assert partial, "no batch was processed in part"
    clear_rules(scope)


def transact(ddb, actions, **extra):
    """Runs a transaction; returns the cancellation reasons' codes, or None when it passed."""
    try:
        ddb.transact_write_items(TransactItems=actions, **extra)
    except ClientError as error:
        assert error.response["Error"]["Code"] == "TransactionCanceledException", error.response
        return [r["Code"] for r in error.response["CancellationReasons"]]
    return None


def in_thread(fn):
    result = {}
    thread = threading.Thread(target=lambda: result.update(value=fn()))
    thread.start()
    return thread, result


@check
def conflicts_during_a_hold():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    ddb.put_item(TableName=scope, Item=item("a"))
    set_rules(scope, {"conflicts": {"hold_ms": 1500}})
    holder, held = in_thread(
        lambda: transact(client("dynamodb"), [{"Put": {"TableName": scope, "Item": item("a", email="held")}}])
    )
    time.sleep(0.3)
    # A transaction on the held item is cancelled at that action only, without being applied.
    update_a = {
        "Update": {
            "TableName": scope,
            "Key": {"pk": {"S": "a"}},
            "UpdateExpression": "SET email = :e",
            "ExpressionAttributeValues": {":e": {"S": "cancelled"}},
        }
    }
    error = expect_error(
        lambda: ddb.transact_write_items(
            TransactItems=[{"Put": {"TableName": scope, "Item": item("b")}}, update_a]
        ),
        "TransactionCanceledException",
        400,
    )
    assert error.response["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
    ], error.response["CancellationReasons"]
    message = error.response["Error"]["Message"]
    expected = (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        "[None, TransactionConflict]"
    )
    assert message == expected, message
    # A single-item write of the held item conflicts; one of another item passes.
    error = expect_error(
        lambda: ddb.delete_item(TableName=scope, Key={"pk": {"S": "a"}}), "TransactionConflictException", 400
    )
    assert error.response["Error"]["Message"] == "Transaction is ongoing for the item"
    ddb.put_item(TableName=scope, Item=item("c"))
    assert holder.is_alive(), "the holding transaction was answered before its hold"
    # A transaction on other items, started during the hold, passes (after its own hold).
    assert transact(ddb, [{"Put": {"TableName": scope, "Item": item("d")}}]) is None
    holder.join()
    assert held["value"] is None, f"the holding transaction was cancelled: {held['value']}"
    assert ddb.get_item(TableName=scope, Key=item("a"))["Item"] == item("a", email="held")
    assert stored_pks(ddb, scope) == ["a", "c", "d"], "a cancelled transaction wrote"
    assert stats(scope)["injected"] == {"conflict": 2}, stats(scope)
    # Released after its answer.
    ddb.delete_item(TableName=scope, Key={"pk": {"S": "a"}})
    clear_rules(scope)


def concurrent_transactions(actions_by_client, **extra):
    """Starts the transactions together; returns each one's cancellation codes (None: passed)."""
    clients = [client("dynamodb") for _ in actions_by_client]
    start = threading.Barrier(len(clients))
    results = [None] * len(clients)

    def run(i):
        start.wait()
        results[i] = transact(clients[i], actions_by_client[i], **extra)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@check
def conflicts_between_concurrent_transactions():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    set_rules(scope, {"conflicts": {"hold_ms": 400}})
    cancelled = 0
    for n in range(5):
        # Both touch item "shared" as their second action: exactly one is cancelled, there.
        results = concurrent_transactions(
            [
                [
                    {"Put": {"TableName": scope, "Item": item(f"{n}-{who}")}},
                    {"Put": {"TableName": scope, "Item": item("shared", email=f"{n}-{who}")}},
                ]
                for who in ("x", "y")
            ]
        )
        assert results.count(None) == 1, f"round {n}: {results}"
        assert ["None", "TransactionConflict"] in results, results
        cancelled += 1
    assert stats(scope)["injected"] == {"conflict": cancelled}, stats(scope)
    # Transactions on different items both pass, holding at the same time, not one after the other.
    set_rules(scope, {"conflicts": {"hold_ms": 1000}})
    started = time.monotonic()
    results = concurrent_transactions(
        [[{"Put": {"TableName": scope, "Item": item(f"apart-{who}")}}] for who in ("x", "y")]
    )
    assert results == [None, None], results
    assert time.monotonic() - started < 1.8, "the holds of unrelated transactions were serialized"
    # Attempts with one token are one transaction: the second is answered by the first's replay.
    once = {
        "Put": {"TableName": scope, "Item": item("once"), "ConditionExpression": "attribute_not_exists(pk)"}
    }
    results = concurrent_transactions([[once], [once]], ClientRequestToken=uuid.uuid4().hex)
    assert results == [None, None], results
    assert stats(scope)["injected"] == {"idempotent_replay": 1}, stats(scope)
    clear_rules(scope)
    assert len(stored_pks(ddb, scope)) == 5 + 1 + 2 + 1, stored_pks(ddb, scope)


@check
def table_creating():
    ddb = client("dynamodb")
    scope = new_name()
    set_rules(scope, {"table_creating_ms": 1500})
    created = time.monotonic()
    create_table(ddb, scope)
    assert ddb.describe_table(TableName=scope)["Table"]["TableStatus"] == "CREATING"
    error = expect_error(
        lambda: ddb.update_time_to_live(
            TableName=scope, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"}
        ),
        "ResourceInUseException",
        400,
    )
    assert "Table is being created" in error.response["Error"]["Message"]
    time.sleep(max(0, created + 1.6 - time.monotonic()))
    assert ddb.describe_table(TableName=scope)["Table"]["TableStatus"] == "ACTIVE"
    ddb.update_time_to_live(
        TableName=scope, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"}
    )
    assert stats(scope)["injected"].get("table_creating_ms") == 2, stats(scope)
    clear_rules(scope)


@check
def fail_ops():
    ddb, sqs = client("dynamodb"), client("sqs")
    scope = new_name()
    create_table(ddb, scope)
    url = create_queue(sqs, f"{scope}-delivery")
    set_rules(scope, {"fail_ops": ["TransactWriteItems", "SendMessage"]})
    expect_error(
        lambda: ddb.transact_write_items(TransactItems=[{"Put": {"TableName": scope, "Item": item("a")}}]),
        "InternalServerError",
        500,
    )
    ddb.put_item(TableName=scope, Item=item("b"))
    expect_error(lambda: sqs.send_message(QueueUrl=url, MessageBody="x"), "InternalError", 500)
    sqs.receive_message(QueueUrl=url)
    assert stats(scope)["injected"] == {"fail_ops": 2}, stats(scope)
    clear_rules(scope)
    assert "Item" not in ddb.get_item(TableName=scope, Key=item("a")), "failed transaction wrote"


@check
def sqs_invalid_characters_send_message():
    sqs = client("sqs")
    scope = new_name()
    url = create_queue(sqs, f"{scope}-delivery")
    set_rules(scope, {})
    refused = ["\uffff", "Glow \uffff Serum", "\x01", "a\x0bb", "\ufffe", "lone \ud800 surrogate"]
    for body in refused:
        error = expect_error(
            lambda: sqs.send_message(QueueUrl=url, MessageBody=body), "InvalidMessageContents", 400
        )
        assert error.response["Error"]["Message"] == INVALID_MESSAGE_CONTENTS
    expect_error(
        lambda: sqs.send_message(
            QueueUrl=url,
            MessageBody="ok",
            MessageAttributes={"kind": {"DataType": "String", "StringValue": "bad \x00"}},
        ),
        "InvalidMessageContents",
        400,
    )
    # The escape sequence as plain ASCII text, and characters inside the valid range.
    accepted = ["Glow \\uffff Serum", "tab\tline\r\n \ue000 \ufffd \U0001f600 \ud7ff"]
    for body in accepted:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    assert receive_bodies(sqs, url) == sorted(accepted), "accepted bodies changed"
    assert stats(scope)["injected"] == {"invalid_message_contents": len(refused) + 1}, stats(scope)
    clear_rules(scope)


@check
def sqs_invalid_characters_send_message_batch():
    sqs = client("sqs")
    url = create_queue(sqs, f"{new_name()}-delivery")
    answer = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": "good", "MessageBody": "fine"}, {"Id": "bad", "MessageBody": "not \uffff fine"}],
    )
    assert [s["Id"] for s in answer.get("Successful", [])] == ["good"], answer
    assert answer.get("Failed") == [
        {
            "Id": "bad",
            "SenderFault": True,
            "Code": "InvalidMessageContents",
            "Message": INVALID_MESSAGE_CONTENTS,
        }
    ], answer
    answer = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "only", "MessageBody": "\x02"}])
    assert not answer.get("Successful") and [f["Id"] for f in answer["Failed"]] == ["only"], answer
    assert receive_bodies(sqs, url) == ["fine"], "the queue holds more than the good entry"


@check
def idempotent_replay():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    set_rules(scope, {})
    token = uuid.uuid4().hex
    put = [{"Put": {"TableName": scope, "Item": item("a")}}]
    ddb.transact_write_items(TransactItems=put, ClientRequestToken=token)
    ddb.delete_item(TableName=scope, Key=item("a"))
    ddb.transact_write_items(TransactItems=put, ClientRequestToken=token)
    assert "Item" not in ddb.get_item(TableName=scope, Key=item("a")), "replay applied the write again"
    other = [{"Put": {"TableName": scope, "Item": item("b")}}]
    expect_error(
        lambda: ddb.transact_write_items(TransactItems=other, ClientRequestToken=token),
        "IdempotentParameterMismatchException",
        400,
    )
    assert "Item" not in ddb.get_item(TableName=scope, Key=item("b")), "mismatch was applied"
    assert stats(scope)["injected"] == {"idempotent_replay": 1, "idempotent_mismatch": 1}, stats(scope)
    clear_rules(scope)


@check
def idempotent_concurrent():
    # A conditional put that can succeed only once: both concurrent requests with one token
    # succeed only when the second is answered from the first instead of being forwarded.
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    token = uuid.uuid4().hex
    put = [
        {
            "Put": {
                "TableName": scope,
                "Item": item("a"),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
    ]
    errors = []
    clients = [client("dynamodb") for _ in range(6)]
    start = threading.Barrier(len(clients))

    def write(ddb):
        start.wait()
        try:
            ddb.transact_write_items(TransactItems=put, ClientRequestToken=token)
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=write, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, f"{len(errors)} of {len(clients)} same-token writes failed, first: {errors[0]}"


@check
def stats_endpoint():
    ddb = client("dynamodb")
    scope, other = new_name(), new_name()
    create_table(ddb, scope)
    create_table(ddb, other)
    set_rules(scope, {"throttling": 1.0})
    for _ in range(3):
        expect_error(lambda: ddb.get_item(TableName=scope, Key=item("a")), "ThrottlingException", 400)
    ddb.get_item(TableName=other, Key=item("a"))
    assert stats(scope) == {"requests": 3, "injected": {"throttling": 3}}, stats(scope)
    status, everything = http_request(servers.port, "GET", "/__faults")
    assert status == 200 and everything.get(scope) == stats(scope), everything
    # Replacing the rules resets the stats; a request matching no fault still counts.
    set_rules(scope, {"internal_error": 0})
    ddb.get_item(TableName=scope, Key=item("a"))
    assert stats(scope) == {"requests": 1, "injected": {}}, stats(scope)
    clear_rules(scope)
    assert http_request(servers.port, "GET", f"/__faults/{scope}")[0] == 404
    for bad in ({"throttle": 1}, {"throttling": 2}, {"fail_ops": "PutItem"}, {"table_creating_ms": -1},
                {"slow_ops": ["GetParameter"]}, {"slow_ops": {"GetParameter": -1}}, [],
                {"unprocessed": 1.5}, {"unprocessed": True}, {"stale_index": "yes"}, {"conflicts": 100},
                {"conflicts": {}}, {"conflicts": {"hold_ms": -1}}, {"conflicts": {"hold_ms": 0.5}},
                {"conflicts": {"hold_ms": 100, "extra": 1}}, {"conflicts": {"hold_ms": 60_001}}):
        status, _ = http_request(servers.port, "PUT", f"/__faults/{scope}", json.dumps(bad).encode())
        assert status == 400, f"rules {bad!r} accepted"
    status, _ = http_request(servers.port, "PUT", f"/__faults/{scope}", b"{not json")
    assert status == 400, "malformed rules accepted"


@check
def first_registered_scope_wins():
    ddb = client("dynamodb")
    table = new_name()
    create_table(ddb, table)
    prefix = table[:24]
    set_rules(prefix, {"internal_error": 1.0})
    set_rules(table, {"throttling": 1.0})
    expect_error(lambda: ddb.get_item(TableName=table, Key=item("a")), "InternalServerError", 500)
    clear_rules(prefix)
    expect_error(lambda: ddb.get_item(TableName=table, Key=item("a")), "ThrottlingException", 400)
    clear_rules(table)


@check
def probability():
    ddb = client("dynamodb")
    scope = new_name()
    create_table(ddb, scope)
    set_rules(scope, {"throttling": 0.5})
    throttled = 0
    for _ in range(40):
        try:
            ddb.get_item(TableName=scope, Key=item("a"))
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ThrottlingException"
            throttled += 1
    assert 5 <= throttled <= 35, f"{throttled} of 40 throttled at p=0.5"
    assert stats(scope)["injected"] == {"throttling": throttled}, stats(scope)
    clear_rules(scope)


@check
def passthrough():
    status, _ = http_request(servers.port, "GET", "/moto-api/")
    assert status == 200, f"/moto-api/ through the proxy: {status}"
    scheduler = client("scheduler")
    group = new_name()
    scheduler.create_schedule_group(Name=group)
    names = [g["Name"] for g in scheduler.list_schedule_groups()["ScheduleGroups"]]
    assert group in names, names


@check
def keep_alive():
    conn = http.client.HTTPConnection(HOST, servers.port, timeout=30)
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20240101/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=host, Signature=0",
    }
    try:
        sockets = []
        for _ in range(3):
            conn.request("POST", "/", body=b"{}", headers=headers)
            response = conn.getresponse()
            body = json.loads(response.read())
            assert response.status == 200 and "TableNames" in body, (response.status, body)
            assert response.getheader("Transfer-Encoding") is None
            sockets.append(conn.sock)
        assert sockets[0] is not None and all(s is sockets[0] for s in sockets), "connection not kept alive"
    finally:
        conn.close()


def main():
    for var in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        os.environ.pop(var, None)
    passed = failed = 0
    try:
        servers.start()
        for fn in CHECKS:
            try:
                fn()
            except Exception as error:
                failed += 1
                reason = str(error) or type(error).__name__
                print(f"FAIL {fn.__name__}: {reason}", flush=True)
                if not isinstance(error, AssertionError):
                    traceback.print_exc(file=sys.stdout)
            else:
                passed += 1
                print(f"ok  {fn.__name__}", flush=True)
    except Exception as error:
        failed += 1
        print(f"FAIL setup: {error}", flush=True)
    finally:
        servers.stop()
    if failed:
        for name in ("proxy", "moto"):
            print(f"--- last lines of the {name} log\n{servers.tail(name)}", end="")
        print(f"--- logs kept in {servers.logs}")
    else:
        shutil.rmtree(servers.logs, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
