"""Sends an example receiver one correctly signed delivery and the same delivery with its body
tampered with: the first must be accepted (2xx), the second refused (400). Signs with the
published Standard Webhooks library and with Stripe's scheme computed as the API does.

usage: check_receiver.py URL SECRET
"""

import hashlib
import hmac
import json
import sys
import time
import urllib.error
import urllib.request

from standardwebhooks.webhooks import Webhook


def post(url: str, body: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as err:
        return err.code


def main(url: str, secret: str) -> int:
    event_id = "evt_" + "c" * 32
    body = json.dumps({"id": event_id, "type": "stream.started", "created_at": "2026-03-14T18:01:00.000Z",
                       "api_version": "v1", "test": True,
                       "data": {"stream": {"stream_id": "0f8e2a51-7c3b-4d6e-9a10-2b3c4d5e6f70", "status": "live"}}})
    now = int(time.time())
    stripe_signature = hmac.new(secret.encode(), f"{now}.{body}".encode(), hashlib.sha256).hexdigest()
    headers = {
        "content-type": "application/json",
        "webhook-id": event_id,
        "webhook-timestamp": str(now),
        "webhook-signature": Webhook(secret).sign(event_id, _utc(now), body),
        "x-service-signature": f"t={now},v1={stripe_signature}",
        "x-service-event-id": event_id,
        "x-service-event-type": "stream.started",
    }
    signed = post(url, body, headers)
    tampered = post(url, body.replace('"live"', '"ended"'), headers)
    print(f"signed delivery: {signed}; tampered body: {tampered}")
    return 0 if 200 <= signed < 300 and tampered == 400 else 1


def _utc(seconds: int):
    from datetime import datetime, timezone

    return datetime.fromtimestamp(seconds, tz=timezone.utc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
