#!/usr/bin/env bash
# Throughput and latency of local-api (release, embedded store) against a bare axum server
# answering a fixed JSON body, on the same machine with the same load (wrk, 1 thread,
# 32 connections). The machine is noisy, so runs are interleaved: each round measures
# bare, get, bare, list, bare, analytics, bare, and each read's ratio is taken against the
# mean of the bare runs on either side of it. The report gives each read's median ratio over
# the rounds, with every round's ratio.
# Usage: bench/throughput.sh [seconds per run, default 5] [rounds, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
. bench/servers.sh
duration="${1:-5}"
rounds="${2:-3}"
brands=60000
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }

cargo build --release --locked -p local-api --bin local-api --example fixed_json
target="$CARGO_TARGET_DIR/release"
work=$(mktemp -d)
python3 bench/seed.py "$brands" "$work/seed.json"

base_port=$(free_port)
api_port=$(free_port)
"$target/examples/fixed_json" "127.0.0.1:$base_port" > /dev/null &
baseline_pid=$!
STORE=embedded "$target/local-api" --addr "127.0.0.1:$api_port" --seed "$work/seed.json" > "$work/api.log" 2>&1 &
api=$!
trap 'kill $baseline_pid $api 2>/dev/null; rm -rf "$work"' EXIT
wait_for "$base_port"
wait_for "$api_port"

# One wrk run: prints "rps=... p50_ms=... p99_ms=... non2xx_or_errors=...".
run() { # port kind seconds
    BENCH_BRANDS=$brands BENCH_KIND="$2" wrk -t1 -c32 -d"$3s" --latency -s bench/requests.lua \
        "http://127.0.0.1:$1" | grep '^rps='
}
rps() { echo "$1" | sed -E 's/.*rps=([0-9]+).*/\1/'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), wrk -t1 -c32 -d${duration}s, $rounds rounds"
# Warm both servers (caches, allocator, page faults) before anything is measured.
run "$base_port" get 2 > /dev/null
run "$api_port" get 2 > /dev/null
declare -A ratios
for round in $(seq 1 "$rounds"); do
    before=$(run "$base_port" get "$duration")
    echo "round $round bare       $before"
    for kind in get list analytics; do
        line=$(run "$api_port" "$kind" "$duration")
        after=$(run "$base_port" get "$duration")
        ratio=$(echo "scale=3; 2 * $(rps "$line") / ($(rps "$before") + $(rps "$after"))" | bc)
        echo "round $round $(printf '%-10s' "$kind") $line ratio=$ratio"
        echo "round $round bare       $after"
        ratios[$kind]="${ratios[$kind]:-} $ratio"
        before=$after
    done
done
echo
echo "| request | median ratio to bare axum | rounds |"
echo "|---|---|---|"
for kind in get list analytics; do
    median=$(echo "${ratios[$kind]}" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
    echo "| $kind | $median | $(echo "${ratios[$kind]}" | xargs | sed 's/ /, /g') |"
done
# Starts are kept short and run last: each brand may hold 3 active streams, and ~2 s at this
# rate starts about 2 per brand.
echo
echo "start (test key, 2 s): $(run "$api_port" start 2)"
echo "local-api peak RSS (embedded store holding every seeded and created stream): $(grep VmHWM /proc/$api/status | awk '{print $2, $3}')"
