#!/usr/bin/env bash
# A replay from start to file, against the local server: starts a test stream with
# `record: true`, ends it after a few seconds, reads the stream until its recording is `ready`,
# downloads the MP4 from `recording.url`, then cuts a clip of it (seconds 10 to 20) and
# downloads that too (a URL valid for RECORDING_URL_TTL_SECS, made fresh
# on every read; read the stream again for a new one). With test keys the file is a short MP4
# the server ships, under the stream's own key; with live keys it is the show LiveKit's egress
# recorded.
#
# First, in another terminal:
#   scripts/serve.sh --fixed-demo-keys
# Then:
#   examples/replay.sh                 # writes replay-<stream id>.mp4 and clip-<clip id>.mp4 here
#   OUT=/tmp/show.mp4 CLIP_OUT=/tmp/clip.mp4 examples/replay.sh
set -euo pipefail

API=${API:-http://127.0.0.1:3000/api/v1}
KEY=${KEY:-svc_test_demotestkey000000000000000000000}
api() { curl -sS -H "Authorization: Bearer $KEY" "$@"; }
json() { python3 -c 'import json, sys; d = json.load(sys.stdin)
for k in sys.argv[1].split("."): d = d.get(k) if isinstance(d, dict) else None
print("" if d is None else d)' "$1"; }

echo "1. start a recorded test stream"
created=$(api -X POST "$API/streams" \
    -d '{"creator_id":"avt_ava000000001","product_name":"Glow Serum","platform":"tiktok","record":true}')
stream=$(echo "$created" | json stream_id)
[ -n "$stream" ] || { echo "   refused: $created" >&2; exit 1; }
echo "   $stream: recording $(echo "$created" | json recording.status)"

sleep "${SECONDS_LIVE:-3}"
echo "2. end it"
api -X DELETE "$API/streams/$stream" > /dev/null

echo "3. wait for the recording"
for _ in $(seq 1 50); do
    detail=$(api "$API/streams/$stream")
    status=$(echo "$detail" | json recording.status)
    case "$status" in ready | failed | expired) break ;; esac
    sleep 0.2
done
[ "$status" = ready ] || { echo "   recording $status: $(echo "$detail" | json recording.error)" >&2; exit 1; }
echo "   ready: $(echo "$detail" | json recording.duration_seconds) s," \
    "$(echo "$detail" | json recording.size_bytes) bytes, URL valid until $(echo "$detail" | json recording.url_expires_at)"

out=${OUT:-replay-$stream.mp4}
echo "4. download it to $out"
# `ready` means the file is there: one download.
curl -sSf -o "$out" "$(echo "$detail" | json recording.url)" || { echo "   download refused" >&2; exit 1; }
head -c 8 "$out" | tail -c 4 | grep -q ftyp || { echo "   not an MP4" >&2; exit 1; }
echo "   $(wc -c < "$out") bytes, an MP4"

echo "5. cut a clip of it, from 10 s to 20 s"
asked=$(api -X POST "$API/streams/$stream/clips" -d '{"start_seconds":10,"end_seconds":20,"title":"The serum"}')
clip=$(echo "$asked" | json clip_id)
[ -n "$clip" ] || { echo "   refused: $asked" >&2; exit 1; }
echo "   $clip: $(echo "$asked" | json status)"
for _ in $(seq 1 100); do
    shown=$(api "$API/streams/$stream/clips/$clip")
    status=$(echo "$shown" | json status)
    case "$status" in ready | failed) break ;; esac
    sleep 0.1
done
[ "$status" = ready ] || { echo "   clip $status: $(echo "$shown" | json error)" >&2; exit 1; }
clip_out=${CLIP_OUT:-clip-$clip.mp4}
echo "6. download it to $clip_out"
curl -sSf -o "$clip_out" "$(echo "$shown" | json url)" || { echo "   download refused" >&2; exit 1; }
head -c 8 "$clip_out" | tail -c 4 | grep -q ftyp || { echo "   not an MP4" >&2; exit 1; }
echo "   $(wc -c < "$clip_out") bytes, $(echo "$shown" | json duration_seconds) s, an MP4"
