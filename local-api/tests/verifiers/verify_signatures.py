"""Verifies one captured webhook delivery with the published libraries receivers use.

Reads {"secret", "body", "headers"} as JSON on stdin; prints one line per scheme and exits 0
only when both signatures verify (Stripe's scheme with a 300-second tolerance, and Standard
Webhooks).
"""

import json
import sys

import standardwebhooks
import stripe


def main() -> int:
    capture = json.load(sys.stdin)
    secret = capture["secret"]
    body = capture["body"]
    headers = {k.lower(): v for k, v in capture["headers"].items()}
    ok = True
    try:
        stripe.WebhookSignature.verify_header(
            body, headers["x-service-signature"], secret, tolerance=300
        )
        print("stripe: ok")
    except Exception as err:  # noqa: BLE001 - report any failure
        ok = False
        print(f"stripe: {type(err).__name__}: {err}")
    try:
        standardwebhooks.Webhook(secret).verify(body, headers)
        print("standardwebhooks: ok")
    except Exception as err:  # noqa: BLE001
        ok = False
        print(f"standardwebhooks: {type(err).__name__}: {err}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
