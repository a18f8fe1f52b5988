//! Every endpoint of the API, declared once: method, path, access, parameters, request body
//! and responses. The router ([`super::routes`]), the discovery document (`GET /`), the
//! OpenAPI document ([`super::openapi`]) and the scope tests all read these declarations.
//! Adding an endpoint means one declaration here, its handler and its service.
//!
//! Bodies are named by their Rust types, whose schemas are derived (`schemars`) with the
//! limits the validation enforces. Responses every keyed endpoint shares (401, 402, 403, 429,
//! 500, and 409/422 of idempotent creates) are added by the OpenAPI builder; a declared 403
//! or 429 adds its codes to the shared ones. Descriptions name limits by placeholder
//! (`{max_webhooks}`), filled from the constants the rules use when the document is built.

use std::collections::BTreeMap;

use axum::http::Method;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Serialize;

use crate::domain::analytics::Analytics;
use crate::domain::creator::CreatorList;
use crate::domain::paging::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};
use crate::domain::stream::{StreamCreated, StreamDetail, StreamEnded, StreamList};
use crate::domain::webhook::{
    RegisterWebhookRequest, RotateSecretRequest, SecretRotated, UpdateWebhookRequest,
    WebhookDeleted, WebhookDetail, WebhookList, WebhookRegistered,
};
use crate::domain::{Scope, StreamStatus};
use crate::error::ErrorCode::{self, *};
use crate::validation::StartStreamRequest;

/// Who may call an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No key; any `Authorization` header is ignored.
    Public,
    /// A key holding this scope, through the whole pipeline (decisions.md section 1).
    Keyed(Scope),
}

/// Where a parameter is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    Path,
    Query,
}

/// A schema by name: `schema_of::<T>` for a Rust type, or a hand-written one.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// The schema of `T`, registered as a named component.
pub fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

pub struct Parameter {
    pub name: &'static str,
    pub location: In,
    pub required: bool,
    pub description: &'static str,
    pub schema: SchemaFn,
}

pub enum Body {
    /// `application/json` of this schema.
    Json(SchemaFn),
    /// The error envelope, with one of these codes.
    Error(&'static [ErrorCode]),
    /// A web page.
    Html,
}

pub struct Header {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: SchemaFn,
}

pub struct Response {
    pub status: u16,
    pub description: &'static str,
    pub body: Body,
    pub headers: &'static [Header],
}

pub struct Endpoint {
    /// The OpenAPI `operationId`, the name generated clients give the call.
    pub operation_id: &'static str,
    /// The group generated clients file the call under (`streams`, `webhooks`, ...).
    pub tag: &'static str,
    pub method: Method,
    /// Relative to the base URL (`/api/v1`), in axum's `{param}` syntax.
    pub path: &'static str,
    pub access: Access,
    /// One line: the discovery document's description and the OpenAPI summary.
    pub summary: &'static str,
    pub description: &'static str,
    pub parameters: &'static [Parameter],
    pub request_body: Option<SchemaFn>,
    /// The request body may be left out entirely.
    pub body_optional: bool,
    pub responses: &'static [Response],
    /// A create that takes `Idempotency-Key` (extensions.md E1).
    pub idempotent: bool,
}

impl Endpoint {
    pub fn scope(&self) -> Option<Scope> {
        match self.access {
            Access::Public => None,
            Access::Keyed(scope) => Some(scope),
        }
    }

    /// The discovery document's description: the summary and who may call.
    pub fn discovery_description(&self) -> String {
        match self.access {
            Access::Public => format!("{} Public, no key needed.", self.summary),
            Access::Keyed(scope) => format!("{} Requires scope {scope}.", self.summary),
        }
    }
}

fn string(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string" })
}

fn stream_status(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<StreamStatus>()
}

fn list_limit(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": MAX_LIST_LIMIT, "default": DEFAULT_LIST_LIMIT })
}

fn list_offset(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 0, "default": 0 })
}

fn period(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<crate::domain::analytics::Period>()
}

fn cache_control(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": ["public, max-age=60"] })
}

fn docs_cache_control(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": [DOCS_CACHE_CONTROL] })
}

/// The reference page changes only with a release.
pub const DOCS_CACHE_CONTROL: &str = "public, max-age=300";

fn openapi_document(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object", "required": ["openapi", "paths"] })
}

