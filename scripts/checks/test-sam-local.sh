#!/usr/bin/env bash
# Usage: scripts/checks/test-sam-local.sh
#
# The API under SAM's own emulator against the local server: scripts/sam-local.sh started (its
# Docker engine, runtime image and moto), then the per-endpoint smoke set
# (scripts/checks/sam_local_smoke.py) sent through `sam local start-api` and through the test
# build's local server, compared answer by answer. Uses the SAM build already made
# (scripts/sam-build.sh, which CI runs first), building it when there is none.
#
# Where Docker cannot run (no engine, and none can be installed or started), it says why and
# exits 0: skipped, visibly.
set -euo pipefail
cd "$(dirname "$0")/../.."

. scripts/lib/docker.sh
logs=$(mktemp -d "${TMPDIR:-/tmp}/test-sam-local.XXXXXX")
if ! ensure_docker "$logs/dockerd.log"; then
    echo "SKIPPED: sam local needs a Docker engine: $docker_unavailable"
    exit 0
fi
# The engine stays for sam-local.sh, which stops only what it started itself.
trap 'stop_docker' EXIT

cache="${XDG_CACHE_HOME:-$HOME/.cache}/live-stream-hosting-api"
if [ ! -f "$cache/sam-build-x86_64/template.yaml" ]; then
    CHECK_PROFILE=1 scripts/sam-build.sh x86_64
fi

. scripts/lib/local-server.sh
sam_port=$(free_port)
moto_port=$(free_port)
started=$SECONDS
SAM_LOCAL_PREBUILT=1 SAM_PORT="$sam_port" MOTO_PORT="$moto_port" SAM_LOCAL_LOGS="$logs" \
    scripts/sam-local.sh > "$logs/sam-local.log" 2>&1 &
sam_pid=$!
stop_all() {
    kill -TERM "$sam_pid" 2> /dev/null || true
    wait "$sam_pid" 2> /dev/null || true
    stop_local_server
    stop_docker
}
trap stop_all EXIT

sam_api="http://127.0.0.1:$sam_port/api/v1"
for _ in $(seq 1 600); do
    curl -sf "$sam_api/" > /dev/null && break
    if ! kill -0 "$sam_pid" 2> /dev/null; then
        cat "$logs/sam-local.log" >&2
        echo "scripts/sam-local.sh stopped before answering" >&2
        exit 1
    fi
    sleep 0.5
done
curl -sf "$sam_api/" > /dev/null || {
    cat "$logs/sam-local.log" >&2
    echo "no answer through sam local start-api" >&2
    exit 1
}
echo "sam local start-api answered $((SECONDS - started)) s after scripts/sam-local.sh started"

start_local_server
if ! python3 scripts/checks/sam_local_smoke.py "$sam_api" "$LOCAL_API"; then
    tail -n 100 "$logs/sam-local.log" >&2
    exit 1
fi
# The README's block, its background work (the outbox relay, the delivery, the clip's cut)
# done by the functions the triggers invoke.
if ! python3 scripts/checks/sam_local_try_it.py "$sam_api"; then
    tail -n 60 "$logs/triggers.log" >&2
    tail -n 60 "$logs/sam-local.log" >&2
    exit 1
fi
# From here each background function is invoked by hand on data of its own: the triggers
# would act on it first.
kill -TERM "$(cat "$logs/triggers.pid")"

# The background functions, each through `sam local invoke` with its sample event of events/,
# on the same moto: the sample data loaded (events/seed.json), then each function's answer,
# and the timers function's effect read back through the API.
echo "-- the background functions through sam local invoke"
. scripts/build-dir.sh
gateway=$(docker_bridge_gateway)
export AWS_ENDPOINT_URL="http://$gateway:$moto_port" AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=testing \
    AWS_SECRET_ACCESS_KEY=testing SAM_CLI_TELEMETRY=0
