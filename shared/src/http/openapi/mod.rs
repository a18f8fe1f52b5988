//! The machine-readable description of the API: an OpenAPI 3.1 document, served at
//! `{base_url}/openapi.json`. It is built from the same constants and enumerations the
//! handlers use (limits, platforms, statuses, scopes, event types, error codes), and the test
//! suite validates every response it receives against it.

mod builders;
mod operations;
mod schemas;

use serde_json::{Map, Value, json};

use self::builders::schema_ref;
use self::operations::operations;
use self::schemas::schemas;
use crate::domain::{Plan, Scope};
use crate::http::endpoints::ENDPOINTS;

fn webhooks() -> Value {
    let header = |name: &str, description: &str| json!({ "name": name, "in": "header", "required": true, "description": description, "schema": { "type": "string" } });
    json!({
        "streamEvent": { "post": {
            "summary": "A stream lifecycle event",
            "description": "POSTed to each active webhook that lists the event type. At-least-once: up to 5 retries (30 s, 5 min, 30 min, 2 h, 8 h, +-20%), then dead-lettered. Any 2xx within 10 s is success; redirects are failures; 410 Gone deactivates the webhook. Reject signatures older than 5 minutes.",
            "parameters": [
                header("X-Service-Event-Id", "The event id (same on every attempt)."),
                header("X-Service-Event-Type", "The event type."),
                header("X-Service-Signature", "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" keyed with the whole whsec_ secret>` (Stripe's scheme)."),
                header("webhook-id", "Standard Webhooks: the event id."),
                header("webhook-timestamp", "Standard Webhooks: `t`, the time of this attempt."),
                header("webhook-signature", "Standard Webhooks: `v1,<base64 HMAC-SHA256 of \"<id>.<t>.<raw body>\" keyed with the base64-decoded secret after whsec_>`."),
            ],
            "requestBody": { "required": true, "content": { "application/json": { "schema": schema_ref("WebhookEvent") } } },
            "responses": { "2XX": { "description": "Received." }, "410": { "description": "Gone: no more deliveries to this webhook." } },
        }},
    })
}

/// The OpenAPI document for an API served at `base_url` (ending in `/api/v1`).
pub fn document(base_url: &str) -> Value {
    let mut paths = Map::new();
    for operation in operations() {
        let entry = paths
            .entry(operation.path.to_owned())
            .or_insert_with(|| json!({}));
        entry[operation.method.to_lowercase()] = operation.to_json();
    }
    let plans: Vec<&str> = [
        Plan::Free,
        Plan::Starter,
        Plan::Growth,
        Plan::Scale,
        Plan::Enterprise,
    ]
    .iter()
    .map(|p| p.as_str())
    .collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Live Stream Hosting API",
            "version": "v1",
            "description": format!("AI-hosted live streams for live-commerce brands. Keys: `svc_live_` (real dispatch and billing; plan {} or above) and `svc_test_` (simulated, free). Every error is `{{\"error\": {{\"code\", \"message\"}}}}`; an unknown path or method answers 404 `not_found`. Plans in order: {}.", plans[2], plans.join(", ")),
        },
        "servers": [{ "url": base_url }],
        "paths": paths,
        "webhooks": webhooks(),
        "components": {
            "securitySchemes": { "bearerAuth": {
                "type": "http", "scheme": "bearer",
                "description": format!("`Authorization: Bearer <key>`. Each operation lists the scope it needs: {}.",
                    Scope::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")),
            }},
            "schemas": schemas(),
        },
    })
}

/// (method, path) of every operation the document describes.
pub fn operations_list() -> Vec<(&'static str, &'static str)> {
    operations().iter().map(|o| (o.method, o.path)).collect()
}

/// Keeps the discovery table and this document in step (checked by the test suite).
pub fn discovery_matches_document() -> bool {
    let mut documented = operations_list();
    let mut discovered: Vec<(&str, &str)> = ENDPOINTS.iter().map(|e| (e.method, e.path)).collect();
    documented.sort();
    discovered.sort();
    documented == discovered
}
