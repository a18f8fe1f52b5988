//! Every response the suite receives is checked against the OpenAPI document: a documented
//! operation, a documented status, a body that validates against that status's schema, and
//! the documented headers. A field, status or header that drifts fails the test that saw it.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use axum::http::HeaderMap;
use serde_json::{Value, json};

static DOCUMENT: LazyLock<Value> =
    LazyLock::new(|| hosting_docs::openapi::document("http://localhost/api/v1"));

type Validators = Mutex<HashMap<(String, String, String), Arc<jsonschema::Validator>>>;
static VALIDATORS: LazyLock<Validators> = LazyLock::new(Default::default);

/// The document's path template matching a concrete path, if any.
fn template_for(path: &str) -> Option<String> {
    let paths = DOCUMENT["paths"].as_object().unwrap();
    let segments: Vec<&str> = path.split('/').collect();
    paths
        .keys()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(t, s)| t == s || (t.starts_with('{') && !s.is_empty()))
        })
        .cloned()
}

fn validator(
    template: &str,
    method: &str,
    status: &str,
    schema: &Value,
) -> Arc<jsonschema::Validator> {
    let key = (template.to_owned(), method.to_owned(), status.to_owned());
    let mut cache = VALIDATORS.lock().unwrap();
    cache
        .entry(key)
        .or_insert_with(|| {
            // A standalone JSON Schema: the document's component schemas as $defs.
            let text = json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$defs": DOCUMENT["components"]["schemas"],
                "allOf": [schema],
            })
            .to_string()
            .replace("#/components/schemas/", "#/$defs/");
            let mut schema: Value = serde_json::from_str(&text).unwrap();
            close_objects(&mut schema);
            Arc::new(
                jsonschema::options()
                    .should_validate_formats(true)
                    .build(&schema)
                    .expect("the document's schemas compile"),
            )
        })
        .clone()
}

/// The published schemas leave objects open, so clients tolerate fields added later; the
/// suite holds the API to exactly the documented fields.
fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.contains_key("properties") && !object.contains_key("additionalProperties") {
                object.insert("additionalProperties".into(), Value::Bool(false));
            }
            object.values_mut().for_each(close_objects);
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// Checks one exchange; `path` may carry a query string.
pub fn check(method: &str, uri_path: &str, status: u16, headers: &HeaderMap, body: &Value) {
    let Some(api_path) = uri_path.strip_prefix("/api/v1") else {
        return; // LiveKit's receiver is not part of the public API.
    };
    let path = api_path.split('?').next().unwrap_or("");
    let trimmed = path.trim_end_matches('/');
    let path = if trimmed.is_empty() { "/" } else { trimmed };
    let method_key = method.to_ascii_lowercase();
    let operation = template_for(path).and_then(|t| {
        DOCUMENT["paths"][&t]
            .get(&method_key)
            .map(|op| (t.clone(), op.clone()))
    });
    let Some((template, operation)) = operation else {
        // Not an operation of the API: the 404 envelope.
        assert_eq!(
            status, 404,
            "{method} {path} is not documented, yet answered {status}"
        );
        assert_eq!(body["error"]["code"], "not_found");
        return;
    };
    let status_key = status.to_string();
    let Some(response) = operation["responses"].get(&status_key) else {
        panic!("{method} {template}: status {status} is not documented (body {body})");
    };
    let media_type = response["content"]
        .as_object()
        .and_then(|content| content.keys().next())
        .cloned()
        .unwrap_or_default();
    if media_type == "application/json" {
        let schema = &response["content"]["application/json"]["schema"];
        let validator = validator(&template, &method_key, &status_key, schema);
        let errors: Vec<String> = validator
            .iter_errors(body)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {template} {status}: the body does not match the document: {errors:?}\nbody: {body}"
        );
    }
    if let Some(codes) = response["x-error-codes"].as_array() {
        assert!(
            codes.contains(&body["error"]["code"]),
            "{method} {template} {status}: code {} is not one of {codes:?}",
            body["error"]["code"]
        );
    }
    if let Some(documented) = response["headers"].as_object() {
        for (name, header) in documented {
            let value = headers.get(name.as_str()).and_then(|v| v.to_str().ok());
            if header["required"] == true {
                assert!(
                    value.is_some(),
                    "{method} {template} {status}: header {name} is missing"
                );
            }
            let Some(value) = value else { continue };
            if let Some(allowed) = header["schema"]["enum"].as_array() {
                assert!(
                    allowed.iter().any(|a| a.as_str() == Some(value)),
                    "{method} {template} {status}: header {name} is {value}"
                );
            }
            if let Some(pattern) = header["schema"]["pattern"].as_str() {
                let matcher =
                    jsonschema::validator_for(&json!({"type": "string", "pattern": pattern}))
                        .expect("a header pattern compiles");
                assert!(
                    matcher.is_valid(&json!(value)),
                    "{method} {template} {status}: header {name} is {value}"
                );
            }
        }
    }
    // Headers the document does not declare for this answer are not sent either.
    for name in ["ratelimit", "ratelimit-policy", "idempotent-replayed"] {
        if headers.contains_key(name) {
            assert!(
                response["headers"]
                    .as_object()
                    .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case(name))),
                "{method} {template} {status}: undocumented header {name}"
            );
        }
    }
    // JSON exactly; a page may name its charset.
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        content_type == media_type
            || (media_type.starts_with("text/")
                && content_type.starts_with(&format!("{media_type};"))),
        "{method} {template} {status}: content-type {content_type}, documented {media_type}"
    );
}
