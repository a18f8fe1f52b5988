"""The triggers Lambda runs for the background functions, for `sam local`.

    python sam_local_triggers.py TEMPLATE ENV_VARS LAMBDA_ENDPOINT

`sam local start-api` runs only the functions behind routes: on AWS the others are invoked by
Lambda's event source mappings (SQS queues, the table's stream) and by Scheduler, which SAM
does not emulate. This runs them as Lambda would, read from the template itself (each
function's `Events`), against the emulators the environment names (`AWS_ENDPOINT_URL`), and
invokes the functions through `sam local start-lambda` at LAMBDA_ENDPOINT:

- SQS: messages received in batches of the mapping's `BatchSize`, handed over in Lambda's
  event shape; with `ReportBatchItemFailures` only the items the function did not name as
  failed are deleted, without it all of them once the function succeeded. What is not deleted
  comes back after the queue's visibility timeout, as on AWS.
- DynamoDB streams: each shard read from the mapping's `StartingPosition`, the records that
  match its `FilterCriteria` handed over in batches of its `BatchSize`; a failed batch is
  retried up to its `MaximumRetryAttempts`, then skipped (the sweeps cover what it held).
- `ScheduleV2` events with `rate(...)`: the function invoked with the schedule's `Input` at that
  rate.

Queue URLs and the table name come from ENV_VARS (the `--env-vars` file given to SAM): a queue
is the variable of the template's globals that refers to it. One line per invocation on
stdout; Ctrl-C (or SIGTERM) stops it.
"""

import base64
import datetime
import json
import re
import signal
import sys
import threading
import time

import boto3
import botocore.config
from samcli.yamlhelper import yaml_parse

stopping = threading.Event()


def log(text):
    print(f"{datetime.datetime.now().strftime('%H:%M:%S.%f')[:-3]} {text}", flush=True)


class Invoker:
    """One function's invocations through `sam local start-lambda`, one at a time."""

    def __init__(self, endpoint, function):
        self.function = function
        self.lock = threading.Lock()
        self.client = boto3.client(
            "lambda",
            endpoint_url=endpoint,
            config=botocore.config.Config(
                read_timeout=900, connect_timeout=5, retries={"max_attempts": 0}
            ),
        )

    def __call__(self, event, what):
        """The function's answer as JSON, or None when it failed."""
        with self.lock:
            started = time.monotonic()
            try:
                answer = self.client.invoke(
                    FunctionName=self.function, Payload=json.dumps(event).encode()
                )
                payload = answer["Payload"].read().decode()
            except Exception as error:  # a container that died, a refused connection
                log(f"{self.function} {what}: invocation failed: {error}")
                return None
            took = (time.monotonic() - started) * 1000
            if "FunctionError" in answer:
                log(f"{self.function} {what}: function error ({took:.0f} ms): {payload[:300]}")
                return None
            log(f"{self.function} {what}: {payload[:200]} ({took:.0f} ms)")
            try:
                return json.loads(payload) if payload else {}
            except ValueError:
                return {}


def matches(pattern, value):
    """Lambda's event filtering (the subset the template uses): each key of the pattern must
    match; a list matches when one of its entries does (a literal, `prefix`, `exists`)."""
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(
            matches(sub, value.get(key, _MISSING)) for key, sub in pattern.items()
        )
    for entry in pattern:
        if isinstance(entry, dict):
            if "exists" in entry and (value is not _MISSING) == entry["exists"]:
                return True
            if "prefix" in entry and isinstance(value, str) and value.startswith(entry["prefix"]):
                return True
        elif value is not _MISSING and value == entry:
            return True
    return False


_MISSING = object()


def sqs_mapping(invoke, url, batch_size, reports_failures):
    sqs = boto3.client("sqs")
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    region = sqs.meta.region_name
    while not stopping.is_set():
        try:
            received = sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=min(batch_size, 10),
                WaitTimeSeconds=1,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
        except Exception as error:
            log(f"{url}: receive failed: {error}")
            time.sleep(1)
            continue
        if not received:
            continue
        records = [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {
                    name: {
                        "stringValue": a.get("StringValue"),
                        "binaryValue": a.get("BinaryValue")
                        and base64.b64encode(a["BinaryValue"]).decode(),
                        "stringListValues": [],
                        "binaryListValues": [],
                        "dataType": a["DataType"],
                    }
                    for name, a in m.get("MessageAttributes", {}).items()
                },
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": arn,
                "awsRegion": region,
            }
            for m in received
        ]
        answer = invoke({"Records": records}, f"{len(records)} message(s) of {url.rsplit('/', 1)[1]}")
        if answer is None:
            continue
        failed = set()
        if reports_failures and isinstance(answer, dict):
            failed = {f.get("itemIdentifier") for f in answer.get("batchItemFailures") or []}
        done = [m for m in received if m["MessageId"] not in failed]
        for start in range(0, len(done), 10):
            sqs.delete_message_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                    for i, m in enumerate(done[start : start + 10])
                ],
            )


