"""The comparison for bench/cold_start.py: a Python Lambda with the same set-up as the Rust
functions (configuration from the environment, DynamoDB, SQS and Scheduler clients with
boto3, the LiveKit secret read from SSM) answering the discovery request through the Runtime
API."""

import json
import os
import urllib.request

import boto3

config = {
    "store": os.environ.get("STORE", "dynamodb"),
    "table": os.environ["TABLE_NAME"],
    "retry_delays": [float(x) for x in os.environ.get("WEBHOOK_RETRY_DELAYS_SECS", "30,300,1800,7200,28800").split(",")],
}
session = boto3.session.Session()
dynamodb = session.client("dynamodb")
sqs = session.client("sqs")
scheduler = session.client("scheduler")
secret_parameter = os.environ.get("LIVEKIT_API_SECRET_PARAMETER")
if secret_parameter:
    livekit_secret = session.client("ssm").get_parameter(Name=secret_parameter, WithDecryption=True)["Parameter"]["Value"]

api = f"http://{os.environ['AWS_LAMBDA_RUNTIME_API']}/2018-06-01/runtime/invocation"
while True:
    with urllib.request.urlopen(f"{api}/next") as response:
        request_id = response.headers["Lambda-Runtime-Aws-Request-Id"]
        event = json.loads(response.read())
    host = event["headers"]["host"]
    body = json.dumps({"name": "Live Stream Hosting API", "version": "v1", "status": "early_access",
                       "docs": f"https://{host}/api/v1/openapi.json", "endpoints": {}})
    answer = json.dumps({"statusCode": 200, "headers": {"content-type": "application/json"}, "body": body})
    urllib.request.urlopen(urllib.request.Request(f"{api}/{request_id}/response", data=answer.encode(), method="POST"))