const STREAM_ID: Parameter = Parameter {
    name: "id",
    location: In::Path,
    required: true,
    description: "The stream's UUID. Anything else is simply not found.",
    schema: string,
};

pub static DISCOVERY: Endpoint = Endpoint {
    operation_id: "getDiscovery",
    tag: "discovery",
    method: Method::GET,
    path: "/",
    access: Access::Public,
    summary: "Discovery document; usable as a liveness check.",
    description: "Names the API and lists every endpoint with the scope it needs.",
    parameters: &[],
    request_body: None,
    body_optional: false,
    responses: &[Response {
        status: 200,
        description: "The discovery document.",
        body: Body::Json(schema_of::<Discovery>),
        headers: &[],
    }],
    idempotent: false,
};

pub static OPENAPI: Endpoint = Endpoint {
    operation_id: "getOpenApi",
    tag: "discovery",
    method: Method::GET,
    path: "/openapi.json",
    access: Access::Public,
    summary: "This API's OpenAPI 3.1 description.",
    description: "The machine-readable description of every operation, built from the same declarations that route requests.",
    parameters: &[],
    request_body: None,
    body_optional: false,
    responses: &[Response {
        status: 200,
        description: "The OpenAPI document.",
        body: Body::Json(openapi_document),
        headers: &[],
    }],
    idempotent: false,
};

pub static DOCS: Endpoint = Endpoint {
    operation_id: "getDocs",
    tag: "discovery",
    method: Method::GET,
    path: "/docs",
    access: Access::Public,
    summary: "This reference as a web page.",
    description: "HTML rendered from the OpenAPI document: every operation, the errors, the event catalogue and a guide to receiving webhooks. Self-contained: it loads nothing from another host and runs no script. Never rate limited.",
    parameters: &[],
    request_body: None,
    body_optional: false,
    responses: &[Response {
        status: 200,
        description: "The reference page.",
        body: Body::Html,
        headers: &[Header {
            name: "Cache-Control",
            description: "Always `public, max-age=300`.",
            schema: docs_cache_control,
        }],
    }],
    idempotent: false,
};

pub static LIST_CREATORS: Endpoint = Endpoint {
    operation_id: "listCreators",
    tag: "creators",
    method: Method::GET,
    path: "/creators",
    access: Access::Public,
    summary: "Stock creators (AI hosts), sorted by name.",
    description: "Sorted by name (case-insensitive), then id. Never rate limited.",
    parameters: &[],
    request_body: None,
    body_optional: false,
    responses: &[
        Response {
            status: 200,
            description: "The creators.",
            body: Body::Json(schema_of::<CreatorList>),
            headers: &[Header {
                name: "Cache-Control",
                description: "Always `public, max-age=60`.",
                schema: cache_control,
            }],
        },
        Response {
            status: 500,
            description: "Server-side database failure.",
            body: Body::Error(&[DbError]),
            headers: &[],
        },
    ],
    idempotent: false,
};

pub static START_STREAM: Endpoint = Endpoint {
    operation_id: "startStream",
    tag: "streams",
    method: Method::POST,
    path: "/streams",
    access: Access::Keyed(Scope::StreamsWrite),
    summary: "Start a stream and dispatch its AI host.",
    description: "Live keys create the stream `preparing` and dispatch the AI host; test keys simulate the lifecycle (`live` at once, no room, no billing). Checks in order: missing fields, field constraints, vertical, creator, concurrency.",
    parameters: &[],
    request_body: Some(schema_of::<StartStreamRequest>),
    body_optional: false,
    responses: &[
        Response {
            status: 201,
            description: "Stream created.",
            body: Body::Json(schema_of::<StreamCreated>),
            headers: &[Header {
                name: "Location",
                description: "Path of the new stream.",
                schema: string,
            }],
        },
        Response {
            status: 400,
            description: "Invalid JSON or a missing field (`missing_fields`), a violated constraint or a malformed Idempotency-Key (`invalid_fields`), or an unknown creator (`invalid_creator`).",
            body: Body::Error(&[MissingFields, InvalidFields, InvalidCreator]),
            headers: &[],
        },
        Response {
            status: 403,
            description: "The key lacks `streams:write` (the message names it), or `vertical` is not the brand's.",
            body: Body::Error(&[VerticalMismatch]),
            headers: &[],
        },
        Response {
            status: 429,
            description: "Over {requests_per_minute} requests in the current UTC minute for the brand, or {max_active_streams} streams already active. No Retry-After.",
            body: Body::Error(&[ConcurrencyLimit]),
            headers: &[],
        },
        Response {
            status: 502,
            description: "Room creation or dispatch failed after the record was created; the stream exists with status `error`.",
            body: Body::Error(&[LaunchFailed]),
            headers: &[],
        },
    ],
    idempotent: true,
};

