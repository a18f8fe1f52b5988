#!/usr/bin/env bash
# Runs the whole test suite: unit tests, then the HTTP-level suite on the embedded backends,
# with real webhook receivers and the published signature verifiers.
# Everything it installs goes into a cache directory; nothing is installed globally.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api"
mkdir -p "$cache"

# The Stripe and Standard Webhooks libraries that receivers use to verify signatures.
verifiers="$cache/venv-verifiers"
if ! "$verifiers/bin/python" -c 'import stripe, standardwebhooks' 2>/dev/null; then
    python3 -m venv "$verifiers"
    "$verifiers/bin/pip" install --quiet --disable-pip-version-check \
        -r local-api/tests/verifiers/requirements.txt
fi
export WEBHOOK_VERIFIER_PYTHON="$verifiers/bin/python"

cargo test --workspace --locked "$@"
