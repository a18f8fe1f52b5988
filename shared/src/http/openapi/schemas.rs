//! The component schemas: every request and response body, from the same constants the
//! validation uses.

use serde_json::{Value, json};

use super::builders::*;
use crate::domain::paging::MAX_LIST_LIMIT;
use crate::validation::{
    CREATOR_ID_MAX_CHARS, DURATION_MINUTES_RANGE, PLATFORM_MAX_CHARS, PLATFORMS,
    PRODUCT_NAME_MAX_CHARS, SCRIPT_MAX_CHARS,
};
use crate::webhook_url::MAX_URL_CHARS;

pub(super) fn schemas() -> Value {
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
