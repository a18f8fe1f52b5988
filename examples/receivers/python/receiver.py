"""A webhook receiver for the Live Stream Hosting API: verifies each delivery on the raw body
with the published libraries (Standard Webhooks, and Stripe's scheme) and, given the webhook's
public key, its Ed25519 `v1a` signature; ignores repeats of an event id, and answers at once;
the work happens after the answer.

usage: WEBHOOK_SECRET=whsec_... [WEBHOOK_PUBLIC_KEY=whpk_...] python receiver.py [--port 8000]
       WEBHOOK_PUBLIC_KEY=whpk_... python receiver.py   # the public key alone: nothing here can sign
"""

import argparse
import base64
import binascii
import json
import os
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import stripe
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

SECRET = os.environ.get("WEBHOOK_SECRET", "")
PUBLIC_KEY = os.environ.get("WEBHOOK_PUBLIC_KEY", "")
TOLERANCE_SECONDS = 300
seen: set[str] = set()
seen_lock = threading.Lock()
work: queue.Queue[dict] = queue.Queue()


class PublicKeyVerificationError(Exception):
    pass


def verify_public_key(raw_body: bytes, headers: dict[str, str], public_key: str) -> dict:
    """Standard Webhooks' asymmetric scheme: one `v1a,<base64 Ed25519 signature>` of
    "<webhook-id>.<webhook-timestamp>.<raw body>" in webhook-signature must verify with the
    public key (`whpk_` and the base64 of its 32 bytes). Raises otherwise."""
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key.removeprefix("whpk_"), validate=True))
    timestamp = headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        raise PublicKeyVerificationError("timestamp outside the tolerance")
    signed = f'{headers["webhook-id"]}.{timestamp}.'.encode() + raw_body
    for part in headers["webhook-signature"].split(" "):
        version, _, signature = part.partition(",")
        if version != "v1a":
            continue
        try:
            key.verify(base64.b64decode(signature, validate=True), signed)
            return json.loads(raw_body)
        except (InvalidSignature, binascii.Error):
            continue  # during a rotation, another key's signature
    raise PublicKeyVerificationError("no v1a signature verifies")


def verify(raw_body: bytes, headers: dict[str, str]) -> dict:
    """Every scheme this receiver has a key for, on the bytes as received. Raises if one fails."""
    event = None
    if SECRET:
        event = Webhook(SECRET).verify(raw_body, headers)  # webhook-id/-timestamp/-signature
        stripe.WebhookSignature.verify_header(
            raw_body.decode("utf-8"), headers["x-service-signature"], SECRET, tolerance=TOLERANCE_SECONDS
        )
    if PUBLIC_KEY:
        event = verify_public_key(raw_body, headers, PUBLIC_KEY)
    return event


def schemes() -> list[str]:
    return (["standardwebhooks", "stripe"] if SECRET else []) + (["ed25519"] if PUBLIC_KEY else [])


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("content-length") or 0)
        raw_body = self.rfile.read(length)  # never parse before verifying
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            event = verify(raw_body, headers)
        except (
            WebhookVerificationError,
            stripe.SignatureVerificationError,
            PublicKeyVerificationError,
            KeyError,
            ValueError,
        ) as err:
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
        if event["type"] == "webhook.disabled":
            # Another of the brand's webhooks was disabled (failing for days, or 410 Gone):
            # enable it again with PATCH active: true, then redeliver since.
            webhook = event["data"]["webhook"]
            print(json.dumps({"verified": event["type"], "id": event["id"], "webhook_id": webhook["webhook_id"],
                              "disabled_reason": webhook.get("disabled_reason"), "schemes": schemes()}), flush=True)
            continue
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
        line["schemes"] = schemes()
        print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if not SECRET.startswith("whsec_") and not PUBLIC_KEY.startswith("whpk_"):
        sys.exit("set WEBHOOK_SECRET to the secret POST /webhooks answered with, or WEBHOOK_PUBLIC_KEY to its public_key")
    threading.Thread(target=worker, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Receiver)
    print(f"listening on http://127.0.0.1:{args.port}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
