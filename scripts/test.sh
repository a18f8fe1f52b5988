#!/usr/bin/env bash
# Runs every test: unit tests and the HTTP-level suite on the embedded backends, then the same
# HTTP-level suite on DynamoDB and SQS served by moto behind the fault-injecting proxy
# (scripts/aws/fault_proxy.py: the AWS behaviours moto lacks). Beside that DynamoDB pass, at the
# lowest CPU priority: schemathesis against the local server and its OpenAPI document, the
# generated clients, the reference page and the console (in headless Chromium; the console on
# moto too) and the example receivers against the local server, and the check that scripts/dev-aws.sh starts the local server on
# moto in one command; then the API under `sam local start-api` (its Docker engine installed and
# started where missing) compared with the local server. Installs what it needs (Python virtualenvs under ~/.cache, made beside
# the first build), starts the moto servers and their proxies and stops them on exit. Extra
# arguments go to every cargo test run (before their `--`).
#
# Tests that need something a plain `cargo test` lacks are `#[ignore]`d with the reason, and
# run here: those needing the signature verifiers in both stages, those named `dynamodb_only_`
# in the DynamoDB stage, those named `popular_show_` alone in each stage.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-dir.sh

# What the stages need beyond Rust, checked before the first build so a missing one stops the
# run at once: installed from Debian's packages where possible, else named with how to get it.
. scripts/lib/prerequisites.sh
need python3 python3 "the virtualenvs of moto, the verifiers and schemathesis"
python3 -c 'import venv, ensurepip' 2> /dev/null || {
    echo "missing: python3's venv module (Debian, Ubuntu: sudo apt-get install python3-venv)" >&2
    exit 1
}
need curl curl "the checks against the local server"
# The AWS clients' TLS test (shared/aws/tests/trust.rs) makes its certificates with it.
need openssl openssl "the AWS clients' TLS test"
need npm npm "the TypeScript client's tests (Node.js 18+)"
need chromium chromium "the reference page's and the console's tests in a headless browser"

# Every log of the run (the tests' output, moto's, the proxy's) goes to one folder: removed
# when the run passes, kept and named when it fails.
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/live-stream-hosting-api-test.XXXXXX")
log="$run_dir/tests.log"
pids=()
started=$SECONDS
# A background process and everything it started (a stage's local server, a browser, a test
# binary), children first.
kill_tree() {
    local child
    for child in $(pgrep -P "$1"); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
}
cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill_tree "$pid"; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ "$status" = 0 ]; then
        rm -rf "$run_dir"
    else
        echo "scripts/test.sh failed; its logs (the tests', moto's, the fault proxy's) are kept in $run_dir" >&2
    fi
}
trap cleanup EXIT

# Announces a stage with the time since the run began.
stage() {
    local elapsed=$((SECONDS - started))
    echo "== $* ($((elapsed / 60)) min $((elapsed % 60)) s into the run)"
}

# The HTTP-level tests mostly wait (on moto, on receivers, on timers), so they run more at once
# than the machine has cores; the timing-sensitive ones run apart, below, as before.
TEST_THREADS=${TEST_THREADS:-8}

