#!/usr/bin/env bash
# The reference page (GET /api/v1/docs) in a real browser: headless Chromium (Debian's
# package, installed here when missing) renders it from the local server with no console
# error and no request to another host, and keeps a screenshot as a CI artifact
# ($ARTIFACTS_DIR, default ~/.cache/live-stream-hosting-api/artifacts/docs-page.png).
set -euo pipefail
cd "$(dirname "$0")/../.."

. scripts/lib/prerequisites.sh
need chromium chromium "the reference page's test in a headless browser"

artifacts="${ARTIFACTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api/artifacts}"
mkdir -p "$artifacts"
work=$(mktemp -d)
. scripts/lib/local-server.sh
trap 'stop_local_server; rm -rf "$work"' EXIT
start_local_server
url="$LOCAL_API/docs"

browse() {
    # Any host but the local server resolves nowhere: a request elsewhere would fail and log.
    chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --user-data-dir="$work/profile" --no-first-run --disable-extensions \
        --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
        --enable-logging=stderr --v=0 "$@" "$url"
}
browse --dump-dom > "$work/dom.html" 2> "$work/console.log"
browse --screenshot="$artifacts/docs-page.png" --window-size=1280,2200 > /dev/null 2>> "$work/console.log"

grep -q 'id="webhook-guide"' "$work/dom.html" || { echo "the page did not render" >&2; exit 1; }
if grep -E 'CONSOLE|Uncaught|ERR_NAME_NOT_RESOLVED|Refused to' "$work/console.log"; then
    echo "the page logged console errors or reached another host" >&2
    exit 1
fi
echo "docs page rendered in Chromium without console errors; screenshot: $artifacts/docs-page.png"
