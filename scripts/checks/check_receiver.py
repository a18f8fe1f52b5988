"""Sends an example receiver one correctly signed delivery, then the same delivery altered: its
body tampered with and, when the receiver holds a public key, its `v1a` forged or left out. The
first must be accepted (2xx), every other refused (400). Signs with the published Standard
Webhooks library, with Stripe's scheme computed as the API does, and with Ed25519 (Python's
`cryptography`) for `v1a`.

usage: check_receiver.py URL [--secret whsec_...] [--signing-key whsk_...]
       check_receiver.py --public-key whsk_...   prints the whpk_ public key of a private key
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.error
import urllib.request

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from standardwebhooks.webhooks import Webhook


def post(url: str, body: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as err:
        return err.code


def private_key(whsk: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(base64.b64decode(whsk.removeprefix("whsk_")))


def public_key(whsk: str) -> str:
    raw = private_key(whsk).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return "whpk_" + base64.b64encode(raw).decode()


def v1a(key: Ed25519PrivateKey, event_id: str, now: int, body: str) -> str:
    return "v1a," + base64.b64encode(key.sign(f"{event_id}.{now}.{body}".encode())).decode()


def main(url: str, secret: str | None, signing_key: str | None) -> int:
    event_id = "evt_" + "c" * 32
    body = json.dumps({"id": event_id, "type": "stream.started", "created_at": "2026-03-14T18:01:00.000Z",
                       "api_version": "v1", "test": True,
                       "data": {"stream": {"stream_id": "0f8e2a51-7c3b-4d6e-9a10-2b3c4d5e6f70", "status": "live"}}})
    now = int(time.time())
    headers = {
        "content-type": "application/json",
        "webhook-id": event_id,
        "webhook-timestamp": str(now),
        "x-service-event-id": event_id,
        "x-service-event-type": "stream.started",
    }
    standard = []
    if secret:
        stripe_signature = hmac.new(secret.encode(), f"{now}.{body}".encode(), hashlib.sha256).hexdigest()
        headers["x-service-signature"] = f"t={now},v1={stripe_signature}"
        standard.append(Webhook(secret).sign(event_id, _utc(now), body))
    asymmetric = [v1a(private_key(signing_key), event_id, now, body)] if signing_key else []
    headers["webhook-signature"] = " ".join(standard + asymmetric)

    results = {"signed": post(url, body, headers), "tampered body": post(url, body.replace('"live"', '"ended"'), headers)}
    if signing_key:
        forger = Ed25519PrivateKey.from_private_bytes(os.urandom(32))
        forged = dict(headers, **{"webhook-signature": " ".join(standard + [v1a(forger, event_id, now, body)])})
        results["v1a by another key"] = post(url, body, forged)
        results["no v1a"] = post(url, body, dict(headers, **{"webhook-signature": " ".join(standard) or "v1,none"}))
    print("; ".join(f"{name}: {status}" for name, status in results.items()))
    refused = [status for name, status in results.items() if name != "signed"]
    return 0 if 200 <= results["signed"] < 300 and all(status == 400 for status in refused) else 1


def _utc(seconds: int):
    from datetime import datetime, timezone

    return datetime.fromtimestamp(seconds, tz=timezone.utc)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url", nargs="?")
    parser.add_argument("--secret")
    parser.add_argument("--signing-key")
    parser.add_argument("--public-key", metavar="WHSK")
    args = parser.parse_args()
    if args.public_key:
        print(public_key(args.public_key))
        sys.exit(0)
    sys.exit(main(args.url, args.secret, args.signing_key))
