#!/usr/bin/env bash
# Usage: scripts/lib/venv.sh NAME  -> prints the path of a virtualenv holding
# scripts/lib/requirements/NAME.txt, creating it when the pinned requirements changed.
set -euo pipefail
cd "$(dirname "$0")/../.."
name="$1"
requirements="scripts/lib/requirements/$name.txt"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api"
digest=$(sha256sum "$requirements" | cut -c1-12)
venv="$cache/venv-$name-$digest"
if [ ! -f "$venv/.complete" ]; then
    rm -rf "$venv"
    mkdir -p "$cache"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
    touch "$venv/.complete"
fi
echo "$venv"