# A test pass's output, with a progress line every 30 s (scripts/lib/progress.py).
progress() { python3 scripts/lib/progress.py "$log"; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() {
    for _ in $(seq 1 100); do
        python3 -c "import urllib.request; urllib.request.urlopen(\"$1\")" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "no answer from $1" >&2
    return 1
}

# Runs "$@" in the background at CPU priority $2: `nice` (the lowest, 19), which takes only the
# time the foreground work leaves idle, so the passes it runs beside (and their bounds on the
# wall clock) are not slowed; or `normal`, for work that mostly waits on downloads and disks
# and must be done soon. Its output goes to $run_dir/$1.log; its process id to
# `background_pid`.
in_background() {
    local name=$1 priority=$2
    shift 2
    (
        [ "$priority" = normal ] || renice -n 19 -p "$BASHPID" > /dev/null
        "$@"
    ) > "$run_dir/$name.log" 2>&1 &
    background_pid=$!
    pids+=("$background_pid")
}

# Waits for the background work named $1 (process id $2) and adds its output to the run's.
join_background() {
    wait "$2" || { cat "$run_dir/$1.log"; echo "$1 failed" >&2; exit 1; }
    tee -a "$log" < "$run_dir/$1.log"
}

# The virtualenvs, made while the first build runs (from an empty cache, minutes of downloads
# and installs, which take CPU from the build): the two the first tests need (the signature
# verifiers, FFmpeg's libraries) at normal priority, joined before any test runs; the rest at
# the lowest, done while the first tests run, joined before the DynamoDB stage.
prepare_virtualenvs() {
    local venv
    for venv in "$@"; do
        scripts/lib/venv.sh "$venv" > /dev/null
    done
    echo "virtualenvs $* ready ($(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s into the run)"
}
in_background first-virtualenvs normal prepare_virtualenvs verifiers media
first_virtualenvs_pid=$background_pid
in_background virtualenvs nice prepare_virtualenvs moto schemathesis clients client-tests receiver-python
virtualenvs_pid=$background_pid

# Tests named `popular_show_` measure a rate, and those of `delivery::fair::` a latency, which
# the rest of the suite sharing the machine (and moto) would distort: each stage runs them after
# the rest, the fair-delivery ones one at a time.
stage "every test of the workspace built (the virtualenvs made beside it)"
cargo test --workspace --locked --no-run "$@" 2>&1 | progress
join_background first-virtualenvs "$first_virtualenvs_pid"
# The Stripe and Standard Webhooks libraries that receivers use to verify signatures; FFmpeg's
# libraries (PyAV) that read the clips back.
WEBHOOK_VERIFIER_PYTHON="$(scripts/lib/venv.sh verifiers)/bin/python"
MEDIA_PYTHON="$(scripts/lib/venv.sh media)/bin/python"
export WEBHOOK_VERIFIER_PYTHON MEDIA_PYTHON

stage "embedded backends: every test of the workspace"
TEST_BACKEND=embedded cargo test --workspace --locked "$@" -- --include-ignored --skip dynamodb_only_ \
    --skip popular_show_ --skip delivery::fair:: --test-threads "$TEST_THREADS" 2>&1 | progress
stage "embedded backends: the popular show, alone (it measures a rate)"
TEST_BACKEND=embedded cargo test -p local-api --test api --locked "$@" -- --include-ignored \
    --skip dynamodb_only_ --test-threads 1 popular_show_ 2>&1 | progress
stage "embedded backends: fair delivery, one test at a time (they measure latencies)"
TEST_BACKEND=embedded cargo test -p local-api --test api --locked "$@" -- --include-ignored \
    --skip dynamodb_only_ --test-threads 1 delivery::fair:: 2>&1 | progress

stage "the other virtualenvs (made beside the first tests)"
join_background virtualenvs "$virtualenvs_pid"

# The stages against the local server on the embedded backends mostly wait (on the server, on
# receivers, on downloads and installs from an empty cache), so they run beside the DynamoDB
# pass, which is bound by moto's one core and leaves the other partly idle; at the lowest
# priority, they take none of the pass's time. Joined before the stages that measure rates.
local_server_stages() {
    stage "scripts/dev-aws.sh: the local server on moto in one command"
    scripts/test-dev-aws.sh
    stage "schemathesis against the local server and its OpenAPI document"
    scripts/checks/schemathesis.sh
    stage "generated clients (Python, TypeScript, Rust) against the local server"
    scripts/checks/test-clients.sh
    stage "the reference page in headless Chromium"
    scripts/checks/test-docs-page.sh
    stage "the console in headless Chromium, on the embedded backends and on moto"
    scripts/checks/test-console.sh
    stage "the quickstart and the example webhook receivers against the local server"
    scripts/checks/test-examples.sh
    stage "the local server's stages done"
}
echo "-- beside the DynamoDB stage, at the lowest priority: dev-aws.sh, schemathesis, the generated"
echo "   clients, the reference page, the console and the examples (their output follows that stage's pass)"
in_background local-server-stages nice local_server_stages
local_server_stages_pid=$background_pid

stage "DynamoDB and SQS (moto server behind the fault proxy): every test of the workspace"
moto="$(scripts/lib/venv.sh moto)"
"$moto/bin/python" scripts/aws/fault_proxy_selftest.py

# Starts a moto server and a fault proxy in front of it, logs named after $1, and sets
# `proxy_url` to the proxy's URL.
start_moto() {
    local moto_port proxy_port
    moto_port=$(free_port)
    "$moto/bin/python" scripts/aws/moto_server.py -H 127.0.0.1 -p "$moto_port" > "$run_dir/$1-moto.log" 2>&1 &
    pids+=($!)
    wait_for "http://127.0.0.1:$moto_port/moto-api/"
    proxy_port=$(free_port)
    "$moto/bin/python" scripts/aws/fault_proxy.py --port "$proxy_port" --upstream "http://127.0.0.1:$moto_port" \
        > "$run_dir/$1-fault-proxy.log" 2>&1 &
    pids+=($!)
    wait_for "http://127.0.0.1:$proxy_port/__faults"
    proxy_url="http://127.0.0.1:$proxy_port"
    proxies+=("$proxy_url")
}
proxies=()
export AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing

# Runs the HTTP-level suite's tests named by the arguments after $1 (its test binary, built by
# the embedded stage) in the background, exactly those, on a moto server of its own; its
# output goes to $run_dir/$1.log and its process id to `part_pid`.
run_part() {
    local name=$1
    shift
    start_moto "$name"
    (cd local-api && AWS_ENDPOINT_URL="$proxy_url" FAULT_PROXY_URL="$proxy_url" TEST_BACKEND=dynamodb \
        "$api_tests" --include-ignored --exact --test-threads "$TEST_THREADS" "$@") > "$run_dir/$name.log" 2>&1 &
    part_pid=$!
    pids+=("$part_pid")
}

# Waits for the part named $1 (its process id $2); its output then joins the log.
join_part() {
    wait "$2" || { cat "$run_dir/$1.log"; exit 1; }
    progress < "$run_dir/$1.log"
}

start_moto main
export AWS_ENDPOINT_URL="$proxy_url" FAULT_PROXY_URL="$proxy_url"
if [ $# -gt 0 ]; then
    # A run narrowed by arguments (a package, a test binary, a filter) is one pass, as given.
    TEST_BACKEND=dynamodb cargo test --workspace --locked "$@" -- --include-ignored --skip popular_show_ \
        --skip delivery::fair:: --test-threads "$TEST_THREADS" 2>&1 | progress
else
    api_tests=$(cargo test --workspace --locked --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    target = message.get("target", {})
    if message.get("executable") and target.get("name") == "api" and "local-api" in message["package_id"]:
        print(message["executable"])
')
    [ -n "$api_tests" ] || { echo "no test binary for local-api's tests/api" >&2; exit 1; }
    # The timers' on-time test holds its shows to 2 s on the wall clock: it runs beside the
    # pass on a moto server of its own, so the pass's requests never queue ahead of its
    # timers. It mostly waits (4 minutes for shows two minutes ahead). The pass itself stays
    # on one server: split over two, it saved about a minute of ten and starved the machine's
    # two cores, which made the tests that measure concurrency flaky (BENCHMARKS.md, "The
    # test suite").
    on_time_test=shows::on_time::dynamodb_only_starts_reminders_and_deadlines_fire_within_2_s_of_their_moment
    run_part on-time "$on_time_test"
    on_time_pid=$part_pid
    TEST_BACKEND=dynamodb cargo test --workspace --locked -- --include-ignored --skip popular_show_ \
        --skip delivery::fair:: --skip "$on_time_test" --test-threads "$TEST_THREADS" 2>&1 | progress
    stage "DynamoDB: the timers' on-time test (started with the pass, on its own moto server)"
    join_part on-time "$on_time_pid"
fi
stage "the local server's stages (run beside the DynamoDB pass)"
join_background local-server-stages "$local_server_stages_pid"

stage "DynamoDB: the popular show, alone"
TEST_BACKEND=dynamodb cargo test -p local-api --test api --locked "$@" -- --include-ignored \
    --test-threads 1 popular_show_ 2>&1 | progress
stage "DynamoDB: fair delivery, one test at a time"
TEST_BACKEND=dynamodb cargo test -p local-api --test api --locked "$@" -- --include-ignored \
    --test-threads 1 delivery::fair:: 2>&1 | progress
python3 - "${proxies[@]}" <<'PY'
import collections, json, sys, urllib.request
requests, injected = 0, collections.Counter()
for proxy in sys.argv[1:]:
    totals = json.load(urllib.request.urlopen(proxy + "/__totals"))
    requests += totals["requests"]
    injected.update(totals["injected"])
faults = ", ".join(f"{k} {v}" for k, v in sorted(injected.items()))
print(f"fault proxies: {requests} requests under fault rules; injected: {faults}")
PY

# A run narrowed by arguments is about the tests it names.
if [ $# -eq 0 ]; then
    stage "the API under SAM's emulator (sam local start-api in Docker) against the local server"
    scripts/checks/test-sam-local.sh 2>&1 | tee -a "$log"
fi

# One closing line over both cargo passes.
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' "$log"
stage "done"
