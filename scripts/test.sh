#!/usr/bin/env bash
# Runs the whole test suite: unit tests, then the HTTP-level suite on the embedded backends.
# Installs nothing globally; safe to run on a fresh machine with a Rust toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --locked "$@"
