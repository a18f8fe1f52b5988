#!/usr/bin/env bash
# Size of each function's release binary, stripped and zipped as Lambda receives it.
# (Built for this machine's architecture; the arm64 build is of the same order.)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
cargo build --release --locked --workspace --bins
target="$CARGO_TARGET_DIR/release"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| function | binary | zipped |"
echo "|---|---|---|"
for binary in discovery-api streams-api analytics-api webhooks-api gateway-default livekit-webhook timers outbox-relay delivery clips; do
    cp "$target/$binary" "$work/bootstrap"
    (cd "$work" && python3 -c "import zipfile; z = zipfile.ZipFile('f.zip', 'w', zipfile.ZIP_DEFLATED); z.write('bootstrap'); z.close()")
    size=$(stat -c %s "$target/$binary")
    zipped=$(stat -c %s "$work/f.zip")
    printf '| %s | %.1f MB | %.1f MB |\n' "$binary" "$(echo "$size/1048576" | bc -l)" "$(echo "$zipped/1048576" | bc -l)"
    rm -f "$work/f.zip"
done
