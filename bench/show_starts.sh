#!/usr/bin/env bash
# How late a scheduled show starts with the sweep alone, on the local server's defaults: on the
# embedded store, then on DynamoDB (moto server). About two and a half minutes per backend.
# Usage: bench/show_starts.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
cargo build --release --locked -p local-api --example show_starts
bin="$CARGO_TARGET_DIR/release/examples/show_starts"

"$bin" --backend embedded
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
"$bin" --backend dynamodb
