//! The public endpoints and the discovery document (`GET /`) that lists them.

use serde_json::{Map, Value, json};

use crate::domain::Scope;

pub struct Endpoint {
    pub method: &'static str,
    /// Relative to the base URL (`/api/v1`), in axum's `{param}` syntax.
    pub path: &'static str,
    /// `None`: public.
    pub scope: Option<Scope>,
    pub summary: &'static str,
}

pub const ENDPOINTS: &[Endpoint] = &[
    Endpoint {
        method: "GET",
        path: "/",
        scope: None,
        summary: "Discovery document; usable as a liveness check.",
    },
    Endpoint {
        method: "GET",
        path: "/openapi.json",
        scope: None,
        summary: "This API's OpenAPI 3.1 description.",
    },
    Endpoint {
        method: "GET",
        path: "/creators",
        scope: None,
        summary: "Stock creators (AI hosts), sorted by name.",
    },
    Endpoint {
        method: "POST",
        path: "/streams",
        scope: Some(Scope::StreamsWrite),
        summary: "Start a stream and dispatch its AI host.",
    },
    Endpoint {
        method: "GET",
        path: "/streams",
        scope: Some(Scope::StreamsRead),
        summary: "List the brand's streams, newest first.",
    },
    Endpoint {
        method: "GET",
        path: "/streams/{id}",
        scope: Some(Scope::StreamsRead),
        summary: "Get one stream.",
    },
    Endpoint {
        method: "DELETE",
        path: "/streams/{id}",
        scope: Some(Scope::StreamsWrite),
        summary: "End a live stream.",
    },
    Endpoint {
        method: "GET",
        path: "/analytics",
        scope: Some(Scope::AnalyticsRead),
        summary: "Aggregate analytics over 24h, 7d or 30d.",
    },
    Endpoint {
        method: "POST",
        path: "/webhooks",
        scope: Some(Scope::WebhooksWrite),
        summary: "Register a webhook.",
    },
    Endpoint {
        method: "GET",
        path: "/webhooks",
        scope: Some(Scope::WebhooksWrite),
        summary: "List the brand's webhooks.",
    },
    Endpoint {
        method: "DELETE",
        path: "/webhooks",
        scope: Some(Scope::WebhooksWrite),
        summary: "Delete a webhook: ?id=<webhook_id>.",
    },
];

impl Endpoint {
    pub fn description(&self) -> String {
        match self.scope {
            None => format!("{} Public, no key needed.", self.summary),
            Some(scope) => format!("{} Requires scope {scope}.", self.summary),
        }
    }
}

/// The discovery document for an API served at `base_url` (ending in `/api/v1`).
pub fn discovery_document(base_url: &str) -> Value {
    let endpoints: Map<String, Value> = ENDPOINTS
        .iter()
        .map(|e| {
            (
                format!("{} {}", e.method, e.path),
                Value::String(e.description()),
            )
        })
        .collect();
    json!({
        "name": "Live Stream Hosting API",
        "version": "v1",
        "status": "early_access",
        "docs": format!("{base_url}/openapi.json"),
        "openapi": format!("{base_url}/openapi.json"),
        "endpoints": endpoints,
        "authentication": "Send `Authorization: Bearer <API_KEY>`. Keys start with svc_live_ (live) or svc_test_ (test) and carry scopes: streams:read, streams:write, analytics:read, webhooks:write. GET / and GET /creators are public.",
    })
}
