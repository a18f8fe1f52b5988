#!/usr/bin/env bash
# The generated clients, used as integrators would, against the local server: the Python
# client installed from clients/python (and type-checked), the TypeScript one compiled with
# strict settings, the Rust one with clippy's warnings as errors.
# First checks that the checked-in clients are what the served document generates.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/build-dir.sh

scripts/generate-clients.sh --check

. scripts/lib/local-server.sh
trap stop_local_server EXIT
start_local_server
base="$LOCAL_API"
key=svc_test_demotestkey000000000000000000000

echo "== python client"
venv="$(scripts/lib/venv.sh client-tests)"
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
