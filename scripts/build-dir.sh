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
#   . scripts/build-dir.sh && cargo test -p shared
#
# Exported as an absolute path, so cargo commands run from another directory (the Rust
# client's own workspace under clients/rust, `cargo install` of a tool, SAM's cargo-lambda)
# build into it as well.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api/target}"
mkdir -p "$CARGO_TARGET_DIR"
CARGO_TARGET_DIR="$(cd "$CARGO_TARGET_DIR" && pwd -P)"
export CARGO_TARGET_DIR
