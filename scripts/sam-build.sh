#!/usr/bin/env bash
# Usage: scripts/sam-build.sh [ARCHITECTURE]   (x86_64 by default here; the template's default
# is arm64)
#
# Runs `sam build` on template.yaml as a deployer would, with cargo-lambda and zig from PyPI
# (scripts/lib/requirements/lambda-build.txt), then checks that every function of the template
# got its `bootstrap`, an executable for ARCHITECTURE. cargo builds into the project's one build
# directory (scripts/build-dir.sh); SAM's build and cache live under ~/.cache, so the checkout
# stays clean and a second run rebuilds only what changed.
#
# CHECK_PROFILE=1 (what CI sets) builds with a light release profile (no LTO, many codegen
# units, opt-level 1): the check is that everything builds and links for Lambda, not how fast
# it runs, and the full profile would cost CI several minutes more.
set -euo pipefail
cd "$(dirname "$0")/.."

architecture="${1:-x86_64}"
case "$architecture" in
    x86_64) machine="x86-64" ;;
    arm64) machine="aarch64" ;;
    *) echo "architecture must be x86_64 or arm64, not $architecture" >&2; exit 2 ;;
esac

cache="${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api"
build_dir="$cache/sam-build-$architecture"
sam=$(scripts/lib/venv.sh sam)
tools=$(scripts/lib/venv.sh lambda-build)
# cargo-lambda finds zig as `python3 -m ziglang`, so the build venv's python comes first.
export PATH="$tools/bin:$sam/bin:$PATH"
. scripts/build-dir.sh
export SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
if [ "${CHECK_PROFILE:-0}" = 1 ]; then
    export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
        CARGO_PROFILE_RELEASE_OPT_LEVEL=1
fi
if [ "$architecture" = arm64 ]; then
    rustup target add aarch64-unknown-linux-gnu >/dev/null
fi

rm -rf "$build_dir"
sam build --template-file template.yaml --parameter-overrides "Architecture=$architecture" \
    --build-dir "$build_dir" --cache-dir "$cache/sam-cache-$architecture" \
    --beta-features --parallel

# Every function of the template, by its logical id: SAM puts each one's bootstrap in a folder
# of that name.
functions=$(python3 - <<'PY'
import re
with open("template.yaml") as template:
    text = template.read()
for name, body in re.findall(r"^  (\w+):\n((?:    .*\n|\n)+)", text, re.M):
    if "Type: AWS::Serverless::Function" in body:
        print(name)
PY
)
[ -n "$functions" ] || { echo "no function found in template.yaml" >&2; exit 1; }
failed=0
for function in $functions; do
    bootstrap="$build_dir/$function/bootstrap"
    if [ ! -x "$bootstrap" ]; then
        echo "missing: $bootstrap" >&2
        failed=1
    elif ! file -b "$bootstrap" | grep -q "ELF 64-bit.*$machine"; then
        echo "not an $architecture executable: $bootstrap: $(file -b "$bootstrap")" >&2
        failed=1
    else
        printf '%-26s %s  %s\n' "$function" "$(du -h "$bootstrap" | cut -f1)" "$(file -b "$bootstrap" | cut -d, -f1-2)"
    fi
done
exit "$failed"
