#!/usr/bin/env bash
# The local server on DynamoDB and SQS, emulated by moto, in one command:
#
#   scripts/dev-aws.sh [local-api arguments, e.g. --seed events/seed.json]
#
# Starts moto on 127.0.0.1:$MOTO_PORT (default 5000; installed from PyPI into a cached
# virtualenv), creates the table and the delivery queues named in events/local-env.json (the
# env-vars file `sam local` uses against the same emulator), then runs the local server on them:
# it loads the demo brands (or the seed file) into the table and prints its URL and keys.
# Ctrl-C stops both; moto keeps nothing, so every run starts empty. moto's log is
# $MOTO_LOG (default: dev-aws-moto-PORT.log in $TMPDIR or /tmp).
set -euo pipefail
cd "$(dirname "$0")/.."

port="${MOTO_PORT:-5000}"
env_file=events/local-env.json
setting() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["Parameters"][sys.argv[2]])' \
        "$env_file" "$1"
}
table=$(setting TABLE_NAME)
queue_name() { setting "$1" | sed 's#.*/##'; }

if python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" \
    "$port" 2>/dev/null; then
    echo "port $port is taken; set MOTO_PORT to a free one" >&2
    exit 1
fi

moto=$(scripts/lib/venv.sh moto)
moto_log="${MOTO_LOG:-${TMPDIR:-/tmp}/dev-aws-moto-$port.log}"
"$moto/bin/python" scripts/aws/moto_server.py -H 127.0.0.1 -p "$port" > "$moto_log" 2>&1 &
moto_pid=$!
trap 'kill "$moto_pid" 2>/dev/null || true; wait "$moto_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1])" \
        "http://127.0.0.1:$port/moto-api/" 2>/dev/null && break
    sleep 0.1
done

export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
export STORE=dynamodb TABLE_NAME="$table"
. scripts/build-dir.sh

# DEV_AWS_PREBUILT=1: the binaries are built already (scripts/test-dev-aws.sh builds them with the
# test build's features, which a plain `cargo build -p ...` would not reuse).
if [ -z "${DEV_AWS_PREBUILT:-}" ]; then
    cargo build --quiet -p admin -p local-api
fi
"$CARGO_TARGET_DIR/debug/admin" create-table
# Queue URLs name the host they were asked on; the functions and this server find a queue by
# its name, so one URL serves both.
for variable in DELIVERY_QUEUE_URL DELIVERY_DLQ_URL; do
    "$moto/bin/python" - "$(queue_name "$variable")" <<'PY'
import sys
import boto3
boto3.client("sqs").create_queue(QueueName=sys.argv[1])
PY
done
export DELIVERY_QUEUE_URL="$AWS_ENDPOINT_URL/123456789012/$(queue_name DELIVERY_QUEUE_URL)"
export DELIVERY_DLQ_URL="$AWS_ENDPOINT_URL/123456789012/$(queue_name DELIVERY_DLQ_URL)"

echo "moto on $AWS_ENDPOINT_URL (log: $moto_log); table $TABLE_NAME; queues $DELIVERY_QUEUE_URL, $DELIVERY_DLQ_URL"
echo "The same emulator for the admin command or the AWS CLI:"
echo "  export AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing STORE=dynamodb TABLE_NAME=$TABLE_NAME"
# Not exec: the trap stops moto when the server stops.
"$CARGO_TARGET_DIR/debug/local-api" "$@"
