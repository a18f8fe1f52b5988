// A webhook receiver for the Live Stream Hosting API: verifies each delivery on the raw body
// with the published libraries (Standard Webhooks, and Stripe's scheme), ignores repeats of an
// event id, and answers at once; the work happens after the answer.
//
// usage: WEBHOOK_SECRET=whsec_... node receiver.mjs [--port 8000]
import { createServer } from "node:http";
import { parseArgs } from "node:util";

import { Webhook } from "standardwebhooks";
import Stripe from "stripe";

const secret = process.env.WEBHOOK_SECRET ?? "";
if (!secret.startsWith("whsec_")) {
  console.error("set WEBHOOK_SECRET to the secret POST /webhooks answered with");
  process.exit(1);
}
const { values } = parseArgs({ options: { port: { type: "string", default: "8000" } } });
// Only the signature helpers are used: no Stripe account or API key is involved.
const stripe = new Stripe("sk_unused");
const seen = new Set();

/** Both schemes, on the bytes as received. Throws if either fails. */
function verify(rawBody, headers) {
  const event = new Webhook(secret).verify(rawBody, headers); // webhook-id/-timestamp/-signature
  stripe.webhooks.constructEvent(rawBody, headers["x-service-signature"], secret, 300);
  return event;
}

function process_(event) {
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
    schemes: ["standardwebhooks", "stripe"],
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
