#!/usr/bin/env bash
# Property-based tests of the running local server against its own OpenAPI document, with
# schemathesis: positive and negative examples for every operation, with a seeded key of
# every scope (each in its own brand, so the per-brand rate limit spreads). Fails on any 5xx,
# any response that does not conform to the document, and any undocumented status code.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/build-dir.sh

schemathesis="$(scripts/lib/venv.sh schemathesis)/bin/schemathesis"

work=$(mktemp -d)
python3 - "$work/seed.json" <<'PY'
import json, sys
scopes = ["streams:read", "streams:write", "analytics:read", "webhooks:write"]
brands, keys = [], []
for i, scope in enumerate(scopes + ["all"]):
    brand = f"brand_fuzz_{i}"
    brands.append({"id": brand, "name": brand, "plan": "growth", "vertical": "live-commerce"})
    keys.append({"key": "svc_test_" + f"fuzz{i}".ljust(32, "0"), "brand_id": brand,
                 "scopes": scopes if scope == "all" else [scope]})
creators = [{"id": "avt_ava000000001", "name": "Ava", "status": "active", "languages": ["en"],
             "style": None, "personality": None, "vibe": None, "consent": True, "photo": None}]
json.dump({"brands": brands, "api_keys": keys, "creators": creators}, open(sys.argv[1], "w"))
PY

. scripts/lib/local-server.sh
trap 'stop_local_server; rm -rf "$work"' EXIT
start_local_server -- --seed "$work/seed.json"
base="$LOCAL_API"

# schemathesis keeps its example database in the working directory: outside the checkout,
# where it persists between runs without touching `git status`.
cache="${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api/schemathesis"
mkdir -p "$cache"
cd "$cache"

checks=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance
for i in 0 1 2 3 4; do
    key="svc_test_$(printf 'fuzz%s' "$i" | sed -e :a -e 's/^.\{1,31\}$/&0/;ta')"
    echo "== schemathesis with key #$i"
    "$schemathesis" run "$base/openapi.json" \
        --header "Authorization: Bearer $key" \
        --checks "$checks" \
        --mode all \
        --max-examples 25 \
        --seed 1 \
        --workers 1 \
        --warnings off
done
