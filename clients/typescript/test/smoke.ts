// The generated TypeScript client, used as an integrator would, against a running server.
// usage: node dist/test/smoke.js BASE_URL TEST_KEY
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

import { createLiveStreamClient, type ApiError } from "../src/index.js";

const [baseUrl, apiKey] = process.argv.slice(2);
if (!baseUrl || !apiKey) {
  throw new Error("usage: smoke.js BASE_URL TEST_KEY");
}

const publicClient = createLiveStreamClient({ baseUrl });
const client = createLiveStreamClient({ baseUrl, apiKey });

const creators = await publicClient.GET("/creators");
assert.equal(creators.response.status, 200);
const creator = creators.data?.creators[0];
assert.ok(creator, "the catalog is empty");

const idempotencyKey = `smoke-${randomUUID()}`;
const body = {
  creator_id: creator.id,
  product_name: "Glow Serum",
  platform: "tiktok",
  duration_minutes: 30,
} as const;
const started = await client.POST("/streams", {
  body,
  params: { header: { "Idempotency-Key": idempotencyKey } },
});
assert.equal(started.response.status, 201);
const created = started.data;
assert.ok(created);
assert.equal(created.status, "live");
assert.equal(created.test, true);
const replay = await client.POST("/streams", {
  body,
  params: { header: { "Idempotency-Key": idempotencyKey } },
});
assert.equal(replay.response.headers.get("Idempotent-Replayed"), "true");
assert.equal(replay.data?.stream_id, created.stream_id);

const detail = await client.GET("/streams/{id}", {
  params: { path: { id: created.stream_id } },
});
assert.equal(detail.data?.stream_id, created.stream_id);
assert.deepEqual(detail.data?.events, []);

const page = await client.GET("/streams", {
  params: { query: { status: "live", limit: 5 } },
});
assert.ok(page.data?.streams.some((s) => s.id === created.stream_id));
assert.equal(page.data?.limit, 5);

const ended = await client.DELETE("/streams/{id}", {
  params: { path: { id: created.stream_id } },
});
assert.equal(ended.data?.status, "ended");
const again = await client.DELETE("/streams/{id}", {
  params: { path: { id: created.stream_id } },
});
assert.equal(again.response.status, 404);
assert.equal(again.error?.error.code, "not_found");
const after = await client.GET("/streams/{id}", {
  params: { path: { id: created.stream_id } },
});
assert.equal(after.data?.end_reason, "requested");

// The test helpers: a second test stream gains viewers, then fails as a provider would.
const failing = await client.POST("/streams", { body });
assert.ok(failing.data);
const failingId = { params: { path: { id: failing.data.stream_id } } };
const watched = await client.POST("/test_helpers/streams/{id}/viewers", {
  ...failingId,
  body: { count: 120 },
});
assert.equal(watched.data?.viewer_count, 120);
const failed = await client.POST("/test_helpers/streams/{id}/fail", failingId);
assert.equal(failed.data?.status, "error");
assert.equal(failed.data?.end_reason, "provider_error");

const analytics = await client.GET("/analytics", {
  params: { query: { period: "24h" } },
});
assert.equal(analytics.data?.period, "24h");
assert.ok((analytics.data?.total_streams ?? 0) >= 1);

const registered = await client.POST("/webhooks", {
  body: {
    url: "https://hooks.example.com/live",
    events: ["stream.started", "stream.ended"],
  },
});
assert.equal(registered.response.status, 201);
const webhook = registered.data;
assert.ok(webhook);
assert.ok(webhook.secret.startsWith("whsec_"));
const listed = await client.GET("/webhooks");
assert.ok(listed.data?.webhooks.some((w) => w.webhook_id === webhook.webhook_id));
const deleted = await client.DELETE("/webhooks", {
  params: { query: { id: webhook.webhook_id } },
});
assert.equal(deleted.data?.deleted, true);

// An error, read as the typed error: 400 invalid_fields for a product name too long.
const refused = await client.POST("/streams", {
  body: { creator_id: creator.id, product_name: "x".repeat(201), platform: "youtube" },
});
assert.equal(refused.response.status, 400);
const error: ApiError | undefined = refused.error;
assert.equal(error?.error.code, "invalid_fields");
assert.match(error?.error.message ?? "", /product_name/);

console.log("typescript client: every call answered as documented");