pub static LIST_STREAMS: Endpoint = Endpoint {
    operation_id: "listStreams",
    tag: "streams",
    method: Method::GET,
    path: "/streams",
    access: Access::Keyed(Scope::StreamsRead),
    summary: "List the brand's streams, newest first.",
    description: "Newest first. Never answers 400: a malformed or out-of-range `limit` or `offset` takes its default or is clamped, and an unknown `status` matches nothing.",
    parameters: &[
        Parameter {
            name: "status",
            location: In::Query,
            required: false,
            description: "Only streams in this status.",
            schema: stream_status,
        },
        Parameter {
            name: "limit",
            location: In::Query,
            required: false,
            description: "Page size; clamped into range.",
            schema: list_limit,
        },
        Parameter {
            name: "offset",
            location: In::Query,
            required: false,
            description: "Streams to skip; clamped to 0.",
            schema: list_offset,
        },
    ],
    request_body: None,
    body_optional: false,
    responses: &[Response {
        status: 200,
        description: "A page of streams.",
        body: Body::Json(schema_of::<StreamList>),
        headers: &[],
    }],
    idempotent: false,
};

pub static GET_STREAM: Endpoint = Endpoint {
    operation_id: "getStream",
    tag: "streams",
    method: Method::GET,
    path: "/streams/{id}",
    access: Access::Keyed(Scope::StreamsRead),
    summary: "Get one stream.",
    description: "Missing, another brand's, or a failed lookup: 404.",
    parameters: &[STREAM_ID],
    request_body: None,
    body_optional: false,
    responses: &[
        Response {
            status: 200,
            description: "The stream.",
            body: Body::Json(schema_of::<StreamDetail>),
            headers: &[],
        },
        Response {
            status: 404,
            description: "No such stream for this brand.",
            body: Body::Error(&[NotFound]),
            headers: &[],
        },
    ],
    idempotent: false,
};

pub static END_STREAM: Endpoint = Endpoint {
    operation_id: "endStream",
    tag: "streams",
    method: Method::DELETE,
    path: "/streams/{id}",
    access: Access::Keyed(Scope::StreamsWrite),
    summary: "End a live stream.",
    description: "Only `live` streams end; anything else is not found. Safe to retry.",
    parameters: &[STREAM_ID],
    request_body: None,
    body_optional: false,
    responses: &[
        Response {
            status: 200,
            description: "The stream ended.",
            body: Body::Json(schema_of::<StreamEnded>),
            headers: &[],
        },
        Response {
            status: 404,
            description: "No such live stream for this brand.",
            body: Body::Error(&[NotFound]),
            headers: &[],
        },
    ],
    idempotent: false,
};

pub static GET_ANALYTICS: Endpoint = Endpoint {
    operation_id: "getAnalytics",
    tag: "analytics",
    method: Method::GET,
    path: "/analytics",
    access: Access::Keyed(Scope::AnalyticsRead),
    summary: "Aggregate analytics over 24h, 7d or 30d.",
    description: "Aggregates over the streams created in the window.",
    parameters: &[
        Parameter {
            name: "period",
            location: In::Query,
            required: false,
            description: "The window; `7d` when absent.",
            schema: period,
        },
        Parameter {
            name: "stream_id",
            location: In::Query,
            required: false,
            description: "Restricts to one stream; an unknown, foreign or malformed id gives zeros.",
            schema: string,
        },
    ],
    request_body: None,
    body_optional: false,
    responses: &[
        Response {
            status: 200,
            description: "The analytics.",
            body: Body::Json(schema_of::<Analytics>),
            headers: &[],
        },
        Response {
            status: 400,
            description: "`period` is not one of the three values.",
            body: Body::Error(&[InvalidFields]),
            headers: &[],
        },
    ],
    idempotent: false,
};

