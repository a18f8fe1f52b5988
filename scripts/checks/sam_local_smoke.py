#!/usr/bin/env python3
"""The per-endpoint smoke set, through `sam local start-api` and through the local server,
compared answer by answer.

    sam_local_smoke.py SAM_BASE LOCAL_BASE      (each e.g. http://127.0.0.1:3001/api/v1)

One request per route and method of template.yaml, and the error envelope of an unknown route,
a trailing slash, a wrong method and a missing key, sent to both in the same order with the
same demo test key (`--fixed-demo-keys`; scripts/sam-local.sh loads the same keys). For each:
the status, the body's shape (its fields and their JSON types, recursively; the values of the
fields named in SAME_VALUES too) and the headers that matter (`RateLimit`, `RateLimit-Policy`,
`Location`, `Cache-Control`, `Content-Security-Policy`, `Content-Type`) must agree. Ids an answer
names (a stream's, a webhook's) are taken from each server's own answers. Prints one line per
request and the median time of a request through each; exits 1 when any answer differs.
"""

import json
import re
import statistics
import sys
import time
import urllib.error
import urllib.request

KEY = "svc_test_demotestkey000000000000000000000"
HEADERS = (
    "ratelimit",
    "ratelimit-policy",
    "location",
    "cache-control",
    "content-security-policy",
    "content-type",
)
# Fields whose values, not only their types, must agree.
SAME_VALUES = {"status", "code", "end_reason", "platform", "test", "event", "type"}
# Set by the first failed delivery to the smoke's unreachable receiver, which each server's
# background work reaches at its own moment: a time or null on either side.
SET_WHEN_DELIVERED = {"failing_since"}


