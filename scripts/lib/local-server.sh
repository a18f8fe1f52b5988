# Sourced by the test scripts: the test build's local server (embedded backends) on a free port, in
# the background.
#
#   start_local_server [NAME=value ...] [-- local-api arguments]   (default: --fixed-demo-keys)
#
# sets LOCAL_API (its .../api/v1 base URL) once it answers; stop_local_server stops it. The
# binary is the test build's (`cargo test --workspace --no-run`, with the dev-dependencies'
# features, so a plain `cargo build` would rebuild dozens of crates) in the one build
# directory.

. scripts/build-dir.sh

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_local_server() {
    local vars=() args=() port
    # Built first (a no-op after scripts/test.sh's cargo test), so the wait below is for the
    # start alone.
    cargo test --workspace --locked --no-run --quiet
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
    if [ $# -gt 0 ]; then shift; args=("$@"); else args=(--fixed-demo-keys); fi
    port=$(free_port)
    LOCAL_API_LOG=$(mktemp)
    env STORE=embedded "${vars[@]}" "$CARGO_TARGET_DIR/debug/local-api" \
        --addr "127.0.0.1:$port" "${args[@]}" > "$LOCAL_API_LOG" 2>&1 &
    LOCAL_API_PID=$!
    LOCAL_API="http://127.0.0.1:$port/api/v1"
    for _ in $(seq 1 100); do
        curl -sf "$LOCAL_API/" > /dev/null && return 0
        sleep 0.1
    done
    cat "$LOCAL_API_LOG" >&2
    echo "the local server did not answer" >&2
    return 1
}

stop_local_server() {
    if [ -n "${LOCAL_API_PID:-}" ]; then
        kill "$LOCAL_API_PID" 2>/dev/null || true
        wait "$LOCAL_API_PID" 2>/dev/null || true
    fi
    rm -f "${LOCAL_API_LOG:-}"
}