pub static REGISTER_WEBHOOK: Endpoint = Endpoint {
    operation_id: "registerWebhook",
    tag: "webhooks",
    method: Method::POST,
    path: "/webhooks",
    access: Access::Keyed(Scope::WebhooksWrite),
    summary: "Register a webhook.",
    description: "The secret is returned only here (and in a replay of this answer). At most {max_webhooks} webhooks per brand.",
    parameters: &[],
    request_body: Some(schema_of::<RegisterWebhookRequest>),
    body_optional: false,
    responses: &[
        Response {
            status: 201,
            description: "Registered.",
            body: Body::Json(schema_of::<WebhookRegistered>),
            headers: &[],
        },
        Response {
            status: 400,
            description: "Invalid JSON or a missing field, a URL that is not HTTPS on a public host, bad events, a malformed Idempotency-Key, or a webhook over the {max_webhooks}.",
            body: Body::Error(&[MissingFields, InvalidUrl, InvalidEvents, InvalidFields]),
            headers: &[],
        },
    ],
    idempotent: true,
};

pub static LIST_WEBHOOKS: Endpoint = Endpoint {
    operation_id: "listWebhooks",
    tag: "webhooks",
    method: Method::GET,
    path: "/webhooks",
    access: Access::Keyed(Scope::WebhooksWrite),
    summary: "List the brand's webhooks.",
    description: "Newest first; never the secret.",
    parameters: &[],
    request_body: None,
    body_optional: false,
    responses: &[Response {
        status: 200,
        description: "The brand's webhooks.",
        body: Body::Json(schema_of::<WebhookList>),
        headers: &[],
    }],
    idempotent: false,
};

pub static DELETE_WEBHOOK: Endpoint = Endpoint {
    operation_id: "deleteWebhook",
    tag: "webhooks",
    method: Method::DELETE,
    path: "/webhooks",
    access: Access::Keyed(Scope::WebhooksWrite),
    summary: "Delete a webhook: ?id=<webhook_id>.",
    description: "Idempotent: never 404.",
    parameters: &[Parameter {
        name: "id",
        location: In::Query,
        required: true,
        description: "The webhook_id.",
        schema: string,
    }],
    request_body: None,
    body_optional: false,
    responses: &[
        Response {
            status: 200,
            description: "Deleted (or nothing to delete).",
            body: Body::Json(schema_of::<WebhookDeleted>),
            headers: &[],
        },
        Response {
            status: 400,
            description: "`id` is absent or empty.",
            body: Body::Error(&[MissingFields]),
            headers: &[],
        },
    ],
    idempotent: false,
};

const WEBHOOK_ID: Parameter = Parameter {
    name: "id",
    location: In::Path,
    required: true,
    description: "The `webhook_id`. Absent, another brand's or not a UUID: 404.",
    schema: string,
};

const WEBHOOK_NOT_FOUND: Response = Response {
    status: 404,
    description: "No such webhook for this brand.",
    body: Body::Error(&[NotFound]),
    headers: &[],
};

pub static GET_WEBHOOK: Endpoint = Endpoint {
    operation_id: "getWebhook",
    tag: "webhooks",
    method: Method::GET,
    path: "/webhooks/{id}",
    access: Access::Keyed(Scope::WebhooksWrite),
    summary: "Get one webhook.",
    description: "Never the secret; `secret_rotated_at` tells when it last changed.",
    parameters: &[WEBHOOK_ID],
    request_body: None,
    body_optional: false,
    responses: &[
        Response {
            status: 200,
            description: "The webhook.",
            body: Body::Json(schema_of::<WebhookDetail>),
            headers: &[],
        },
        WEBHOOK_NOT_FOUND,
    ],
    idempotent: false,
};