def stream_record(record):
    """A record as get_records answers it, in the shape Lambda hands over."""

    def plain(value):
        if isinstance(value, bytes):
            return base64.b64encode(value).decode()
        if isinstance(value, datetime.datetime):
            return int(value.timestamp())
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    shaped = plain(record)
    shaped.setdefault("eventVersion", "1.1")
    shaped.setdefault("eventSource", "aws:dynamodb")
    return shaped


def stream_mapping(invoke, table, starting, batch_size, patterns, retries):
    streams = boto3.client("dynamodbstreams")
    arn = boto3.client("dynamodb").describe_table(TableName=table)["Table"]["LatestStreamArn"]
    iterators = {}
    while not stopping.is_set():
        for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
            shard_id = shard["ShardId"]
            if shard_id not in iterators:
                iterators[shard_id] = streams.get_shard_iterator(
                    StreamArn=arn, ShardId=shard_id, ShardIteratorType=starting
                )["ShardIterator"]
        busy = False
        for shard_id, iterator in list(iterators.items()):
            if iterator is None:
                continue
            answer = streams.get_records(ShardIterator=iterator, Limit=1000)
            iterators[shard_id] = answer.get("NextShardIterator")
            records = [stream_record(r) for r in answer.get("Records", [])]
            for record in records:
                record["eventSourceARN"] = arn
            records = [r for r in records if not patterns or any(matches(p, r) for p in patterns)]
            for start in range(0, len(records), batch_size):
                batch = records[start : start + batch_size]
                busy = True
                for _ in range(retries + 1):
                    if invoke({"Records": batch}, f"{len(batch)} stream record(s)") is not None:
                        break
        if not busy:
            stopping.wait(0.2)


def kept_running(target, name, *args):
    """`target`, started again a second after anything it did not expect (an emulator that
    answered an error), as Lambda's pollers keep polling."""
    while not stopping.is_set():
        try:
            target(*args)
        except Exception as error:
            log(f"{name}: {error!r}; again in 1 s")
            stopping.wait(1)


def schedule(invoke, every, payload):
    while not stopping.wait(every):
        invoke(payload, "its schedule")


def rate_seconds(expression):
    found = re.fullmatch(r"rate\((\d+) (minute|minutes|hour|hours|day|days)\)", expression)
    if not found:
        return None
    unit = {"minute": 60, "hour": 3600, "day": 86400}[found.group(2).rstrip("s")]
    return int(found.group(1)) * unit


def main():
    template_path, env_path, endpoint = sys.argv[1:4]
    with open(template_path) as f:
        template = yaml_parse(f.read())
    with open(env_path) as f:
        settings = json.load(f)["Parameters"]
    variables = template.get("Globals", {}).get("Function", {}).get("Environment", {})
    variables = variables.get("Variables", {})
    # A queue's logical id -> the variable that names its URL.
    queue_variable = {
        value["Ref"]: name
        for name, value in variables.items()
        if isinstance(value, dict) and "Ref" in value
    }
    for function, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        invoke = Invoker(endpoint, function)
        for name, event in (resource["Properties"].get("Events") or {}).items():
            kind, props = event["Type"], event.get("Properties", {})
            if kind == "SQS":
                queue = props["Queue"]["Fn::GetAtt"][0]
                url = settings.get(queue_variable.get(queue, ""), "")
                if not url:
                    log(f"{function}.{name}: no URL for {queue} in {env_path}; not run")
                    continue
                args = (
                    invoke,
                    url,
                    props.get("BatchSize", 10),
                    "ReportBatchItemFailures" in props.get("FunctionResponseTypes", []),
                )
                target = sqs_mapping
            elif kind == "DynamoDB":
                patterns = [
                    json.loads(f["Pattern"])
                    for f in props.get("FilterCriteria", {}).get("Filters", [])
                ]
                args = (
                    invoke,
                    settings["TABLE_NAME"],
                    props.get("StartingPosition", "LATEST"),
                    props.get("BatchSize", 100),
                    patterns,
                    props.get("MaximumRetryAttempts", 2),
                )
                target = stream_mapping
            elif kind == "ScheduleV2" and rate_seconds(props.get("ScheduleExpression", "")):
                payload = json.loads(props.get("Input", "{}"))
                args = (invoke, rate_seconds(props["ScheduleExpression"]), payload)
                target = schedule
            else:
                continue
            log(f"{function}.{name}: {kind}")
            thread = threading.Thread(
                target=kept_running, args=(target, f"{function}.{name}", *args), daemon=True
            )
            thread.start()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        while not stopping.wait(0.5):
            pass
    except KeyboardInterrupt:
        stopping.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
