//! The request pipeline (docs/request-pipeline.md, "The order of checks"; docs/rate-limits.md):
//! routing, authentication, rate limit and its headers, scope, plan gate, refused requests doing
//! no work; and the two public endpoints.

mod auth;
mod public;
mod rate_limit;
mod rate_limit_headers;
mod refusals;
mod routes;

/// The API's endpoints, the webhook operations' and the test helpers': every keyed endpoint with
/// the scope it needs.
const SPEC_SCOPES: [(&str, &str, &str); 17] = [
    ("POST", "/streams", "streams:write"),
    ("GET", "/streams", "streams:read"),
    ("GET", "/streams/{id}", "streams:read"),
    ("DELETE", "/streams/{id}", "streams:write"),
    ("GET", "/analytics", "analytics:read"),
    ("POST", "/webhooks", "webhooks:write"),
    ("GET", "/webhooks", "webhooks:write"),
    ("DELETE", "/webhooks", "webhooks:write"),
    ("GET", "/webhooks/{id}", "webhooks:write"),
    ("PATCH", "/webhooks/{id}", "webhooks:write"),
    ("POST", "/webhooks/{id}/rotate-secret", "webhooks:write"),
    ("POST", "/webhooks/{id}/test", "webhooks:write"),
    ("GET", "/webhooks/{id}/deliveries", "webhooks:write"),
    ("POST", "/webhooks/{id}/redeliver", "webhooks:write"),
    (
        "POST",
        "/test_helpers/streams/{id}/viewers",
        "streams:write",
    ),
    ("POST", "/test_helpers/streams/{id}/finish", "streams:write"),
    ("POST", "/test_helpers/streams/{id}/fail", "streams:write"),
];
