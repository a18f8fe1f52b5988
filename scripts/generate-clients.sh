#!/usr/bin/env bash
# Generates the typed clients under clients/ from the OpenAPI document the local server
# serves: clients/python with openapi-python-client, clients/typescript/src/schema.d.ts with
# openapi-typescript, clients/rust/src/api with oas3-gen (installed under ~/.cache on first
# use, a few minutes), after checking the document is valid OpenAPI 3.1. Any warning of a
# generator is a failure.
#
#   scripts/generate-clients.sh           regenerate the checked-in clients
#   scripts/generate-clients.sh --check   fail when the checked-in clients differ from what
#                                         the served document generates (CI runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
mode="${1:-write}"
case "$mode" in write | --check) ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac

venv="$(scripts/lib/venv.sh clients)"

work=$(mktemp -d)
. scripts/lib/local-server.sh
trap 'stop_local_server; rm -rf "$work"' EXIT
# The document names the server's default local address, wherever it was generated.
start_local_server PUBLIC_BASE_URL=http://127.0.0.1:3000/api/v1
curl -sf "$LOCAL_API/openapi.json" -o "$work/openapi.json"

# The document itself first: valid OpenAPI 3.1 (the published JSON Schema of the format).
"$venv/bin/openapi-spec-validator" "$work/openapi.json" > "$work/validator.log" 2>&1 ||
    { cat "$work/validator.log" >&2; echo "the served document is not valid OpenAPI 3.1" >&2; exit 1; }

fail_on_warnings() { # name, output file
    if grep -qiE 'warn|⚠' "$2"; then
        cat "$2" >&2
        echo "$1 reported warnings" >&2
        exit 1
    fi
}

# Python: ruff (from the same virtualenv) formats the output, so it is deterministic.
RUFF_NO_CACHE=true PATH="$venv/bin:$PATH" openapi-python-client generate \
    --path "$work/openapi.json" \
    --config clients/python-generator.yaml \
    --custom-template-path clients/templates/python \
    --meta uv \
    --output-path "$work/python" > "$work/python.log" 2>&1 || { cat "$work/python.log" >&2; exit 1; }
fail_on_warnings openapi-python-client "$work/python.log"

# TypeScript: the generator is a pinned dev dependency of the package.
(cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error > /dev/null)
clients/typescript/node_modules/.bin/openapi-typescript "$work/openapi.json" \
    --output "$work/schema.d.ts" > "$work/typescript.log" 2>&1 || { cat "$work/typescript.log" >&2; exit 1; }
fail_on_warnings openapi-typescript "$work/typescript.log"

# Rust: oas3-gen (scripts/lib/client-tools.sh).
. scripts/lib/client-tools.sh
oas3_gen=$(oas3_gen)
# Run from the work directory: the files name their source as given.
(cd "$work" && "$oas3_gen" generate client-mod -i openapi.json -o rust \
    --all-schemas -q --color never > rust.log 2>&1) || { cat "$work/rust.log" >&2; exit 1; }
fail_on_warnings oas3-gen "$work/rust.log"

if [ "$mode" = --check ]; then
    if ! diff -r clients/python "$work/python" > "$work/diff" ||
        ! diff clients/typescript/src/schema.d.ts "$work/schema.d.ts" >> "$work/diff" ||
        ! diff -r clients/rust/src/api "$work/rust" >> "$work/diff"; then
        head -n 60 "$work/diff" >&2
        echo "clients/ is not what the served OpenAPI document generates: run scripts/generate-clients.sh and commit the result" >&2
        exit 1
    fi
    echo "clients/ matches the served OpenAPI document"
else
    rm -rf clients/python
    cp -r "$work/python" clients/python
    cp "$work/schema.d.ts" clients/typescript/src/schema.d.ts
    rm -rf clients/rust/src/api
    cp -r "$work/rust" clients/rust/src/api
    echo "regenerated clients/python, clients/typescript/src/schema.d.ts and clients/rust/src/api"
fi
