#!/usr/bin/env bash
# What one request costs, local-api (embedded store) beside the bare axum server of
# bench/throughput.sh, under the same load (60,000 brands, wrk -t1 -c32):
#   cpu       server CPU time per request (utime + stime of the process over a run)
#   syscalls  system calls per request, by name (strace -c; needs strace)
#   caches    instructions and simulated L1/LL cache misses per request (valgrind callgrind
#             --cache-sim=yes, user space only; needs valgrind, and takes about 20 minutes:
#             the seed loads under valgrind)
# Usage: bench/per_request.sh cpu|syscalls|caches [get|list|analytics, default get]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh
. bench/servers.sh
what="${1:?cpu, syscalls or caches}"
kind="${2:-get}"
brands=60000
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }

cargo build --profile profiling --locked -p local-api --bin local-api --example fixed_json
target="$CARGO_TARGET_DIR/profiling"
work=$(mktemp -d)
python3 bench/seed.py "$brands" "$work/seed.json"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
load() { # port kind seconds connections -> requests answered
    BENCH_BRANDS=$brands BENCH_KIND="$2" wrk -t1 -c"$4" -d"$3s" -s bench/requests.lua \
        "http://127.0.0.1:$1" | grep -oE '^ +[0-9]+ requests' | awk '{print $1}'
}
# Starts both servers, prefixed by $1 (empty, or a valgrind command line); sets api/bare.
start() {
    api_port=$(free_port)
    bare_port=$(free_port)
    # shellcheck disable=SC2086
    $1 "$target/examples/fixed_json" "127.0.0.1:$bare_port" > /dev/null 2>&1 &
    bare=$!
    pids+=("$bare")
    # shellcheck disable=SC2086
    STORE=embedded $2 "$target/local-api" --addr "127.0.0.1:$api_port" --seed "$work/seed.json" > "$work/api.log" 2>&1 &
    api=$!
    pids+=("$api")
    wait_for "$bare_port"
    wait_for "$api_port"
}

case "$what" in
cpu)
    start "" ""
    cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
    for round in 1 2 3; do
        for server in "bare $bare $bare_port get" "api $api $api_port $kind"; do
            set -- $server
            load "$3" "$4" 2 32 > /dev/null
            before=$(cpu "$2")
            requests=$(load "$3" "$4" 5 32)
            after=$(cpu "$2")
            # Clock ticks are hundredths of a second.
            echo "round $round $1 $4: $requests requests, $(echo "scale=1; ($after - $before) * 10000 / $requests" | bc) us of server CPU each"
        done
    done
    ;;
syscalls)
    command -v strace >/dev/null || { echo "strace is required (apt-get install strace)"; exit 1; }
    start "" ""
    for server in "bare $bare $bare_port get" "api $api $api_port $kind"; do
        set -- $server
        timeout 7 strace -c -f -p "$2" -o "$work/strace-$1" 2>/dev/null &
        tracer=$!
        sleep 1
        requests=$(load "$3" "$4" 4 32)
        wait "$tracer" || true
        echo "$1 $4 ($requests requests): system calls per request"
        awk -v n="$requests" '$1 ~ /^[0-9.]+$/ && NF >= 5 { printf "  %-14s %.3f\n", $NF, $4 / n }' \
            "$work/strace-$1" | sort -k2 -rn | head -8
    done
    ;;
caches)
    command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)"; exit 1; }
    start "valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=$work/bare.out" \
        "valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=$work/api.out"
    for server in "bare $bare $bare_port get" "api $api $api_port $kind"; do
        set -- $server
        load "$3" "$4" 3 4 > /dev/null
        callgrind_control -z "$2" > /dev/null
        requests=$(load "$3" "$4" 8 4)
        callgrind_control -d "$2" > /dev/null
        sleep 1
        dump=$(ls -t "$work/$1.out".* | head -1)
        echo "$1 $4 ($requests requests), per request:"
        awk -v n="$requests" '/^events:/ { for (i = 2; i <= NF; i++) name[i] = $i }
            /^summary:/ { for (i = 2; i <= NF; i++) printf "  %-5s %d\n", name[i], $i / n }' "$dump"
    done
    ;;
*)
    echo "cpu, syscalls or caches"; exit 2 ;;
esac
