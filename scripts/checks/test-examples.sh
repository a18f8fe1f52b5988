#!/usr/bin/env bash
# The integrator examples against the local server: examples/quickstart.sh with each receiver
# (Python, Node.js), which must receive stream.started and stream.ended of a test stream and
# verify every signature (the secret's and the public key's); then each receiver must accept a
# signed delivery and refuse the same delivery with its body tampered with, or with its v1a
# forged or left out (with the secret and the public key, and with the public key alone); and examples/replay.sh must download a test stream's
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
OUT="$work/replay.mp4" CLIP_OUT="$work/clip.mp4" examples/replay.sh
cmp "$work/replay.mp4" shared/domain/assets/test-recording.mp4

echo "== each receiver refuses a tampered body, and a forged or missing v1a when it holds a public key"
secret="whsec_$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(24)).decode())')"
signing_key="whsk_$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')"
public_key=$("$venv/bin/python" scripts/checks/check_receiver.py --public-key "$signing_key")
for which in python node; do
    # With the secret and the public key, then with the public key alone.
    for keys in "secret public" "public"; do
        env_keys=(WEBHOOK_PUBLIC_KEY="$public_key")
        check_keys=(--signing-key "$signing_key")
        if [ "$keys" = "secret public" ]; then
            env_keys+=(WEBHOOK_SECRET="$secret")
            check_keys+=(--secret "$secret")
        fi
        rport=$(free_port)
        case $which in
        python) env "${env_keys[@]}" "$RECEIVER_PYTHON" examples/receivers/python/receiver.py --port "$rport" > "$work/$which.log" 2>&1 & ;;
        node) env "${env_keys[@]}" node examples/receivers/node/receiver.mjs --port "$rport" > "$work/$which.log" 2>&1 & ;;
        esac
        receiver=$!
        for _ in $(seq 1 100); do grep -qs listening "$work/$which.log" && break; sleep 0.1; done
        echo -n "$which ($keys): "
        "$venv/bin/python" scripts/checks/check_receiver.py "http://127.0.0.1:$rport/" "${check_keys[@]}"
        kill "$receiver"; wait "$receiver" 2>/dev/null || true
        receiver=
    done
done
