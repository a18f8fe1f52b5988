"""Verifies the `v1a` signatures of one captured webhook delivery with Python's `cryptography`
(an Ed25519 implementation independent of the product's).

Reads {"public_key", "body", "headers"} as JSON on stdin: `public_key` is `whpk_` and the base64
of the 32-byte key. Prints one line per `v1a` signature and exits 0 only when one of them
verifies over "<webhook-id>.<webhook-timestamp>.<raw body>".
"""

import base64
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def main() -> int:
    capture = json.load(sys.stdin)
    public_key = capture["public_key"]
    if not public_key.startswith("whpk_"):
        print("public key: no whpk_ prefix")
        return 1
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key[len("whpk_"):], validate=True))
    headers = {k.lower(): v for k, v in capture["headers"].items()}
    signed = f'{headers["webhook-id"]}.{headers["webhook-timestamp"]}.{capture["body"]}'.encode()
    verified = False
    for part in headers["webhook-signature"].split(" "):
        version, _, signature = part.partition(",")
        if version != "v1a":
            continue
        try:
            key.verify(base64.b64decode(signature, validate=True), signed)
            print("v1a: ok")
            verified = True
        except (InvalidSignature, ValueError) as err:
            print(f"v1a: {type(err).__name__}")
    return 0 if verified else 1


if __name__ == "__main__":
    sys.exit(main())
