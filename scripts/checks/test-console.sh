#!/usr/bin/env bash
# The console (GET /api/v1/console, docs/console.md) in a real browser, on both backends: Debian's
# Chromium driven by playwright-core (scripts/console/console.test.mjs) against the local server,
# first on the embedded backends, then on DynamoDB and SQS served by moto (scripts/dev-aws.sh).
# Keeps a screenshot of each view as CI artifacts ($ARTIFACTS_DIR, default
# ~/.cache/live-stream-hosting-api/artifacts/console-<view>.png).
set -euo pipefail
cd "$(dirname "$0")/../.."

. scripts/lib/prerequisites.sh
need chromium chromium "the console's test in a headless browser"
need npm npm "the console's browser test (playwright-core, axe-core)"
# Pinned in scripts/console/package-lock.json; playwright-core brings no browser of its own.
(cd scripts/console && npm ci --no-audit --no-fund --loglevel=error > /dev/null)

artifacts="${ARTIFACTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api/artifacts}"
mkdir -p "$artifacts"
test_key=svc_test_demotestkey000000000000000000000
live_key=svc_live_demolivekey000000000000000000000
. scripts/lib/local-server.sh
work=$(mktemp -d)
dev_aws_pid=""
cleanup() {
    stop_local_server
    if [ -n "$dev_aws_pid" ]; then
        kill -INT -- "-$dev_aws_pid" 2>/dev/null || true
        wait "$dev_aws_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "== the console on the embedded backends"
start_local_server WEBHOOK_ALLOW_PRIVATE_URLS=true
node scripts/console/console.test.mjs "$LOCAL_API" "$test_key" "$live_key" "$LOCAL_API_LOG" "$artifacts"
stop_local_server

echo "== the console on DynamoDB and SQS (moto)"
scripts/lib/venv.sh moto > /dev/null
api_port=$(free_port)
log="$work/dev-aws.log"
WEBHOOK_ALLOW_PRIVATE_URLS=true DEV_AWS_PREBUILT=1 MOTO_PORT=$(free_port) MOTO_LOG="$work/moto.log" \
    setsid scripts/dev-aws.sh --addr "127.0.0.1:$api_port" --fixed-demo-keys > "$log" 2>&1 &
dev_aws_pid=$!
for _ in $(seq 1 600); do
    grep -qs "live key:" "$log" && break
    kill -0 "$dev_aws_pid" 2>/dev/null || { cat "$log" >&2; echo "dev-aws.sh stopped" >&2; exit 1; }
    sleep 0.1
done
grep -q "STORE=dynamodb" "$log" || { cat "$log" >&2; echo "not on DynamoDB" >&2; exit 1; }
node scripts/console/console.test.mjs "http://127.0.0.1:$api_port/api/v1" "$test_key" "$live_key" "$log"
