// A webhook receiver for the Live Stream Hosting API: verifies each delivery on the raw body
// with the published libraries (Standard Webhooks, and Stripe's scheme) and, given the webhook's
// public key, its Ed25519 `v1a` signature; ignores repeats of an event id, and answers at once;
// the work happens after the answer.
//
// usage: WEBHOOK_SECRET=whsec_... [WEBHOOK_PUBLIC_KEY=whpk_...] node receiver.mjs [--port 8000]
//        WEBHOOK_PUBLIC_KEY=whpk_... node receiver.mjs   # the public key alone: nothing here can sign
import crypto from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

import { Webhook } from "standardwebhooks";
import Stripe from "stripe";

const secret = process.env.WEBHOOK_SECRET ?? "";
const publicKey = process.env.WEBHOOK_PUBLIC_KEY ?? "";
if (!secret.startsWith("whsec_") && !publicKey.startsWith("whpk_")) {
  console.error("set WEBHOOK_SECRET to the secret POST /webhooks answered with, or WEBHOOK_PUBLIC_KEY to its public_key");
  process.exit(1);
}
const TOLERANCE_SECONDS = 300;
const schemes = [...(secret ? ["standardwebhooks", "stripe"] : []), ...(publicKey ? ["ed25519"] : [])];
const { values } = parseArgs({ options: { port: { type: "string", default: "8000" } } });
// Only the signature helpers are used: no Stripe account or API key is involved.
const stripe = new Stripe("sk_unused");
const seen = new Set();

/**
 * Standard Webhooks' asymmetric scheme: one `v1a,<base64 Ed25519 signature>` of
 * "<webhook-id>.<webhook-timestamp>.<raw body>" in webhook-signature must verify with the public
 * key (`whpk_` and the base64 of its 32 bytes), in Node's own crypto. Throws otherwise.
 */
function verifyPublicKey(rawBody, headers, whpk) {
  const x = Buffer.from(whpk.slice("whpk_".length), "base64").toString("base64url");
  const key = crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
  const timestamp = headers["webhook-timestamp"] ?? "";
  if (!(Math.abs(Date.now() / 1000 - Number(timestamp)) <= TOLERANCE_SECONDS)) {
    throw Object.assign(new Error("timestamp outside the tolerance"), { name: "PublicKeyVerificationError" });
  }
  const signed = Buffer.from(`${headers["webhook-id"]}.${timestamp}.${rawBody}`);
  const verified = (headers["webhook-signature"] ?? "").split(" ").some((part) => {
    const [version, signature] = part.split(",");
    // During a rotation, one of them is the other key's.
    return version === "v1a" && crypto.verify(null, signed, key, Buffer.from(signature ?? "", "base64"));
  });
  if (!verified) {
    throw Object.assign(new Error("no v1a signature verifies"), { name: "PublicKeyVerificationError" });
  }
  return JSON.parse(rawBody);
}

/** Every scheme this receiver has a key for, on the bytes as received. Throws if one fails. */
function verify(rawBody, headers) {
  let event;
  if (secret) {
    event = new Webhook(secret).verify(rawBody, headers); // webhook-id/-timestamp/-signature
    stripe.webhooks.constructEvent(rawBody, headers["x-service-signature"], secret, TOLERANCE_SECONDS);
  }
  if (publicKey) event = verifyPublicKey(rawBody, headers, publicKey);
  return event;
}

function process_(event) {
  if (event.type === "webhook.disabled") {
    // Another of the brand's webhooks was disabled (failing for days, or 410 Gone): enable it
    // again with PATCH active: true, then redeliver since.
    const { webhook } = event.data;
    console.log(JSON.stringify({
      verified: event.type, id: event.id, webhook_id: webhook.webhook_id,
      disabled_reason: webhook.disabled_reason, schemes,
    }));
    return;
  }
  const { stream, destination } = event.data;
  // end_reason says why a finished stream ended (requested, host_left, provider_error, ...);
  // absent while it is active (JSON.stringify leaves it out). New reasons may be added: treat an
  // unknown one as a generic end.
  console.log(JSON.stringify({
    verified: event.type, id: event.id, stream_id: stream.stream_id, status: stream.status,
    end_reason: stream.end_reason,
    // stream.destination_active / stream.destination_failed: which channel, and why it failed.
    destination: destination && {
      destination_id: destination.destination_id, platform: destination.platform,
      status: destination.status, error: destination.error,
    },
    schemes,
  }));
}

createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const rawBody = Buffer.concat(chunks).toString("utf8"); // never parse before verifying
    let event;
    try {
      event = verify(rawBody, request.headers);
    } catch (err) {
      console.log(`rejected: ${err.name}: ${err.message}`);
      response.writeHead(400).end();
      return;
    }
    const repeat = seen.has(event.id);
    seen.add(event.id);
    response.writeHead(204).end(); // answer first: deliveries time out after 10 s
    if (!repeat) setImmediate(() => process_(event));
  });
}).listen(Number(values.port), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${values.port}/`);
});
