# Sourced by the scripts that build the Rust client and its generator: each builds in a build
# directory of its own inside the project's one (scripts/build-dir.sh), so it can build at the
# same time as the workspace (cargo locks a build directory while it builds in it), as
# scripts/test.sh does while the workspace's first build runs.
#
#   oas3_gen          prints the path of oas3-gen, installing it under ~/.cache on first use
#   rust_client_cargo cargo, building in the Rust client's own build directory
#
# The Rust client's dependencies are built with other features than the workspace's, so
# sharing the workspace's directory saved nothing.

. scripts/build-dir.sh

# Pinned to the version of the support crate clients/rust depends on.
OAS3_GEN_VERSION=0.29.0

oas3_gen() {
    local tools="${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api/tools/oas3-gen-$OAS3_GEN_VERSION"
    if [ ! -x "$tools/bin/oas3-gen" ]; then
        echo "installing oas3-gen $OAS3_GEN_VERSION under $tools (once)" >&2
        # A debug build: it runs for a second on one document, and builds in about half the time.
        CARGO_TARGET_DIR="$CARGO_TARGET_DIR/tools" cargo install --quiet --locked --debug \
            --root "$tools" --version "$OAS3_GEN_VERSION" oas3-gen
    fi
    echo "$tools/bin/oas3-gen"
}

rust_client_cargo() {
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR/rust-client" cargo "$@"
}
