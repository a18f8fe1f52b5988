#!/usr/bin/env bash
# The integrator examples against the local server: examples/quickstart.sh with each receiver
# (Python, Node.js), which must receive stream.started and stream.ended of a test stream and
# verify both signatures; then each receiver must accept a signed delivery and refuse the same
# delivery with its body tampered with; and examples/replay.sh must download a test stream's
# recording, the MP4 the server ships.
set -euo pipefail
cd "$(dirname "$0")/../.."

work=$(mktemp -d)
. scripts/lib/local-server.sh
receiver=
trap 'stop_local_server; [ -z "$receiver" ] || kill "$receiver" 2>/dev/null; rm -rf "$work"' EXIT
start_local_server WEBHOOK_ALLOW_PRIVATE_URLS=true
export API="$LOCAL_API"

# The receivers' dependencies, installed where the tests keep theirs (the checkout stays clean).
venv="$(scripts/lib/venv.sh receiver-python)"
export RECEIVER_PYTHON="$venv/bin/python"

for which in python node; do
    echo "== examples/quickstart.sh with the $which receiver"
    RECEIVER=$which examples/quickstart.sh
done

echo "== examples/replay.sh downloads a test stream's recording"
OUT="$work/replay.mp4" examples/replay.sh
cmp "$work/replay.mp4" shared/domain/assets/test-recording.mp4

echo "== each receiver refuses a tampered body"
secret="whsec_$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(24)).decode())')"
for which in python node; do
    rport=$(free_port)
    case $which in
    python) WEBHOOK_SECRET=$secret "$RECEIVER_PYTHON" examples/receivers/python/receiver.py --port "$rport" > "$work/$which.log" 2>&1 & ;;
    node) WEBHOOK_SECRET=$secret node examples/receivers/node/receiver.mjs --port "$rport" > "$work/$which.log" 2>&1 & ;;
    esac
    receiver=$!
    for _ in $(seq 1 100); do grep -q listening "$work/$which.log" && break; sleep 0.1; done
    echo -n "$which: "
    "$venv/bin/python" scripts/checks/check_receiver.py "http://127.0.0.1:$rport/" "$secret"
    kill "$receiver"; wait "$receiver" 2>/dev/null || true
    receiver=
done
