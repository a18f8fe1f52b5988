#!/usr/bin/env bash
# Throughput and latency of local-api (release) against a bare axum server answering a fixed
# JSON body, same machine, same load tool (wrk) and concurrency, in one run.
# Usage: bench/throughput.sh [seconds per run, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
duration="${1:-10}"
brands=50000
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }

cargo build --release --locked -p local-api --bin local-api --example fixed_json
target="$CARGO_TARGET_DIR/release"
work=$(mktemp -d)
python3 bench/seed.py "$brands" "$work/seed.json"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
base_port=$(free_port)
api_port=$(free_port)
"$target/examples/fixed_json" "127.0.0.1:$base_port" > /dev/null &
baseline_pid=$!
STORE=memory "$target/local-api" --addr "127.0.0.1:$api_port" --seed "$work/seed.json" > "$work/api.log" 2>&1 &
api=$!
trap 'kill $baseline_pid $api 2>/dev/null; rm -rf "$work"' EXIT
for port in "$base_port" "$api_port"; do
    for _ in $(seq 1 200); do
        python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/api/v1/')" 2>/dev/null && break
        sleep 0.1
    done
done

run() { # name url kind [seconds]
    BENCH_BRANDS=$brands BENCH_KIND="$3" wrk -t1 -c32 -d"${4:-$duration}s" --latency -s bench/requests.lua "$2" | grep '^rps=' | sed "s/^/$1 /"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), wrk -t1 -c32 -d${duration}s"
baseline=$(run baseline_fixed_json "http://127.0.0.1:$base_port" get)
echo "$baseline"
get=$(run get_stream "http://127.0.0.1:$api_port" get)
echo "$get"
ratio() { echo "$1" | sed -E 's/.*rps=([0-9]+).*/\1/'; }
echo "get_stream / baseline: $(echo "scale=2; $(ratio "$get") / $(ratio "$baseline")" | bc)"
run list_streams "http://127.0.0.1:$api_port" list
run analytics_30d "http://127.0.0.1:$api_port" analytics
# Starts are kept short: each brand may hold 3 active streams, and ~2 s at this rate starts
# about 2 per brand.
run start_stream_test_key "http://127.0.0.1:$api_port" start 2
echo "local-api peak RSS (embedded store holding every seeded and created stream): $(grep VmHWM /proc/$api/status | awk '{print $2, $3}')"