pub static UPDATE_WEBHOOK: Endpoint = Endpoint {
    operation_id: "updateWebhook",
    tag: "webhooks",
    method: Method::PATCH,
    path: "/webhooks/{id}",
    access: Access::Keyed(Scope::WebhooksWrite),
    summary: "Change a webhook's URL, events or active state.",
    description: "Any of `url`, `events`, `active`, each checked as at registration, in that order; unknown fields are ignored. `active: true` re-enables a webhook that a `410 Gone` turned off.",
    parameters: &[WEBHOOK_ID],
    request_body: Some(schema_of::<UpdateWebhookRequest>),
    body_optional: false,
    responses: &[
        Response {
            status: 200,
            description: "The webhook as changed.",
            body: Body::Json(schema_of::<WebhookDetail>),
            headers: &[],
        },
        Response {
            status: 400,
            description: "Invalid JSON, not an object or none of the three fields (`missing_fields`), a URL that is not HTTPS on a public host (`invalid_url`), bad events (`invalid_events`), or an `active` that is not a boolean (`invalid_fields`).",
            body: Body::Error(&[MissingFields, InvalidUrl, InvalidEvents, InvalidFields]),
            headers: &[],
        },
        WEBHOOK_NOT_FOUND,
    ],
    idempotent: false,
};

pub static ROTATE_WEBHOOK_SECRET: Endpoint = Endpoint {
    operation_id: "rotateWebhookSecret",
    tag: "webhooks",
    method: Method::POST,
    path: "/webhooks/{id}/rotate-secret",
    access: Access::Keyed(Scope::WebhooksWrite),
    summary: "Rotate a webhook's secret without downtime.",
    description: "A new secret, shown only in this answer. Until `previous_secret_expires_at` every delivery is signed with both the new and the replaced secret (two `v1=` in `X-Service-Signature`, two `v1,` in `webhook-signature`), so receivers verify with either while they switch; after it, with the new one only. A rotation during an overlap drops the oldest: at most two secrets sign at any time. The body is optional.",
    parameters: &[WEBHOOK_ID],
    request_body: Some(schema_of::<RotateSecretRequest>),
    body_optional: true,
    responses: &[
        Response {
            status: 200,
            description: "The new secret.",
            body: Body::Json(schema_of::<SecretRotated>),
            headers: &[],
        },
        Response {
            status: 400,
            description: "`expire_previous_in_seconds` is not a whole number from 0 to 86400, or the body is not a JSON object.",
            body: Body::Error(&[InvalidFields]),
            headers: &[],
        },
        WEBHOOK_NOT_FOUND,
    ],
    idempotent: false,
};

/// Every endpoint, in the order documents list them.
pub static ENDPOINTS: &[&Endpoint] = &[
    &DISCOVERY,
    &OPENAPI,
    &DOCS,
    &LIST_CREATORS,
    &START_STREAM,
    &LIST_STREAMS,
    &GET_STREAM,
    &END_STREAM,
    &GET_ANALYTICS,
    &REGISTER_WEBHOOK,
    &LIST_WEBHOOKS,
    &DELETE_WEBHOOK,
    &GET_WEBHOOK,
    &UPDATE_WEBHOOK,
    &ROTATE_WEBHOOK_SECRET,
];

// api-v1.md "Discovery document".
/// What the API is and which endpoints it serves.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Discovery {
    pub name: &'static str,
    pub version: &'static str,
    pub status: &'static str,
    /// The reference page, for people.
    #[schemars(url)]
    pub docs: String,
    /// The OpenAPI document, for programs.
    #[schemars(url)]
    pub openapi: String,
    /// `"<METHOD> <path>"` -> what it does and the scope it needs.
    pub endpoints: BTreeMap<String, String>,
    pub authentication: String,
}

/// The discovery document for an API served at `base_url` (ending in `/api/v1`).
pub fn discovery_document(base_url: &str) -> Discovery {
    let scopes: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    let public: Vec<String> = ENDPOINTS
        .iter()
        .filter(|e| e.access == Access::Public && !matches!(e.path, "/openapi.json" | "/docs"))
        .map(|e| format!("{} {}", e.method, e.path))
        .collect();
    Discovery {
        name: "Live Stream Hosting API",
        version: "v1",
        status: "early_access",
        docs: format!("{base_url}{}", DOCS.path),
        openapi: format!("{base_url}{}", OPENAPI.path),
        endpoints: ENDPOINTS
            .iter()
            .map(|e| {
                (
                    format!("{} {}", e.method, e.path),
                    e.discovery_description(),
                )
            })
            .collect(),
        authentication: format!(
            "Send `Authorization: Bearer <API_KEY>`. Keys start with svc_live_ (live) or svc_test_ (test) and carry scopes: {}. {} are public.",
            scopes.join(", "),
            public.join(" and ")
        ),
    }
}
