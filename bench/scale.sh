#!/usr/bin/env bash
# Latency of GET /streams and GET /analytics against the size of a brand's history, of
# GET /analytics against the number of streams in its window, and of GET /shows against the
# number of shows a brand holds, on the embedded store and on
# DynamoDB (moto server). Usage: bench/scale.sh
#   MEMORY_SIZES    default 100,10000,100000
#   DYNAMODB_SIZES  default 100,10000,100000 (seeding 100,000 streams into moto takes about
#                   two and a half minutes)
#   MEMORY_IN_WINDOW    streams in the 30-day window, default 200,20000,200000
#   DYNAMODB_IN_WINDOW  ... on DynamoDB, default 200,20000,200000 (an empty value skips)
#   MEMORY_SHOWS    shows a brand holds, for GET /shows, default 100,10000
#   DYNAMODB_SHOWS  ... on DynamoDB, default 100,10000 (scheduling 10,000 shows into moto takes
#                   about five minutes)
#   MEMORY_DELIVERY_LOG  attempts in a webhook's delivery log, default 20,20000
#   DYNAMODB_DELIVERY_LOG  ... on DynamoDB, default empty (skipped: moto sorts its whole
#                   table on every Query, so its figures there measure moto)
#   REQUESTS        requests per case and size on the embedded store, default 200
#   DYNAMODB_REQUESTS                                 ... on DynamoDB, default 5
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
cargo build --release --locked -p local-api --example scale
bin="$CARGO_TARGET_DIR/release/examples/scale"

"$bin" --backend memory --sizes "${MEMORY_SIZES-100,10000,100000}" \
    --in-window "${MEMORY_IN_WINDOW-200,20000,200000}" \
    --delivery-log "${MEMORY_DELIVERY_LOG-20,20000}" --shows "${MEMORY_SHOWS-100,10000}" \
    --requests "${REQUESTS:-200}"
echo

moto="$(scripts/lib/venv.sh moto)"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$moto/bin/python" scripts/aws/moto_server.py -H 127.0.0.1 -p "$port" > /dev/null 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null' EXIT
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_REGION=us-east-1 \
       AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
for _ in $(seq 1 100); do
    python3 -c "import urllib.request; urllib.request.urlopen('$AWS_ENDPOINT_URL/moto-api/')" 2>/dev/null && break
    sleep 0.1
done
"$bin" --backend dynamodb --sizes "${DYNAMODB_SIZES-100,10000,100000}" \
    --in-window "${DYNAMODB_IN_WINDOW-200,20000,200000}" \
    --delivery-log "${DYNAMODB_DELIVERY_LOG-}" --shows "${DYNAMODB_SHOWS-100,10000}" \
    --requests "${DYNAMODB_REQUESTS:-5}"
