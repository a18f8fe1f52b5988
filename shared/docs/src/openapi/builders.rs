//! One operation of the document from its endpoint declaration, with the responses every keyed
//! operation shares (401, 402, 403, 429, 500), the idempotent creates' (409, 422) and the
//! headers of each answer (request id, rate limit, replay).

use schemars::SchemaGenerator;
use serde_json::{Map, Value, json};

use hosting_app::ratelimit::{self, REQUESTS_PER_MINUTE, WINDOW_SECS};
use hosting_domain::error::ErrorCode::{self, *};
use hosting_domain::error::ErrorEnvelope;
use hosting_domain::idempotency::MAX_KEY_CHARS;
use hosting_domain::stream::MAX_ACTIVE_STREAMS;
use hosting_domain::webhook::MAX_WEBHOOKS_PER_BRAND;
use hosting_http::body::MAX_BODY_BYTES;
use hosting_http::endpoints::{Access, Body, Endpoint, In};

/// The two generators of one document: responses are described as serialized, request
/// bodies as deserialized (an optional field may be absent or `null`).
pub(super) struct Generators {
    pub(super) responses: SchemaGenerator,
    pub(super) requests: SchemaGenerator,
}

fn request_id_header() -> Value {
    json!({ "description": "Identifies the request (the API gateway's id when there is one).",
            "required": true, "schema": { "type": "string" } })
}

/// The rate-limit headers (docs/rate-limits.md, "Headers") of an answer to a counted request: on
/// every status of a keyed operation but 401; `required` unless the count itself may have
/// failed.
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

/// `text` with its limit placeholders filled from the constants the rules use.
pub(super) fn fill(text: &str) -> String {
    [
        ("{max_webhooks}", MAX_WEBHOOKS_PER_BRAND.to_string()),
        (
            "{max_clips_per_stream}",
            hosting_domain::clip::MAX_CLIPS_PER_STREAM.to_string(),
        ),
        ("{max_active_streams}", MAX_ACTIVE_STREAMS.to_string()),
        ("{requests_per_minute}", REQUESTS_PER_MINUTE.to_string()),
        (
            "{max_test_viewer_count}",
            hosting_domain::validation::MAX_TEST_VIEWER_COUNT.to_string(),
        ),
        (
            "{max_body}",
            format!("{} MiB", MAX_BODY_BYTES / (1024 * 1024)),
        ),
    ]
    .iter()
    .fold(text.to_owned(), |text, (placeholder, value)| {
        text.replace(placeholder, value)
    })
}

/// A response with `content` (media type -> schema), `X-Request-Id` and `headers`.
fn response(description: &str, content: Value, headers: Map<String, Value>) -> Value {
    let mut all = Map::new();
    all.insert("X-Request-Id".into(), request_id_header());
    all.extend(headers);
    json!({ "description": fill(description), "headers": all, "content": content })
}

/// An error response: the `Error` envelope, and in `x-error-codes` the codes this status
/// answers with here (the suite checks every error it receives against them).
fn error(generators: &mut Generators, description: &str, codes: &[ErrorCode]) -> Value {
    let schema = generators.responses.subschema_for::<ErrorEnvelope>();
    let content = json!({ "application/json": { "schema": schema.to_value() } });
    let mut answer = response(description, content, Map::new());
    answer["x-error-codes"] = json!(codes.iter().map(|c| c.as_str()).collect::<Vec<_>>());
    answer
}

