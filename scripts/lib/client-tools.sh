# Sourced by the scripts that need oas3-gen, the Rust client's generator:
#
#   oas3_gen    prints its path, installing it under ~/.cache on first use (a debug build:
#               it runs for a second on one document, and builds in about half the time)

. scripts/build-dir.sh

# Pinned to the version of the support crate clients/rust depends on.
OAS3_GEN_VERSION=0.29.0

oas3_gen() {
    local tools="${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api/tools/oas3-gen-$OAS3_GEN_VERSION"
    if [ ! -x "$tools/bin/oas3-gen" ]; then
        echo "installing oas3-gen $OAS3_GEN_VERSION under $tools (once)" >&2
        cargo install --quiet --locked --debug --root "$tools" --version "$OAS3_GEN_VERSION" oas3-gen
    fi
    echo "$tools/bin/oas3-gen"
}
