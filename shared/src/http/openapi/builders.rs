//! The building blocks of the document: schema helpers, response and header shapes, and an
//! operation with its common responses (401, 402, 403, 429, 500, rate-limit headers).

use serde_json::{Map, Value, json};

use crate::domain::idempotency::MAX_KEY_CHARS;
use crate::domain::{EventType, Scope, StreamStatus};
use crate::ratelimit::{self, REQUESTS_PER_MINUTE, WINDOW_SECS};

pub(super) fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

pub(super) fn nullable(kind: &str) -> Value {
    json!({ "type": [kind, "null"] })
}

pub(super) fn timestamp() -> Value {
    json!({ "type": "string", "format": "date-time" })
}

pub(super) fn nullable_timestamp() -> Value {
    json!({ "type": ["string", "null"], "format": "date-time" })
}

pub(super) fn uuid() -> Value {
    json!({ "type": "string", "format": "uuid" })
}

pub(super) fn statuses() -> Value {
    json!({ "type": "string", "enum": StreamStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>() })
}

pub(super) fn event_types() -> Value {
    json!({ "type": "string", "enum": EventType::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>() })
}

/// An object schema whose listed properties are all required and nothing else is allowed.
pub(super) fn closed(properties: Value, optional: &[&str]) -> Value {
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

pub(super) fn request_id_header() -> Value {
    json!({ "description": "Identifies the request (the API gateway's id when there is one).",
            "required": true, "schema": { "type": "string" } })
}

/// The rate-limit headers (extensions.md E2) of an answer to a counted request: on every
/// status of a keyed operation but 401; `required` unless the count itself may have failed.
pub(super) fn rate_limit_headers(required: bool) -> [(&'static str, Value); 2] {
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

pub(super) fn replayed_header() -> Value {
    json!({ "description": "`true` on the replay of an earlier answer to the same Idempotency-Key.",
            "required": false, "schema": { "type": "string", "enum": ["true"] } })
}

pub(super) fn idempotency_parameter() -> Value {
    json!({ "name": "Idempotency-Key", "in": "header", "required": false,
            "description": format!("Makes the create safe to retry: 1 to {MAX_KEY_CHARS} visible ASCII characters, scoped to the brand, the key environment and this operation, kept at least 24 hours. A retry with the same key and body gets the first answer again (`Idempotent-Replayed: true`); another body, `422`; while the first is still running, `409`."),
            "schema": { "type": "string", "minLength": 1, "maxLength": MAX_KEY_CHARS, "pattern": "^[\\x21-\\x7E]+$" } })
}

pub(super) fn headers(extra: &[(&str, Value)]) -> Value {
    let mut headers = Map::new();
    headers.insert("X-Request-Id".into(), request_id_header());
    for (name, header) in extra {
        headers.insert((*name).into(), header.clone());
    }
    Value::Object(headers)
}

pub(super) fn ok(description: &str, schema: Value, extra_headers: &[(&str, Value)]) -> Value {
    json!({ "description": description, "headers": headers(extra_headers),
            "content": { "application/json": { "schema": schema } } })
}

/// An error response whose `code` is one of `codes`.
pub(super) fn error(description: &str, codes: &[&str], extra_headers: &[(&str, Value)]) -> Value {
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
pub(super) enum Access {
    Public,
    Keyed(Scope),
}

pub(super) struct Operation {
    pub(super) method: &'static str,
    pub(super) path: &'static str,
    pub(super) summary: &'static str,
    pub(super) description: &'static str,
    pub(super) access: Access,
    pub(super) parameters: Value,
    pub(super) request_body: Option<Value>,
    /// Status -> response, besides the common ones of keyed operations.
    pub(super) responses: Vec<(&'static str, Value)>,
    /// Codes of 403 and 429 beyond the common ones.
    pub(super) extra_403: &'static [&'static str],
    pub(super) extra_429: &'static [&'static str],
    /// A create that takes `Idempotency-Key` (extensions.md E1).
    pub(super) idempotent: bool,
}

impl Operation {
    pub(super) fn to_json(&self) -> Value {
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

pub(super) fn query(name: &str, description: &str, schema: Value) -> Value {
    json!({ "name": name, "in": "query", "required": false, "description": description, "schema": schema })
}
