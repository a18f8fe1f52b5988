//! Every operation of the API, with its parameters, body and responses.

use serde_json::json;

use super::builders::*;
use crate::domain::Scope;
use crate::domain::paging::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};

pub(super) fn operations() -> Vec<Operation> {
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
