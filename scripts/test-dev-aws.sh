#!/usr/bin/env bash
# Checks that scripts/dev-aws.sh runs the local server on moto's DynamoDB and SQS in one
# command: it prints its keys, a test stream started through it is an item of moto's table, the
# delivery queues exist, and Ctrl-C (SIGINT) stops the server and moto.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/local-server.sh

# Built (and moto installed) first, into the build directory dev-aws.sh uses, so the wait below
# is for the start alone. The test build's binaries (a no-op after scripts/test.sh's cargo
# test): `cargo build -p admin -p local-api` resolves the dependencies' features without the
# dev-dependencies' and would rebuild most of the tree, about 3.5 minutes from cold.
cargo test --workspace --locked --no-run --quiet
scripts/lib/venv.sh moto > /dev/null
moto_port=$(free_port)
api_port=$(free_port)
work=$(mktemp -d)
log="$work/dev-aws.log"
DEV_AWS_PREBUILT=1 MOTO_PORT=$moto_port MOTO_LOG="$work/moto.log" setsid scripts/dev-aws.sh --addr "127.0.0.1:$api_port" --fixed-demo-keys \
    > "$log" 2>&1 &
pid=$!
cleanup() {
    kill -INT -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

api="http://127.0.0.1:$api_port/api/v1"
for _ in $(seq 1 600); do
    grep -q "live key:" "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "dev-aws.sh stopped" >&2; exit 1; }
    sleep 0.1
done
grep -q "live key:" "$log" || { cat "$log" >&2; echo "no keys printed within a minute of the start" >&2; exit 1; }
key=$(sed -n 's/^ *test key: *//p' "$log" | head -1)

creator=$(curl -sf "$api/creators" | python3 -c 'import json, sys; print(json.load(sys.stdin)["creators"][0]["id"])')
stream=$(curl -sf -X POST "$api/streams" -H "Authorization: Bearer $key" \
    -H 'Content-Type: application/json' \
    -d "{\"creator_id\": \"$creator\", \"product_name\": \"Glow Serum\", \"platform\": \"tiktok\"}" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["stream_id"])')

table=$(python3 -c 'import json; print(json.load(open("events/local-env.json"))["Parameters"]["TABLE_NAME"])')
AWS_ENDPOINT_URL="http://127.0.0.1:$moto_port" AWS_DEFAULT_REGION=us-east-1 AWS_ACCESS_KEY_ID=testing \
    AWS_SECRET_ACCESS_KEY=testing "$(scripts/lib/venv.sh moto)/bin/python" - "$table" "$stream" <<'PY'
import sys
import boto3
table, stream = sys.argv[1], sys.argv[2]
items = boto3.client("dynamodb").scan(TableName=table)["Items"]
assert any(stream in str(item) for item in items), f"stream {stream} not in table {table}"
queues = boto3.client("sqs").list_queues().get("QueueUrls", [])
assert any(url.endswith("-delivery") for url in queues), queues
print(f"dev-aws.sh: stream {stream} is in table {table}; queues {', '.join(queues)}")
PY

kill -INT -- "-$pid"
for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
    echo "dev-aws.sh did not stop on Ctrl-C" >&2
    exit 1
fi
if python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" \
    "$moto_port" 2>/dev/null; then
    echo "moto still answers after Ctrl-C" >&2
    exit 1
fi
echo "dev-aws.sh: started, served from moto, stopped cleanly"
