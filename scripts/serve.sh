#!/usr/bin/env bash
# The local server, built (debug) into the project's one build directory (scripts/build-dir.sh)
# and started with the given local-api arguments:
#
#   scripts/serve.sh --fixed-demo-keys        # http://127.0.0.1:3000/api/v1/ and two demo keys
#   scripts/serve.sh --help                   # every flag
#
# The same as `cargo run -p local-api -- ARGS` with that build directory, so the server and
# scripts/test.sh share one build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
exec cargo run --locked -p local-api -- "$@"
