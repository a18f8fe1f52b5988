"""A webhook receiver for the Live Stream Hosting API: verifies each delivery on the raw body
with the published libraries (Standard Webhooks, and Stripe's scheme), ignores repeats of an
event id, and answers at once; the work happens after the answer.

usage: WEBHOOK_SECRET=whsec_... python receiver.py [--port 8000]
"""

import argparse
import json
import os
import queue
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import stripe
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

SECRET = os.environ.get("WEBHOOK_SECRET", "")
TOLERANCE_SECONDS = 300
seen: set[str] = set()
seen_lock = threading.Lock()
work: queue.Queue[dict] = queue.Queue()


def verify(raw_body: bytes, headers: dict[str, str]) -> dict:
    """Both schemes, on the bytes as received. Raises if either fails."""
    event = Webhook(SECRET).verify(raw_body, headers)  # webhook-id/-timestamp/-signature
    stripe.WebhookSignature.verify_header(
        raw_body.decode("utf-8"), headers["x-service-signature"], SECRET, tolerance=TOLERANCE_SECONDS
    )
    return event


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("content-length") or 0)
        raw_body = self.rfile.read(length)  # never parse before verifying
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            event = verify(raw_body, headers)
        except (WebhookVerificationError, stripe.SignatureVerificationError, KeyError, ValueError) as err:
            print(f"rejected: {type(err).__name__}: {err}", flush=True)
            self.send_response(400)
            self.end_headers()
            return
        with seen_lock:
            repeat = event["id"] in seen
            seen.add(event["id"])
        if not repeat:
            work.put(event)
        self.send_response(204)  # answer first: deliveries time out after 10 s
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # quiet access log
        pass


def worker() -> None:
    while True:
        event = work.get()
        stream = event["data"]["stream"]
        line = {"verified": event["type"], "id": event["id"], "stream_id": stream["stream_id"], "status": stream["status"]}
        # Why a finished stream ended (requested, host_left, provider_error, ...); absent while
        # it is active. New reasons may be added: treat an unknown one as a generic end.
        if "end_reason" in stream:
            line["end_reason"] = stream["end_reason"]
        # stream.destination_active / stream.destination_failed: which channel, and why it failed.
        destination = event["data"].get("destination")
        if destination:
            line["destination"] = {key: destination[key] for key in ("destination_id", "platform", "status", "error")}
        line["schemes"] = ["standardwebhooks", "stripe"]
        print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if not SECRET.startswith("whsec_"):
        sys.exit("set WEBHOOK_SECRET to the secret POST /webhooks answered with")
    threading.Thread(target=worker, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Receiver)
    print(f"listening on http://127.0.0.1:{args.port}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
