//! The machine-readable description of the API: an OpenAPI 3.1 document, served at
//! `{base_url}/openapi.json`. It is built from the same constants and enumerations the
//! handlers use (limits, platforms, statuses, scopes, event types, error codes), and the test
//! suite validates every response it receives against it.

use serde_json::{Map, Value, json};

use crate::domain::idempotency::MAX_KEY_CHARS;
use crate::domain::{EventType, Plan, Scope, StreamStatus};
use crate::http::endpoints::ENDPOINTS;
use crate::ratelimit::{self, REQUESTS_PER_MINUTE, WINDOW_SECS};
use crate::service::streams::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};
use crate::validation::{
    CREATOR_ID_MAX_CHARS, DURATION_MINUTES_RANGE, PLATFORM_MAX_CHARS, PLATFORMS,
    PRODUCT_NAME_MAX_CHARS, SCRIPT_MAX_CHARS,
};
use crate::webhook_url::MAX_URL_CHARS;

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn nullable(kind: &str) -> Value {
    json!({ "type": [kind, "null"] })
}

fn timestamp() -> Value {
    json!({ "type": "string", "format": "date-time" })
}

fn nullable_timestamp() -> Value {
    json!({ "type": ["string", "null"], "format": "date-time" })
}

fn uuid() -> Value {
    json!({ "type": "string", "format": "uuid" })
}

fn statuses() -> Value {
    json!({ "type": "string", "enum": StreamStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>() })
}

fn event_types() -> Value {
    json!({ "type": "string", "enum": EventType::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>() })
}

