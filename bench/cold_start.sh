#!/usr/bin/env bash
# Builds every function (release), starts moto with the sample table, and runs
# bench/cold_start.py. Usage: [BENCH_FUNCTION_CPU=N] bench/cold_start.sh [runs per function, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
runs="${1:-20}"
cargo build --release --locked --workspace --bins --quiet
cargo build --release --locked -p local-api --example hello_lambda --quiet
export BENCH_TARGET="$CARGO_TARGET_DIR/release"
export BENCH_FLOOR="$BENCH_TARGET/examples/hello_lambda"
moto="$(scripts/lib/venv.sh moto)"
export BENCH_BOTO3_PYTHON="$moto/bin/python"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$moto/bin/python" scripts/aws/moto_server.py -H 127.0.0.1 -p "$port" > /dev/null 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null' EXIT
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
       AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
for _ in $(seq 1 100); do
    python3 -c "import urllib.request; urllib.request.urlopen('$AWS_ENDPOINT_URL/moto-api/')" 2>/dev/null && break
    sleep 0.1
done
export STORE=dynamodb TABLE_NAME=bench
"$BENCH_TARGET/admin" create-table > /dev/null
"$BENCH_TARGET/admin" load-seed events/seed.json > /dev/null
queue=$("$moto/bin/python" -c "import boto3; print(boto3.client('sqs').create_queue(QueueName='bench')['QueueUrl'])")
dlq=$("$moto/bin/python" -c "import boto3; print(boto3.client('sqs').create_queue(QueueName='bench-dlq')['QueueUrl'])")
export DELIVERY_QUEUE_URL="$queue" DELIVERY_DLQ_URL="$dlq"
# In Lambda the LiveKit secret is read from SSM while an instance starts serving: what needs it
# (a start, LiveKit's webhooks) waits for that round trip, so the first request includes it.
"$moto/bin/python" -c "import boto3; boto3.client('ssm').put_parameter(Name='/bench/livekit-api-secret', Type='SecureString', Value='sample-livekit-secret-for-local-events-only')"
export LIVEKIT_API_SECRET_PARAMETER=/bench/livekit-api-secret
python3 bench/cold_start.py "$runs"
