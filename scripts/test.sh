#!/usr/bin/env bash
# Runs every test: unit tests and the HTTP-level suite on the embedded backends, then the same
# HTTP-level suite on DynamoDB and SQS served by moto on loopback, then schemathesis against
# the local server and its OpenAPI document. Installs what it needs
# (Python virtualenvs under ~/.cache), starts moto and stops it on exit.
# Extra arguments go to both cargo test runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Stripe and Standard Webhooks libraries that receivers use to verify signatures.
WEBHOOK_VERIFIER_PYTHON="$(scripts/venv.sh verifiers)/bin/python"
export WEBHOOK_VERIFIER_PYTHON

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== embedded backends"
TEST_BACKEND=memory cargo test --workspace --locked "$@" 2>&1 | tee -a "$log"

echo "== DynamoDB and SQS (moto server)"
moto="$(scripts/venv.sh moto)"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$moto/bin/python" scripts/moto_server.py -H 127.0.0.1 -p "$port" > "${TMPDIR:-/tmp}/moto-$port.log" 2>&1 &
moto_pid=$!
trap 'kill "$moto_pid" 2>/dev/null; wait "$moto_pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
    python3 -c "import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:$port/moto-api/\")" 2>/dev/null && break
    sleep 0.1
done

export AWS_ENDPOINT_URL="http://127.0.0.1:$port"
export AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
TEST_BACKEND=dynamodb cargo test --workspace --locked "$@" 2>&1 | tee -a "$log"

echo "== schemathesis against the local server and its OpenAPI document"
scripts/schemathesis.sh

# One closing line over both cargo passes.
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' "$log"