/// An object schema whose listed properties are all required and nothing else is allowed.
fn closed(properties: Value, optional: &[&str]) -> Value {
    let required: Vec<&String> = properties
        .as_object()
        .map(|p| {
            p.keys()
                .filter(|k| !optional.contains(&k.as_str()))
                .collect()
        })
        .unwrap_or_default();
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

fn request_id_header() -> Value {
    json!({ "description": "Identifies the request (the API gateway's id when there is one).",
            "required": true, "schema": { "type": "string" } })
}

/// The rate-limit headers (extensions.md E2) of an answer to a counted request: on every
/// status of a keyed operation but 401; `required` unless the count itself may have failed.
fn rate_limit_headers(required: bool) -> [(&'static str, Value); 2] {
    [
        (
            "RateLimit-Policy",
            json!({ "description": "The policy every keyed request is counted under.",
                    "required": required,
                    "schema": { "type": "string", "enum": [ratelimit::policy()] } }),
        ),
        (
            "RateLimit",
            json!({ "description": format!("`\"default\";r=<requests left in this minute after this one>;t=<seconds until the minute ends>`: r from 0 to {REQUESTS_PER_MINUTE}, t from 1 to {WINDOW_SECS}."),
                    "required": required,
                    "schema": { "type": "string", "pattern": "^\"default\";r=[0-9]+;t=[0-9]+$" } }),
        ),
    ]
}

fn replayed_header() -> Value {
    json!({ "description": "`true` on the replay of an earlier answer to the same Idempotency-Key.",
            "required": false, "schema": { "type": "string", "enum": ["true"] } })
}

fn idempotency_parameter() -> Value {
    json!({ "name": "Idempotency-Key", "in": "header", "required": false,
            "description": format!("Makes the create safe to retry: 1 to {MAX_KEY_CHARS} visible ASCII characters, scoped to the brand, the key environment and this operation, kept at least 24 hours. A retry with the same key and body gets the first answer again (`Idempotent-Replayed: true`); another body, `422`; while the first is still running, `409`."),
            "schema": { "type": "string", "minLength": 1, "maxLength": MAX_KEY_CHARS, "pattern": "^[\\x21-\\x7E]+$" } })
}

fn headers(extra: &[(&str, Value)]) -> Value {
    let mut headers = Map::new();
    headers.insert("X-Request-Id".into(), request_id_header());
    for (name, header) in extra {
        headers.insert((*name).into(), header.clone());
    }
    Value::Object(headers)
}

fn ok(description: &str, schema: Value, extra_headers: &[(&str, Value)]) -> Value {
    json!({ "description": description, "headers": headers(extra_headers),
            "content": { "application/json": { "schema": schema } } })
}

/// An error response whose `code` is one of `codes`.
fn error(description: &str, codes: &[&str], extra_headers: &[(&str, Value)]) -> Value {
    let schema = json!({
        "type": "object",
        "required": ["error"],
        "additionalProperties": false,
        "properties": { "error": {
            "type": "object",
            "required": ["code", "message"],
            "additionalProperties": false,
            "properties": {
                "code": { "type": "string", "enum": codes },
                "message": { "type": "string", "minLength": 1 },
            },
        }},
    });
    ok(description, schema, extra_headers)
}

/// How an operation is reached: public, or with a key holding `scope`.
#[derive(Clone, Copy)]
enum Access {
    Public,
    Keyed(Scope),
}

struct Operation {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    description: &'static str,
    access: Access,
    parameters: Value,
    request_body: Option<Value>,
    /// Status -> response, besides the common ones of keyed operations.
    responses: Vec<(&'static str, Value)>,
    /// Codes of 403 and 429 beyond the common ones.
    extra_403: &'static [&'static str],
    extra_429: &'static [&'static str],
    /// A create that takes `Idempotency-Key` (extensions.md E1).
    idempotent: bool,
}

impl Operation {
    fn to_json(&self) -> Value {
        let mut responses = Map::new();
        for (status, response) in &self.responses {
            responses.insert((*status).into(), response.clone());
        }
        let mut parameters = self.parameters.clone();
        if let (true, Some(list)) = (self.idempotent, parameters.as_array_mut()) {
            list.push(idempotency_parameter());
        }
        let mut operation = json!({
            "operationId": format!("{}{}", self.method.to_lowercase(), self.path.replace(['/', '{', '}', '.'], "_")),
            "summary": self.summary,
            "description": self.description,
            "parameters": parameters,
        });
        match self.access {
            Access::Public => {
                operation["security"] = json!([]);
            }
            Access::Keyed(scope) => {
                operation["security"] = json!([{ "bearerAuth": [scope.as_str()] }]);
                operation["x-required-scope"] = json!(scope.as_str());
                let mut forbidden = vec!["insufficient_scope"];
                forbidden.extend_from_slice(self.extra_403);
                let mut limited = vec!["rate_limited"];
                limited.extend_from_slice(self.extra_429);
                let www = json!({ "description": "Always `Bearer`.", "required": true,
                                  "schema": { "type": "string", "enum": ["Bearer"] } });
                responses.insert("401".into(), error("Missing, malformed, unknown, revoked or expired key (identical body in every case).", &["unauthorized"], &[("WWW-Authenticate", www)]));
                responses.insert(
                    "402".into(),
                    error(
                        "Live key of a brand below the Growth plan.",
                        &["plan_required"],
                        &[],
                    ),
                );
                responses.insert("403".into(), error("The key lacks the scope (the message names it), or the request conflicts with the brand's vertical.", &forbidden, &[]));
                responses.insert("429".into(), error("Over 100 requests in the current UTC minute for the brand, or (start) 3 active streams. No Retry-After.", &limited, &[]));
                responses.entry("500").or_insert_with(|| {
                    error(
                        "Server-side database failure; safe to retry with backoff.",
                        &["db_error"],
                        &[],
                    )
                });
                if self.idempotent {
                    responses.insert(
                        "409".into(),
                        error(
                            "Another request with this Idempotency-Key is still running.",
                            &["idempotency_key_in_use"],
                            &[],
                        ),
                    );
                    responses.insert(
                        "422".into(),
                        error(
                            "This Idempotency-Key was used with another request body.",
                            &["idempotency_key_mismatch"],
                            &[],
                        ),
                    );
                    for status in ["201", "502"] {
                        if let Some(headers) = responses
                            .get_mut(status)
                            .and_then(|r| r["headers"].as_object_mut())
                        {
                            headers.insert("Idempotent-Replayed".into(), replayed_header());
                        }
                    }
                }
                // Every answer to a request that passed authentication was counted.
                for (status, response) in responses.iter_mut().filter(|(s, _)| *s != "401") {
                    if let Some(headers) = response["headers"].as_object_mut() {
                        for (name, header) in rate_limit_headers(status != "500") {
                            headers.insert(name.into(), header);
                        }
                    }
                }
            }
        }
        operation["responses"] = Value::Object(responses);
        if let Some(body) = &self.request_body {
            operation["requestBody"] = body.clone();
        }
        operation
    }
}

fn query(name: &str, description: &str, schema: Value) -> Value {
    json!({ "name": name, "in": "query", "required": false, "description": description, "schema": schema })
}

fn operations() -> Vec<Operation> {
    let stream_id = json!([{ "name": "id", "in": "path", "required": true,
        "description": "The stream's UUID. Anything else is simply not found.",
        "schema": { "type": "string" } }]);
    let json_body = |schema: &str| {
        json!({ "required": true, "description": "JSON, whatever the Content-Type; at most 1 MiB.",
        "content": { "application/json": { "schema": schema_ref(schema) } } })
    };
    let location = json!({ "description": "Path of the new stream.", "required": true,
                           "schema": { "type": "string" } });
    let cache = json!({ "description": "Always `public, max-age=60`.", "required": true,
                        "schema": { "type": "string", "enum": ["public, max-age=60"] } });
    vec![
        Operation {
            method: "GET",
            path: "/",
            summary: "Discovery document",
            description: "Usable as a liveness check.",
            access: Access::Public,
            parameters: json!([]),
            request_body: None,
            responses: vec![(
                "200",
                ok("The discovery document.", schema_ref("Discovery"), &[]),
            )],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
        Operation {
            method: "GET",
            path: "/openapi.json",
            summary: "This document",
            description: "OpenAPI 3.1 description of the API.",
            access: Access::Public,
            parameters: json!([]),
            request_body: None,
            responses: vec![(
                "200",
                ok(
                    "The OpenAPI document.",
                    json!({ "type": "object", "required": ["openapi", "paths"] }),
                    &[],
                ),
            )],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
        Operation {
            method: "GET",
            path: "/creators",
            summary: "Stock creators",
            description: "Sorted by name (case-insensitive), then id. Never rate limited.",
            access: Access::Public,
            parameters: json!([]),
            request_body: None,
            responses: vec![
                (
                    "200",
                    ok(
                        "The creators.",
                        schema_ref("CreatorList"),
                        &[("Cache-Control", cache)],
                    ),
                ),
                (
                    "500",
                    error("Server-side database failure.", &["db_error"], &[]),
                ),
            ],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
        Operation {
            method: "POST",
            path: "/streams",
            summary: "Start a stream",
            description: "Live keys create the stream `preparing` and dispatch the AI host; test keys simulate the lifecycle (`live` at once, no room, no billing). Checks in order: missing fields, field constraints, vertical, creator, concurrency.",
            access: Access::Keyed(Scope::StreamsWrite),
            parameters: json!([]),
            request_body: Some(json_body("StartStreamRequest")),
            responses: vec![
                (
                    "201",
                    ok(
                        "Stream created.",
                        schema_ref("StreamCreated"),
                        &[("Location", location)],
                    ),
                ),
                (
                    "400",
                    error(
                        "Invalid JSON or a missing field (`missing_fields`), a violated constraint or a malformed Idempotency-Key (`invalid_fields`), or an unknown creator (`invalid_creator`).",
                        &["missing_fields", "invalid_fields", "invalid_creator"],
                        &[],
                    ),
                ),
                (
                    "502",
                    error(
                        "Room creation or dispatch failed after the record was created; the stream exists with status `error`.",
                        &["launch_failed"],
                        &[],
                    ),
                ),
            ],
            extra_403: &["vertical_mismatch"],
            extra_429: &["concurrency_limit"],
            idempotent: true,
        },
        Operation {
            method: "GET",
            path: "/streams",
            summary: "List streams",
            description: "Newest first. Never returns 400: bad values take defaults or are clamped.",
            access: Access::Keyed(Scope::StreamsRead),
            parameters: json!([
                query(
                    "status",
                    "Filter; an unrecognized value matches nothing.",
                    json!({ "type": "string" })
                ),
                query(
                    "limit",
                    &format!("1 to {MAX_LIST_LIMIT}, default {DEFAULT_LIST_LIMIT}; clamped."),
                    json!({ "type": "string" })
                ),
                query(
                    "offset",
                    "At least 0, default 0; clamped.",
                    json!({ "type": "string" })
                ),
            ]),
            request_body: None,
            responses: vec![(
                "200",
                ok("A page of streams.", schema_ref("StreamList"), &[]),
            )],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
        Operation {
            method: "GET",
            path: "/streams/{id}",
            summary: "Get a stream",
            description: "Missing, another brand's, or a failed lookup: 404.",
            access: Access::Keyed(Scope::StreamsRead),
            parameters: stream_id.clone(),
            request_body: None,
            responses: vec![
                ("200", ok("The stream.", schema_ref("StreamDetail"), &[])),
                (
                    "404",
                    error("No such stream for this brand.", &["not_found"], &[]),
                ),
            ],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
        Operation {
            method: "DELETE",
            path: "/streams/{id}",
            summary: "End a live stream",
            description: "Only `live` streams end; anything else is not found. Safe to retry.",
            access: Access::Keyed(Scope::StreamsWrite),
            parameters: stream_id,
            request_body: None,
            responses: vec![
                (
                    "200",
                    ok("The stream ended.", schema_ref("StreamEnded"), &[]),
                ),
                (
                    "404",
                    error("No such live stream for this brand.", &["not_found"], &[]),
                ),
            ],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
        Operation {
            method: "GET",
            path: "/analytics",
            summary: "Analytics",
            description: "Aggregates over the streams created in the window.",
            access: Access::Keyed(Scope::AnalyticsRead),
            parameters: json!([
                query(
                    "period",
                    "`24h`, `7d` (default) or `30d`.",
                    json!({ "type": "string", "enum": ["24h", "7d", "30d"] })
                ),
                query(
                    "stream_id",
                    "Restricts to one stream; an unknown, foreign or malformed id gives zeros.",
                    json!({ "type": "string" })
                ),
            ]),
            request_body: None,
            responses: vec![
                ("200", ok("The analytics.", schema_ref("Analytics"), &[])),
                (
                    "400",
                    error(
                        "`period` is not one of the three values.",
                        &["invalid_fields"],
                        &[],
                    ),
                ),
            ],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
        Operation {
            method: "POST",
            path: "/webhooks",
            summary: "Register a webhook",
            description: "The secret is returned only here (and in a replay of this answer). At most 25 webhooks per brand.",
            access: Access::Keyed(Scope::WebhooksWrite),
            parameters: json!([]),
            request_body: Some(json_body("RegisterWebhookRequest")),
            responses: vec![
                (
                    "201",
                    ok("Registered.", schema_ref("WebhookRegistration"), &[]),
                ),
                (
                    "400",
                    error(
                        "Invalid JSON or a missing field, a URL that is not HTTPS on a public host, bad events, a malformed Idempotency-Key, or the 26th webhook.",
                        &[
                            "missing_fields",
                            "invalid_url",
                            "invalid_events",
                            "invalid_fields",
                        ],
                        &[],
                    ),
                ),
            ],
            extra_403: &[],
            extra_429: &[],
            idempotent: true,
        },
        Operation {
            method: "GET",
            path: "/webhooks",
            summary: "List webhooks",
            description: "Newest first; never the secret.",
            access: Access::Keyed(Scope::WebhooksWrite),
            parameters: json!([]),
            request_body: None,
            responses: vec![(
                "200",
                ok("The brand's webhooks.", schema_ref("WebhookList"), &[]),
            )],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
        Operation {
            method: "DELETE",
            path: "/webhooks",
            summary: "Delete a webhook",
            description: "Idempotent: never 404.",
            access: Access::Keyed(Scope::WebhooksWrite),
            parameters: json!([{ "name": "id", "in": "query", "required": true, "description": "The webhook_id.", "schema": { "type": "string" } }]),
            request_body: None,
            responses: vec![
                (
                    "200",
                    ok(
                        "Deleted (or nothing to delete).",
                        schema_ref("WebhookDeleted"),
                        &[],
                    ),
                ),
                (
                    "400",
                    error("`id` is absent or empty.", &["missing_fields"], &[]),
                ),
            ],
            extra_403: &[],
            extra_429: &[],
            idempotent: false,
        },
    ]
}

fn schemas() -> Value {
    let creator = closed(
        json!({
            "id": { "type": "string", "pattern": "^avt_" },
            "name": { "type": "string" },
            "status": nullable("string"),
            "languages": { "type": "array", "items": { "type": "string" } },
            "style": nullable("string"),
            "personality": nullable("string"),
            "vibe": nullable("string"),
            "consent": nullable("boolean"),
            "photo": { "type": ["string", "null"], "format": "uri" },
        }),
        &[],
    );
    let platform = json!({ "type": "string" });
    let summary = closed(
        json!({
            "id": uuid(), "status": statuses(), "platform": platform, "vertical": { "const": "live-commerce" },
            "creator_id": nullable("string"), "product_name": { "type": "string" }, "source": { "type": "string" },
            "room_name": nullable("string"), "started_at": nullable_timestamp(), "ended_at": nullable_timestamp(),
            "created_at": timestamp(), "viewer_count": { "type": "integer", "minimum": 0 },
            "test": { "const": true, "description": "Present, and true, only on test streams." },
        }),
        &["test"],
    );
    let detail = closed(
        json!({
            "stream_id": uuid(), "status": statuses(), "creator_id": nullable("string"),
            "product_name": { "type": "string" }, "platform": platform, "vertical": { "const": "live-commerce" },
            "viewer_count": { "type": "integer", "minimum": 0 }, "started_at": nullable_timestamp(),
            "ended_at": nullable_timestamp(), "room_name": { "type": "string" },
            "events": { "type": "array", "maxItems": 0, "description": "Reserved; always empty." },
            "created_at": timestamp(),
            "test": { "const": true, "description": "Present, and true, only on test streams." },
        }),
        &["test"],
    );
    let created = closed(
        json!({
            "stream_id": uuid(),
            "status": { "type": "string", "enum": ["preparing", "live"] },
            "room_name": { "type": "string" },
            "ws_url": { "type": ["string", "null"], "format": "uri" },
            "viewer_token": nullable("string"),
            "created_at": timestamp(),
            "test": { "const": true, "description": "Test keys only." },
            "agent_dispatched": { "type": "boolean", "description": "Live keys only." },
            "dispatch_method": { "type": ["string", "null"], "description": "Live keys only: `explicit`." },
        }),
        &["test", "agent_dispatched", "dispatch_method"],
    );
    let analytics_stream = closed(
        json!({
            "id": uuid(), "status": statuses(), "viewer_count": { "type": "integer", "minimum": 0 },
            "started_at": nullable_timestamp(), "ended_at": nullable_timestamp(),
            "platform": { "type": "string" }, "vertical": { "const": "live-commerce" },
        }),
        &[],
    );
    let webhook_events = json!({ "type": "array", "items": event_types(), "minItems": 1 });
    json!({
        "Discovery": {
            "type": "object",
            "required": ["name", "version", "status", "docs", "endpoints"],
            "properties": {
                "name": { "type": "string" }, "version": { "const": "v1" }, "status": { "type": "string" },
                "docs": { "type": "string", "format": "uri" }, "openapi": { "type": "string", "format": "uri" },
                "status_page": { "type": "string", "format": "uri" }, "authentication": { "type": "string" },
                "endpoints": { "type": "object", "additionalProperties": { "type": "string" } },
            },
            "additionalProperties": false,
        },
        "Creator": creator,
        "CreatorList": closed(json!({ "creators": { "type": "array", "items": schema_ref("Creator") } }), &[]),
        "StartStreamRequest": {
            "type": "object",
            "required": ["creator_id", "product_name", "platform"],
            "properties": {
                "creator_id": { "type": "string", "maxLength": CREATOR_ID_MAX_CHARS, "description": "The `avt_` id of a creator from GET /creators." },
                "product_name": { "type": "string", "minLength": 1, "maxLength": PRODUCT_NAME_MAX_CHARS, "pattern": "\\S" },
                "platform": { "type": "string", "maxLength": PLATFORM_MAX_CHARS, "enum": PLATFORMS },
                "duration_minutes": { "type": "integer", "minimum": DURATION_MINUTES_RANGE.start(), "maximum": DURATION_MINUTES_RANGE.end(),
                    "description": "Required for live keys; optional (and validated) for test keys, which then end after 480 minutes." },
                "script": { "type": ["string", "null"], "maxLength": SCRIPT_MAX_CHARS },
                "vertical": { "type": ["string", "null"], "description": "Must match the brand's vertical, `live-commerce`." },
            },
        },
        "StreamCreated": created,
        "StreamSummary": summary,
        "StreamList": closed(json!({
            "streams": { "type": "array", "items": schema_ref("StreamSummary") },
            "total": { "type": "integer", "minimum": 0 },
            "limit": { "type": "integer", "minimum": 1, "maximum": MAX_LIST_LIMIT },
            "offset": { "type": "integer", "minimum": 0 },
        }), &[]),
        "StreamDetail": detail,
        "StreamEnded": closed(json!({ "stream_id": uuid(), "status": { "const": "ended" }, "ended_at": timestamp() }), &[]),
        "Analytics": closed(json!({
            "period": { "type": "string", "enum": ["24h", "7d", "30d"] },
            "brand_id": { "type": "string" },
            "total_streams": { "type": "integer", "minimum": 0 },
            "total_viewers": { "type": "integer", "minimum": 0 },
            "total_minutes": { "type": "integer", "minimum": 0 },
            "live_now": { "type": "integer", "minimum": 0 },
            "avg_viewers_per_stream": { "type": "number", "minimum": 0 },
            "by_platform": { "type": "object", "additionalProperties": { "type": "integer", "minimum": 1 } },
            "streams": { "type": "array", "maxItems": 1000, "items": schema_ref("AnalyticsStream") },
        }), &[]),
        "AnalyticsStream": analytics_stream,
        "RegisterWebhookRequest": {
            "type": "object",
            "required": ["url", "events"],
            "properties": {
                "url": { "type": "string", "format": "uri", "maxLength": MAX_URL_CHARS, "description": "HTTPS on a public host." },
                "events": webhook_events,
            },
        },
        "WebhookRegistration": closed(json!({
            "webhook_id": uuid(), "url": { "type": "string" }, "events": webhook_events,
            "secret": { "type": "string", "pattern": "^whsec_[A-Za-z0-9+/]{32}$" }, "active": { "type": "boolean" },
        }), &[]),
        "WebhookListItem": closed(json!({
            "webhook_id": uuid(), "url": { "type": "string" }, "events": webhook_events,
            "active": { "type": "boolean" }, "created_at": timestamp(),
        }), &[]),
        "WebhookList": closed(json!({ "webhooks": { "type": "array", "items": schema_ref("WebhookListItem") } }), &[]),
        "WebhookDeleted": closed(json!({ "webhook_id": { "type": "string" }, "deleted": { "const": true } }), &[]),
        "WebhookEvent": closed(json!({
            "id": { "type": "string", "pattern": "^evt_[0-9a-f]{32}$", "description": "Deduplicate on this." },
            "type": event_types(),
            "created_at": timestamp(),
            "api_version": { "const": "v1" },
            "test": { "type": "boolean" },
            "data": closed(json!({ "stream": schema_ref("StreamDetail") }), &[]),
        }), &[]),
    })
}

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
