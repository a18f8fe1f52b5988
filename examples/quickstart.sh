#!/usr/bin/env bash
# From nothing to verified webhooks in one command, against the local server:
# registers a receiver, starts it with the registration's secret and public key, starts a test stream,
# watches stream.started arrive verified, ends the stream, watches stream.ended (end_reason
# requested), fails a second one with the test helper, watches stream.error (end_reason
# provider_error), starts a third with a destination and fails the destination with the test
# helper, watching stream.destination_active and stream.destination_failed, cleans up.
#
# First, in another terminal:
#   WEBHOOK_ALLOW_PRIVATE_URLS=true scripts/serve.sh --fixed-demo-keys
# Then:
#   examples/quickstart.sh            # the Python receiver
#   RECEIVER=node examples/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")"

API=${API:-http://127.0.0.1:3000/api/v1}
KEY=${KEY:-svc_test_demotestkey000000000000000000000}
RECEIVER=${RECEIVER:-python}
PORT=${PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
api() { curl -sS -H "Authorization: Bearer $KEY" "$@"; }
field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

echo "1. register a receiver at http://127.0.0.1:$PORT/"
registration=$(api -X POST "$API/webhooks" \
    -d "{\"url\":\"http://127.0.0.1:$PORT/\",\"events\":[\"stream.started\",\"stream.ended\",\"stream.error\",\"stream.destination_active\",\"stream.destination_failed\"]}")
if ! secret=$(echo "$registration" | field secret 2>/dev/null); then
    echo "   refused: $registration" >&2
    echo "   (start the server with WEBHOOK_ALLOW_PRIVATE_URLS=true to deliver to your machine)" >&2
    exit 1
fi
webhook=$(echo "$registration" | field webhook_id)
public_key=$(echo "$registration" | field public_key)

log=$(mktemp)
receiver_pid=
cleanup() {
    api -X DELETE "$API/webhooks?id=$webhook" > /dev/null || true
    [ -n "$receiver_pid" ] && kill "$receiver_pid" 2>/dev/null || true
    rm -f "$log"
}
trap cleanup EXIT

echo "2. start the $RECEIVER receiver with the secret and the public key of the registration"
case "$RECEIVER" in
python)
    # RECEIVER_PYTHON: a Python that has the receiver's requirements; else a .venv beside it.
    python=${RECEIVER_PYTHON:-receivers/python/.venv/bin/python}
    if [ ! -x "$python" ]; then
        python3 -m venv receivers/python/.venv
        receivers/python/.venv/bin/pip install -q -r receivers/python/requirements.txt
    fi
    WEBHOOK_SECRET=$secret WEBHOOK_PUBLIC_KEY=$public_key "$python" receivers/python/receiver.py --port "$PORT" > "$log" 2>&1 &
    ;;
node)
    (cd receivers/node && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; })
    WEBHOOK_SECRET=$secret WEBHOOK_PUBLIC_KEY=$public_key node receivers/node/receiver.mjs --port "$PORT" > "$log" 2>&1 &
    ;;
*) echo "RECEIVER is python or node" >&2; exit 2 ;;
esac
receiver_pid=$!
for _ in $(seq 1 100); do grep -q listening "$log" && break; sleep 0.1; done

wait_for() { # event type, stream id[, end_reason]
    pattern="\"verified\": *\"$1\".*\"stream_id\": *\"$2\""
    [ -n "${3:-}" ] && pattern="$pattern.*\"end_reason\": *\"$3\""
    # Verified with the public key too.
    pattern="$pattern.*\"ed25519\""
    for _ in $(seq 1 300); do
        if grep -q "$pattern" "$log"; then
            grep "$pattern" "$log" | sed 's/^/   received: /'
            return 0
        fi
        sleep 0.1
    done
    echo "   no verified $1 within 30 s; receiver said:" >&2
    cat "$log" >&2
    return 1
}

echo "3. start a test stream"
stream=$(api -X POST "$API/streams" \
    -d '{"creator_id":"avt_ava000000001","product_name":"Glow Serum","platform":"tiktok","duration_minutes":30}' \
    | field stream_id)
echo "   stream $stream"
wait_for stream.started "$stream"

echo "4. end it"
api -X DELETE "$API/streams/$stream" > /dev/null
wait_for stream.ended "$stream" requested

echo "5. start another and make it fail with the test helper, as a provider failure would"
failing=$(api -X POST "$API/streams" \
    -d '{"creator_id":"avt_ava000000001","product_name":"Glow Serum","platform":"tiktok","duration_minutes":30}' \
    | field stream_id)
api -X POST "$API/test_helpers/streams/$failing/fail" > /dev/null
wait_for stream.error "$failing" provider_error

echo "6. start a third with a destination, and fail the destination with the test helper"
airing=$(api -X POST "$API/streams" \
    -d '{"creator_id":"avt_ava000000001","product_name":"Glow Serum","platform":"tiktok","duration_minutes":30,
         "destinations":[{"platform":"youtube","ingest_url":"rtmp://a.rtmp.youtube.com/live2","stream_key":"abcd-efgh-ijkl-mnop"}]}')
destination=$(echo "$airing" | python3 -c 'import json, sys; print(json.load(sys.stdin)["destinations"][0]["destination_id"])')
airing=$(echo "$airing" | field stream_id)
wait_for stream.destination_active "$airing"
api -X POST "$API/test_helpers/streams/$airing/destinations/$destination/fail" > /dev/null
wait_for stream.destination_failed "$airing"
api -X DELETE "$API/streams/$airing" > /dev/null
wait_for stream.ended "$airing" requested

echo "done: every event arrived, each verified with standardwebhooks, stripe and the public key (ed25519)"
