// The client: openapi-fetch over the types openapi-typescript generates into schema.d.ts
// (scripts/generate-clients.sh). Paths, parameters, bodies and every documented answer are
// typed from the API's OpenAPI document.
import createClient, { type Client, type Middleware } from "openapi-fetch";

import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
export type Schemas = components["schemas"];
/** The error envelope of every failure: match on `error.code`, never on the message. */
export type ApiError = Schemas["Error"];
export type ErrorCode = Schemas["ErrorCode"];

export interface ClientOptions {
  /** For example `http://127.0.0.1:3000/api/v1`. */
  baseUrl: string;
  /** `svc_test_...` or `svc_live_...`; omit it for the public endpoints only. */
  apiKey?: string;
  /** A `fetch` of your own (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

export type LiveStreamClient = Client<paths>;

/** A client whose every request carries `Authorization: Bearer <apiKey>`. */
export function createLiveStreamClient(options: ClientOptions): LiveStreamClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const { apiKey } = options;
  if (apiKey) {
    const authenticate: Middleware = {
      onRequest({ request }) {
        request.headers.set("Authorization", `Bearer ${apiKey}`);
        return request;
      },
    };
    client.use(authenticate);
  }
  return client;
}
