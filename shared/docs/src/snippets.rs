//! The receivers' verification code the reference page shows, in Python and Node.js: the
//! published libraries with the secret, and Ed25519 with the public key alone
//! (docs/webhooks.md, "Verify with the public key").

pub(crate) const VERIFY_PYTHON: &str = r#"from standardwebhooks.webhooks import Webhook   # pip install standardwebhooks
import stripe                                     # pip install stripe (Stripe's scheme)

def verify(raw_body: bytes, headers: dict[str, str], secret: str) -> dict:
    """raw_body: the bytes as received, before any JSON parsing."""
    # Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature.
    event = Webhook(secret).verify(raw_body, headers)
    # Or Stripe's scheme, on the same bytes: X-Service-Signature.
    stripe.WebhookSignature.verify_header(
        raw_body.decode(), headers["x-service-signature"], secret, tolerance=300)
    return event

# Or with the public key alone (Ed25519, the `v1a,` signatures): pip install cryptography
import base64, time
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

def verify_public(raw_body: bytes, headers: dict[str, str], public_key: str) -> None:
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key.removeprefix("whpk_")))
    if abs(time.time() - int(headers["webhook-timestamp"])) > 300:
        raise ValueError("too old")
    signed = f'{headers["webhook-id"]}.{headers["webhook-timestamp"]}.'.encode() + raw_body
    for part in headers["webhook-signature"].split(" "):
        version, _, signature = part.partition(",")
        if version == "v1a":
            try:
                return key.verify(base64.b64decode(signature), signed)
            except Exception:
                continue
    raise ValueError("no valid v1a signature")"#;

pub(crate) const VERIFY_NODE: &str = r#"import { Webhook } from "standardwebhooks";   // npm install standardwebhooks

// Express: app.post("/hooks", express.raw({ type: "*/*" }), handler) keeps the raw bytes;
// express.json() would re-serialise the body and every signature check would fail.
export function verify(rawBody, headers, secret) {
  return new Webhook(secret).verify(rawBody.toString("utf8"), headers); // throws if not ours
}

// Or with the public key alone (Ed25519, the `v1a,` signatures), in Node's own crypto.
import crypto from "node:crypto";

export function verifyPublic(rawBody, headers, publicKey) {
  const x = Buffer.from(publicKey.slice("whpk_".length), "base64").toString("base64url");
  const key = crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
  const t = Number(headers["webhook-timestamp"]);
  if (!(Math.abs(Date.now() / 1000 - t) <= 300)) throw new Error("too old");
  const signed = Buffer.concat([Buffer.from(`${headers["webhook-id"]}.${t}.`), rawBody]);
  const ok = headers["webhook-signature"].split(" ").some((part) => {
    const [version, signature] = part.split(",");
    return version === "v1a" && crypto.verify(null, signed, key, Buffer.from(signature, "base64"));
  });
  if (!ok) throw new Error("no valid v1a signature");
}"#;
