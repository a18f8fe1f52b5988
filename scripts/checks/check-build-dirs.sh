#!/usr/bin/env bash
# Usage: scripts/checks/check-build-dirs.sh STAMP | --self-test
#
# Fails when cargo built anywhere but the project's one build directory (scripts/build-dir.sh)
# since STAMP (a file made before the builds): a build directory inside the clone (cargo's
# default `target/`, say, or one of the Rust client's own), or one under ~/.cache or the
# temporary directory that was made or written to after STAMP. cargo keeps its rustc
# information in `.rustc_info.json` at the top of every build directory it uses, which is
# what this looks for.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = --self-test ]; then
    # A build directory made inside the clone after the stamp must be reported.
    probe=$(mktemp -d "$(pwd -P)/.build-dir-probe.XXXXXX")
    trap 'rm -rf "$probe"' EXIT
    touch "$probe/stamp"
    mkdir "$probe/target"
    echo '{}' > "$probe/target/.rustc_info.json"
    if "$0" "$probe/stamp" > /dev/null 2>&1; then
        echo "check-build-dirs.sh missed a build directory inside the clone" >&2
        exit 1
    fi
    echo "check-build-dirs.sh self-test: a stray build directory is reported"
    exit 0
fi
stamp="$1"
. scripts/build-dir.sh
clone=$(pwd -P)

stray=()
while IFS= read -r tag; do
    dir=$(cd "$(dirname "$tag")" && pwd -P)
    [ "$dir" = "$CARGO_TARGET_DIR" ] && continue
    case "$dir" in
    "$clone"/*) stray+=("$dir (inside the clone)") ;;
    *)
        if [ -n "$(find "$dir" -newer "$stamp" -print -quit 2>/dev/null)" ]; then
            stray+=("$dir")
        fi
        ;;
    esac
done < <(find "$clone" "${XDG_CACHE_HOME:-$HOME/.cache}" "${TMPDIR:-/tmp}" \
    -path "$CARGO_TARGET_DIR" -prune -o -name .rustc_info.json -print 2>/dev/null | sort -u)

if [ "${#stray[@]}" -gt 0 ]; then
    echo "cargo built outside the one build directory $CARGO_TARGET_DIR (scripts/build-dir.sh):" >&2
    printf '  %s\n' "${stray[@]}" >&2
    exit 1
fi
echo "every build went to $CARGO_TARGET_DIR"
