#!/usr/bin/env bash
# The generated clients, used as integrators would, against the local server: the Python
# client installed from clients/python (and type-checked), the TypeScript one compiled with
# strict settings, the Rust one with clippy's warnings as errors.
# First checks that the checked-in clients are what the served document generates.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/generate-clients.sh --check

binary="${CARGO_TARGET_DIR:-target}/debug/local-api"
work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
STORE=memory "$binary" --addr "127.0.0.1:$port" --fixed-demo-keys > "$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
base="http://127.0.0.1:$port/api/v1"
for _ in $(seq 1 100); do
    curl -sf "$base/" > /dev/null && break
    sleep 0.1
done
key=svc_test_demotestkey000000000000000000000

echo "== python client"
venv="$(scripts/venv.sh client-tests)"
# Installed as an integrator would; reinstalled every run, as it is regenerated.
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps ./clients/python
"$venv/bin/mypy" --strict --no-incremental clients/tests/python_smoke.py
"$venv/bin/python" clients/tests/python_smoke.py "$base" "$key"

echo "== typescript client"
(cd clients/typescript && npm run --silent build)
node clients/typescript/dist/test/smoke.js "$base" "$key"

echo "== rust client"
cargo clippy --quiet --locked --manifest-path clients/rust/Cargo.toml --all-targets -- -D warnings
cargo run --quiet --locked --manifest-path clients/rust/Cargo.toml --example smoke -- "$base" "$key"
