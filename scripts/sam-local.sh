#!/usr/bin/env bash
# The API under SAM's own emulator, `sam local start-api`, on a fresh machine, in one command:
#
#   scripts/sam-local.sh [more sam local start-api arguments]
#
# Each function's Lambda bootstrap runs in a container behind SAM's API Gateway emulator, with
# the Runtime Interface Emulator that SAM ships; the store and queues are moto's, on this machine.
# What it does, each step said as it starts:
#   1. Docker: installs Debian's docker.io where dockerd is missing, starts dockerd where no
#      engine answers (and stops what it started on exit).
#   2. SAM, into the project's cached virtualenv, and `sam build` of every function
#      (scripts/sam-build.sh; SAM_LOCAL_PREBUILT=1 uses the build already made).
#   3. The local runtime image that stands in for `provided.al2023`, which cannot be pulled
#      here (scripts/lib/local-runtime-image.sh), made once per recipe.
#   4. moto on Docker's bridge address (the host as containers see it; nothing else listens),
#      port $MOTO_PORT (default 5000): the table, its secrets key, the queues and the
#      recordings bucket of events/local-env.json, and the demo brand with its fixed keys.
#   5. The background functions' triggers: `sam local start-lambda` on 127.0.0.1:$LAMBDA_PORT
#      (default 3002) and scripts/aws/sam_local_triggers.py, which invokes them through it as
#      Lambda's event source mappings and schedules would (the template's SQS queues, the
#      table's stream, its rate schedules).
#   6. `sam local start-api` on 127.0.0.1:$SAM_PORT (default 3001), with the variables of
#      events/local-env.json and warm containers (EAGER: every function's container starts
#      first, so no request waits for one).
# Ctrl-C stops everything it started. Logs (dockerd's, moto's) go to $SAM_LOCAL_LOGS (default:
# a new folder in $TMPDIR or /tmp, named at the start).
set -euo pipefail
cd "$(dirname "$0")/.."

sam_port="${SAM_PORT:-3001}"
lambda_port="${LAMBDA_PORT:-3002}"
moto_port="${MOTO_PORT:-5000}"
logs="${SAM_LOCAL_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/sam-local.XXXXXX")}"
mkdir -p "$logs"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api"
env_file=events/local-env.json

. scripts/lib/docker.sh
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null || true; done
    # SAM removes its containers when it stops; any its stop left behind go now.
    if docker_answers; then
        docker ps -aq --filter "label=sam.cli.container.type" | xargs -r docker rm -f > /dev/null 2>&1 || true
    fi
    stop_docker
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step() { echo "== $*"; }

echo "logs (dockerd's, moto's, start-lambda's, the triggers', the variables file env-vars.json): $logs"
step "Docker"
ensure_docker "$logs/dockerd.log" || { echo "sam local needs Docker: $docker_unavailable" >&2; exit 1; }

step "SAM and the functions' build"
sam=$(scripts/lib/venv.sh sam)
if [ -z "${SAM_LOCAL_PREBUILT:-}" ]; then
    CHECK_PROFILE="${CHECK_PROFILE:-1}" scripts/sam-build.sh x86_64
fi
built="$cache/sam-build-x86_64"
[ -f "$built/template.yaml" ] || { echo "no build in $built: run scripts/sam-build.sh x86_64" >&2; exit 1; }

step "the local runtime image (provided.al2023's stand-in)"
image=$(scripts/lib/local-runtime-image.sh)
echo "$image"

step "moto, with the table, queues, bucket and demo keys"
gateway=$(docker_bridge_gateway)
if python3 -c "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1)" \
    "$gateway" "$moto_port" 2> /dev/null; then
    echo "port $moto_port is taken on $gateway; set MOTO_PORT to a free one" >&2
    exit 1
fi
moto=$(scripts/lib/venv.sh moto)
"$moto/bin/python" scripts/aws/moto_server.py -H "$gateway" -p "$moto_port" > "$logs/moto.log" 2>&1 &
pids+=($!)
endpoint="http://$gateway:$moto_port"
for _ in $(seq 1 100); do
    python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1])" \
        "$endpoint/moto-api/" 2> /dev/null && break
    sleep 0.1
done
setting() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["Parameters"][sys.argv[2]])' \
        "$env_file" "$1"
}
export AWS_ENDPOINT_URL="$endpoint" AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing SAM_CLI_TELEMETRY=0
export TABLE_NAME
TABLE_NAME=$(setting TABLE_NAME)
. scripts/build-dir.sh
cargo build --quiet -p admin
admin="$CARGO_TARGET_DIR/debug/admin"
"$admin" create-table
"$moto/bin/python" - "$(setting RECORDINGS_BUCKET)" "$(setting DELIVERY_QUEUE_URL)" \
    "$(setting DELIVERY_DLQ_URL)" "$(setting TIMER_QUEUE_URL)" "$(setting CLIPS_QUEUE_URL)" <<'PY'
import sys
import boto3
boto3.client("s3").create_bucket(Bucket=sys.argv[1])
for url in sys.argv[2:]:
    boto3.client("sqs").create_queue(QueueName=url.rsplit("/", 1)[1])
PY
"$admin" load-demo --fixed-keys

# The variables of events/local-env.json, pointed at this moto by the bridge's address, which
# the containers and this machine both reach: a recording's or clip's download URL, signed in
# a container, opens here too.
env_vars="$logs/env-vars.json"
sed "s#host.docker.internal:5000#$gateway:$moto_port#g" "$env_file" > "$env_vars"
sam_options=(--template "$built/template.yaml" --env-vars "$env_vars"
    --parameter-overrides "Architecture=x86_64 EmulatorEndpointUrl=$endpoint"
    --add-host "host.docker.internal:host-gateway"
    --invoke-image "$image" --skip-pull-image --warm-containers EAGER --host 127.0.0.1)

step "the background functions' triggers, through sam local start-lambda on 127.0.0.1:$lambda_port"
"$sam/bin/sam" local start-lambda "${sam_options[@]}" --port "$lambda_port" \
    > "$logs/start-lambda.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
    curl -s -o /dev/null "http://127.0.0.1:$lambda_port/" && break
    kill -0 "${pids[-1]}" 2> /dev/null || { cat "$logs/start-lambda.log" >&2; exit 1; }
    sleep 0.2
done
"$sam/bin/python" scripts/aws/sam_local_triggers.py "$built/template.yaml" "$env_vars" \
    "http://127.0.0.1:$lambda_port" > "$logs/triggers.log" 2>&1 &
pids+=($!)
echo $! > "$logs/triggers.pid"
echo "their invocations: $logs/triggers.log"

step "sam local start-api on http://127.0.0.1:$sam_port/api/v1/"
"$sam/bin/sam" local start-api "${sam_options[@]}" --port "$sam_port" "$@" &
pids+=($!)
wait "${pids[-1]}"
