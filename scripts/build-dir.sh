# The project's one build directory, sourced by every script that runs cargo:
#
#   $CARGO_TARGET_DIR when set, else ~/.cache/live-stream-hosting-api/target
#   (under $XDG_CACHE_HOME instead of ~/.cache when that is set)
#
# It lives outside the clone, beside the scripts' other caches (virtualenvs, tools), so every
# clone of the project (CI's fresh clones included) shares one build: a second clone rebuilds
# only the workspace's own crates. Sourcing this file exports the variable, so plain cargo
# commands in the same shell share the build too:
#
#   . scripts/build-dir.sh && cargo test -p hosting-app
#
# Exported as an absolute path, so cargo commands run from another directory (the Rust
# client's own workspace under clients/rust, `cargo install` of a tool, SAM's cargo-lambda)
# build into it as well.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api/target}"
mkdir -p "$CARGO_TARGET_DIR"
CARGO_TARGET_DIR="$(cd "$CARGO_TARGET_DIR" && pwd -P)"
export CARGO_TARGET_DIR

# Cargo names a workspace crate's build by its path inside the workspace, not by the clone, and
# judges it up to date by its sources' times. So, with one build for every clone, a crate built
# from another clone would look current here whenever this clone's sources are older, and the
# other clone's code would be linked. A clone that is not the one that built last therefore makes
# its tracked files newer than any build (a second clone still rebuilds only the workspace's own
# crates; the dependencies are shared as before).
build_dir_checkout="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd -P)"
if [ "$(cat "$CARGO_TARGET_DIR/.last-checkout" 2>/dev/null)" != "$build_dir_checkout" ]; then
    (cd "$build_dir_checkout" && git ls-files -z 2>/dev/null | xargs -0 -r touch -c)
    printf '%s\n' "$build_dir_checkout" > "$CARGO_TARGET_DIR/.last-checkout"
fi
unset build_dir_checkout