def call(base, method, path, body=None, key=KEY, headers=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, raw, got = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, raw, got = error.code, error.read(), error.headers
    took = time.monotonic() - started
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = {"<text>": len(raw) > 0}
    kept = {name: got.get(name) for name in HEADERS if got.get(name) is not None}
    return status, parsed, kept, took


def shape(value, name=None):
    """A value's fields and JSON types, recursively; a list by its first item."""
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if name in SAME_VALUES:
        return value
    if name in SET_WHEN_DELIVERED and (value is None or isinstance(value, str)):
        return "str or None"
    return type(value).__name__


def comparable(headers):
    """Headers as compared: counts and times in `RateLimit` vary with the moment."""
    out = dict(headers)
    if "ratelimit" in out:
        out["ratelimit"] = re.sub(r"\d+", "N", out["ratelimit"])
    if "content-security-policy" in out:
        # The console may play recordings from their store's origin (S3 on AWS, `media-src`;
        # the API's own locally, no directive): that directive is the deployment's.
        out["content-security-policy"] = re.sub(
            r"media-src [^;]*; ", "", out["content-security-policy"])
    if "location" in out:
        out["location"] = re.sub(r"[0-9a-f-]{36}|[a-z]+_[0-9A-Za-z]{8,}", "ID", out["location"])
    return out


class Pair:
    """The same requests to both servers, each with its own ids."""

    def __init__(self, sam, local):
        self.bases = {"sam": sam, "local": local}
        self.ids = {"sam": {}, "local": {}}
        self.times = {"sam": [], "local": []}
        self.failures = 0

    def send(self, method, path, body=None, key=KEY, keep=None, loose=False, headers=None):
        answers = {}
        for side, base in self.bases.items():
            resolved = path.format(**self.ids[side])
            status, parsed, got, took = call(base, method, resolved, body, key, headers)
            answers[side] = (status, parsed, got)
            self.times[side].append(took)
            for name, field in (keep or {}).items():
                value = dig(parsed, field)
                if value is None:
                    print(f"FAIL {method} {path}: {side} answered {status} without {field}: {parsed}")
                    sys.exit(1)
                self.ids[side][name] = value
        (s_status, s_body, s_headers), (l_status, l_body, l_headers) = answers["sam"], answers["local"]
        problems = []
        if s_status != l_status:
            problems.append(f"status {s_status} through SAM, {l_status} locally")
        if not loose and shape(s_body) != shape(l_body):
            problems.append(f"body shape\n  SAM:   {json.dumps(shape(s_body))}\n  local: {json.dumps(shape(l_body))}")
        if comparable(s_headers) != comparable(l_headers):
            problems.append(f"headers\n  SAM:   {s_headers}\n  local: {l_headers}")
        if problems:
            self.failures += 1
            print(f"FAIL {method} {path}: " + "; ".join(problems))
        else:
            print(f"ok   {method} {path}: {s_status}")


def dig(value, field):
    for part in field.split("."):
        if isinstance(value, list):
            value = value[int(part)] if len(value) > int(part) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def main():
    sam, local = sys.argv[1], sys.argv[2]
    pair = Pair(sam, local)
    send = pair.send
    start = {"creator_id": "avt_ava000000001", "product_name": "Glow Serum", "platform": "tiktok"}
    destination = {"platform": "youtube", "ingest_url": "rtmp://a.rtmp.youtube.com/live2",
                   "stream_key": "abcd-efgh-ijkl-mnop"}

    # Discovery, public.
    send("GET", "/", key=None)
    send("GET", "/creators", key=None)
    send("GET", "/openapi.json", key=None, loose=True)
    for page in ("/docs", "/console", "/console.js", "/console.css", "/console.svg"):
        send("GET", page, key=None, loose=True)

    # Streams.
    # A key of this run's own: both servers may hold an earlier run's.
    idempotency = {"Idempotency-Key": f"smoke-start-{time.time_ns()}"}
    send("POST", "/streams", start, keep={"stream": "stream_id"}, headers=idempotency)
    send("POST", "/streams", start, headers=idempotency)
    send("GET", "/streams?limit=5")
    send("GET", "/streams/{stream}")
    send("POST", "/streams/{stream}/destinations", destination,
         keep={"destination": "destination_id"})
    send("POST", "/test_helpers/streams/{stream}/destinations/{destination}/fail",
         {"error": "refused"})
    send("DELETE", "/streams/{stream}/destinations/{destination}")
    send("POST", "/test_helpers/streams/{stream}/viewers", {"count": 12})
    send("DELETE", "/streams/{stream}")
    send("DELETE", "/streams/{stream}")
    send("POST", "/streams", start, keep={"finishing": "stream_id"})
    send("POST", "/test_helpers/streams/{finishing}/finish")
    send("POST", "/streams", start, keep={"failing": "stream_id"})
    send("POST", "/test_helpers/streams/{failing}/fail")

    # Clips: the cut and a test stream's recording are background work (the clips function,
    # the timers function) that start-api does not run, so the routes are tried where no
    # background work decides the answer: a stream with no recording, a clip that is not.
    send("POST", "/streams/{finishing}/clips", {"start_seconds": 1, "end_seconds": 3})
    send("GET", "/streams/{finishing}/clips")
    send("GET", "/streams/{finishing}/clips/clp_0000000000000000")
    send("DELETE", "/streams/{finishing}/clips/clp_0000000000000000")

    # Shows.
    starts_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    show = {**start, "duration_minutes": 30, "starts_at": starts_at}
    send("POST", "/shows", show, keep={"show": "show_id"})
    send("GET", "/shows")
    send("GET", "/shows/{show}")
    send("PATCH", "/shows/{show}", {"product_name": "Glow Serum 2"})
    send("POST", "/shows", show, keep={"cancelled": "show_id"})
    send("DELETE", "/shows/{cancelled}")
    send("POST", "/test_helpers/shows/{show}/start", loose=True)

    # Analytics.
    send("GET", "/analytics?period=24h")

    # Webhooks.
    hook = {"url": "https://hooks.example.com/live", "events": ["stream.started", "stream.ended"]}
    send("POST", "/webhooks", hook, keep={"webhook": "webhook_id"})
    send("GET", "/webhooks")
    send("GET", "/webhooks/{webhook}")
    send("PATCH", "/webhooks/{webhook}", {"events": ["stream.ended"]})
    send("POST", "/webhooks/{webhook}/rotate-secret")
    send("POST", "/webhooks/{webhook}/test", loose=True)
    send("GET", "/webhooks/{webhook}/deliveries?limit=5", loose=True)
    send("POST", "/webhooks/{webhook}/redeliver", {}, loose=True)
    send("DELETE", "/webhooks?id={webhook}")

    # The envelope of what matches no route, and of a request without a key.
    send("GET", "/nothing-here")
    send("GET", "/streams/")
    send("PUT", "/streams")
    send("GET", "/streams", key=None)

    sam_ms, local_ms = (statistics.median(pair.times[side]) * 1000 for side in ("sam", "local"))
    print(f"{len(pair.times['sam'])} requests each: median {sam_ms:.1f} ms through SAM (warm "
          f"containers), {local_ms:.1f} ms through the local server")
    if pair.failures:
        print(f"{pair.failures} answers differ")
        sys.exit(1)


if __name__ == "__main__":
    main()