fn operation_responses(endpoint: &Endpoint, generators: &mut Generators) -> Map<String, Value> {
    let mut responses = Map::new();
    // A declared 403 or 429 adds its codes to the ones every keyed operation has.
    let mut forbidden = vec![InsufficientScope];
    let mut limited = vec![RateLimited];
    // A declared 409 of an idempotent create adds its codes to the key's own.
    let mut conflict = vec![IdempotencyKeyInUse];
    let mut descriptions = Map::new();
    for declared in endpoint.responses {
        let status = declared.status.to_string();
        let content = match &declared.body {
            Body::Json(schema) => {
                json!({ "application/json": { "schema": schema(&mut generators.responses).to_value() } })
            }
            Body::Html => json!({ "text/html": { "schema": { "type": "string" } } }),
            Body::Text(media_type) => json!({ *media_type: { "schema": { "type": "string" } } }),
            Body::Error(codes) if declared.status == 403 => {
                forbidden.extend_from_slice(codes);
                descriptions.insert(status, declared.description.into());
                continue;
            }
            Body::Error(codes) if declared.status == 429 => {
                limited.extend_from_slice(codes);
                descriptions.insert(status, declared.description.into());
                continue;
            }
            Body::Error(codes) if declared.status == 409 && endpoint.idempotent => {
                conflict.extend_from_slice(codes);
                descriptions.insert(status, declared.description.into());
                continue;
            }
            Body::Error(codes) => {
                responses.insert(status, error(generators, declared.description, codes));
                continue;
            }
        };
        let mut headers = Map::new();
        for header in declared.headers {
            let schema = (header.schema)(&mut generators.responses).to_value();
            headers.insert(
                header.name.into(),
                json!({ "description": header.description, "required": true, "schema": schema }),
            );
        }
        responses.insert(status, response(declared.description, content, headers));
    }
    let Access::Keyed(scope) = endpoint.access else {
        return responses;
    };
    let described = |status: &str, default: String| {
        descriptions
            .get(status)
            .and_then(Value::as_str)
            .map_or(default, str::to_owned)
    };
    let mut unauthorized = error(
        generators,
        "Missing, malformed, unknown, revoked or expired key (identical body in every case).",
        &[Unauthorized],
    );
    unauthorized["headers"]["WWW-Authenticate"] = json!({ "description": "Always `Bearer`.",
        "required": true, "schema": { "type": "string", "enum": ["Bearer"] } });
    responses.insert("401".into(), unauthorized);
    responses.insert(
        "402".into(),
        error(
            generators,
            "Live key of a brand below the Growth plan.",
            &[PlanRequired],
        ),
    );
    let forbidden_text = described(
        "403",
        format!("The key lacks `{scope}` (the message names it)."),
    );
    responses.insert("403".into(), error(generators, &forbidden_text, &forbidden));
    let limited_text = described(
        "429",
        "Over {requests_per_minute} requests in the current UTC minute for the brand. No Retry-After.".into(),
    );
    responses.insert("429".into(), error(generators, &limited_text, &limited));
    if !responses.contains_key("500") {
        let failure = error(
            generators,
            "Server-side database failure; safe to retry with backoff.",
            &[DbError],
        );
        responses.insert("500".into(), failure);
    }
    if endpoint.idempotent {
        let in_use_text = "Another request with this Idempotency-Key is still running.";
        let in_use_text = match descriptions.get("409").and_then(Value::as_str) {
            Some(declared) => format!("{declared} Or (`idempotency_key_in_use`): {in_use_text}"),
            None => in_use_text.to_owned(),
        };
        let in_use = error(generators, &in_use_text, &conflict);
        responses.insert("409".into(), in_use);
        let mismatch = error(
            generators,
            "This Idempotency-Key was used with another request body.",
            &[IdempotencyKeyMismatch],
        );
        responses.insert("422".into(), mismatch);
        // A replay answers with the stored status: the create's, or its launch failure.
        for status in ["201", "202", "502"] {
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
    responses
}

/// The document's operation for `endpoint`.
pub(super) fn operation(endpoint: &Endpoint, generators: &mut Generators) -> Value {
    let mut parameters: Vec<Value> = endpoint
        .parameters
        .iter()
        .chain(endpoint.query)
        .map(|p| {
            let location = match p.location {
                In::Path => "path",
                In::Query => "query",
            };
            json!({ "name": p.name, "in": location, "required": p.required,
                    "description": fill(p.description),
                    "schema": (p.schema)(&mut generators.requests).to_value() })
        })
        .collect();
    if endpoint.idempotent {
        parameters.push(idempotency_parameter());
    }
    let mut operation = json!({
        "operationId": endpoint.operation_id,
        "tags": [endpoint.tag],
        "summary": endpoint.summary,
        "description": fill(endpoint.description),
        "parameters": parameters,
        "responses": operation_responses(endpoint, generators),
    });
    match endpoint.access {
        Access::Public => operation["security"] = json!([]),
        Access::Keyed(scope) => {
            operation["security"] = json!([{ "bearerAuth": [scope.as_str()] }]);
            operation["x-required-scope"] = json!(scope.as_str());
        }
    }
    if let Some(body) = endpoint.request_body {
        let schema = body(&mut generators.requests).to_value();
        operation["requestBody"] = json!({ "required": !endpoint.body_optional,
            "description": fill("JSON, whatever the Content-Type; at most {max_body}."),
            "content": { "application/json": { "schema": schema } } });
    }
    operation
}