TABLE_NAME=$(python3 -c 'import json; print(json.load(open("events/local-env.json"))["Parameters"]["TABLE_NAME"])') \
    "$CARGO_TARGET_DIR/debug/admin" load-seed events/seed.json
sam="$(scripts/lib/venv.sh sam)/bin/sam"
image=$(scripts/lib/local-runtime-image.sh)
# The LiveKit webhook function with the sample event's credentials: its key, and its secret in
# an SSM parameter of moto's, as Lambda reads it.
livekit_secret=/live-stream-hosting/local/livekit-api-secret
"$(scripts/lib/venv.sh moto)/bin/python" - "$livekit_secret" <<'PY'
import sys
import boto3
boto3.client("ssm").put_parameter(Name=sys.argv[1], Type="SecureString", Overwrite=True,
                                  Value="sample-livekit-secret-for-local-events-only")
PY
python3 - "$logs/env-vars.json" "$logs/env-vars-livekit.json" "$livekit_secret" <<'PY'
import json, sys
env = json.load(open(sys.argv[1]))
env["Parameters"].update({"LIVEKIT_URL": "http://host.docker.internal:9",
                          "LIVEKIT_API_KEY": "APIsample",
                          "LIVEKIT_API_SECRET_PARAMETER": sys.argv[3]})
json.dump(env, open(sys.argv[2], "w"))
PY
invoke() {
    local function=$1 event=$2 expected=$3 env_vars=${4:-$logs/env-vars.json} answer began took
    began=$EPOCHREALTIME
    answer=$("$sam" local invoke "$function" --template "$cache/sam-build-x86_64/template.yaml" \
        --event "events/$event" --env-vars "$env_vars" \
        --parameter-overrides "Architecture=x86_64 EmulatorEndpointUrl=$AWS_ENDPOINT_URL" \
        --add-host host.docker.internal:host-gateway --invoke-image "$image" --skip-pull-image \
        2> "$logs/invoke.log" | tail -n 1)
    # shellcheck disable=SC2053 # $expected is a pattern
    if [[ "$answer" != $expected ]]; then
        tail -n 20 "$logs/invoke.log" >&2
        echo "FAIL sam local invoke $function -e events/$event: $answer (expected $expected)" >&2
        exit 1
    fi
    # Each invoke starts a container of its own: this is a cold container's time, from the
    # command to its answer.
    took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" \
        "$began" "$EPOCHREALTIME")
    echo "ok   $function events/$event: $answer (a cold container: $took s)"
}
# A sample stream as the API shows it must match the pattern $2.
stream_is() {
    local detail
    detail=$(curl -s -H "Authorization: Bearer svc_test_SamLocalSampleKey000000000000000" \
        "$sam_api/streams/$1")
    case "$detail" in
        $2) echo "ok   its stream: $3" ;;
        *) echo "FAIL the stream $1, not $3: $detail" >&2; exit 1 ;;
    esac
}
# The host's join of the preparing sample stream: live.
invoke LiveKitWebhookFunction livekit-webhook.json '*"statusCode": 200*' "$logs/env-vars-livekit.json"
stream_is 5a1e0000-0000-4000-8000-000000000002 '*"status":"live"*' "live"
# The live sample stream's deadline passed long ago: ended at it.
invoke TimersFunction timers-egress-owed.json '{"changed": 1}'
stream_is 5a1e0000-0000-4000-8000-000000000001 '*"status":"ended"*"end_reason":"duration_elapsed"*' \
    "ended, duration_elapsed"
# A preparing timeout of a stream now live changes nothing.
invoke TimersFunction timers-preparing-timeout.json '{"changed": 0}'
invoke DeliveryFunction delivery-sqs-batch.json '{"batchItemFailures": []}'
invoke ClipsFunction clips-sqs-batch.json '{"batchItemFailures": []}'
invoke OutboxRelayFunction outbox-relay-dynamodb-stream.json '{"relayed": 0}'
rm -rf "$logs"
