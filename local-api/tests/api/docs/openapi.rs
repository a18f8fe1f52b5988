//! The OpenAPI document itself: served publicly, complete, and in step with the router and
//! the discovery table. (Every response of every other test is validated against it too.)

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::*;
use crate::operations::{OPERATIONS, Operation};

#[tokio::test]
async fn served_publicly_and_never_rate_limited() {
    let api = TestApp::new().await;
    for _ in 0..105 {
        let r = api
            .call("GET", "/openapi.json", Some(&Keys::test_a()), None)
            .await;
        r.assert_status(200);
    }
    let r = api
        .call("GET", "/openapi.json", Some("Bearer junk"), None)
        .await;
    assert_eq!(r.body["openapi"], "3.1.0");
    assert_eq!(r.body["info"]["version"], "v1");
    // Keys of brand A were not counted.
    api.get("/streams", &Keys::test_a())
        .await
        .assert_status(200);
}

#[tokio::test]
async fn the_discovery_document_points_at_it() {
    let api = TestApp::new().await;
    let discovery = api.call("GET", "/", None, None).await.body;
    let openapi = discovery["openapi"].as_str().unwrap();
    assert!(openapi.ends_with("/api/v1/openapi.json"));
    let doc = api.call("GET", "/openapi.json", None, None).await.body;
    let server = doc["servers"][0]["url"].as_str().unwrap();
    assert_eq!(format!("{server}/openapi.json"), openapi);
}

/// The operations of a document that are not the API's, and the API's it lacks.
fn operation_problems(what: &str, listed: &[String]) -> Vec<String> {
    let listed: BTreeSet<String> = listed.iter().cloned().collect();
    let contract: BTreeSet<String> = OPERATIONS.iter().map(Operation::key).collect();
    let mut problems: Vec<String> = contract
        .difference(&listed)
        .map(|missing| format!("{what} lacks {missing}"))
        .collect();
    problems.extend(
        listed
            .difference(&contract)
            .map(|extra| format!("{what} lists {extra}, not an operation of the API")),
    );
    problems
}

/// The discovery document's `"METHOD /path"` keys, as served.
async fn discovered_operations(api: &TestApp) -> Vec<String> {
    let discovery = api.call("GET", "/", None, None).await.body;
    discovery["endpoints"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// The OpenAPI document's operations as `"METHOD /path"`.
fn documented_operations() -> Vec<String> {
    let document = hosting_docs::openapi::document("http://localhost/api/v1");
    document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, operations)| {
            operations
                .as_object()
                .unwrap()
                .keys()
                .map(move |method| format!("{} {path}", method.to_uppercase()))
        })
        .collect()
}

/// The discovery document and the OpenAPI document each list exactly the API's operations.
#[tokio::test]
async fn every_operation_is_discovered_and_documented() {
    let api = TestApp::new().await;
    let discovered = discovered_operations(&api).await;
    assert_eq!(
        operation_problems("discovery", &discovered),
        Vec::<String>::new()
    );
    let documented = documented_operations();
    assert_eq!(
        operation_problems("OpenAPI", &documented),
        Vec::<String>::new()
    );
}

/// The check is not vacuous: a document missing an operation, or listing one of its own,
/// fails it.
#[test]
fn a_missing_or_extra_operation_fails_the_document_check() {
    let mut documented = documented_operations();
    documented.retain(|operation| operation != "POST /webhooks/{id}/redeliver");
    documented.push("PUT /streams/{id}".into());
    assert_eq!(
        operation_problems("OpenAPI", &documented),
        [
            "OpenAPI lacks POST /webhooks/{id}/redeliver",
            "OpenAPI lists PUT /streams/{id}, not an operation of the API",
        ]
    );
}

/// Every documented operation is served, and on documented paths nothing else is.
#[tokio::test]
async fn the_router_serves_exactly_the_documented_operations() {
    let api = TestApp::new().await;
    let document = hosting_docs::openapi::document("http://localhost/api/v1");
    let paths = document["paths"].as_object().unwrap();
    for (template, operations) in paths {
        let path = template.replace("{id}", "00000000-0000-4000-8000-000000000000");
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            let operation = operations.get(method.to_ascii_lowercase());
            // Without a key: public operations answer, keyed ones answer 401; others 404.
            let r = api.call(method, &path, None, None).await;
            match operation {
                None => r.assert_error(404, "not_found"),
                Some(op) if op["security"] == Value::Array(vec![]) => {
                    assert_eq!(r.status.as_u16(), 200, "{method} {template}")
                }
                Some(op) => {
                    r.assert_error(401, "unauthorized");
                    let scope = op["x-required-scope"].as_str().unwrap();
                    assert_eq!(op["security"][0]["bearerAuth"][0], scope);
                }
            }
        }
    }
}

/// `end_reason` is absent until a stream finishes, and a string after: never `null`, so the
/// document must not allow one, nor require the field.
#[test]
fn end_reason_is_absent_or_a_string_never_null() {
    let document = hosting_docs::openapi::document("http://x/api/v1");
    let schemas = &document["components"]["schemas"];
    for name in ["StreamDetail", "StreamSummary"] {
        let schema = &schemas[name];
        let field = &schema["properties"]["end_reason"];
        assert!(field.is_object(), "{name}: {schema}");
        assert!(!field.to_string().contains("\"null\""), "{name}: {field}");
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        assert!(!required.contains(&json!("end_reason")), "{name}");
    }
    let reason = &schemas["EndReason"];
    assert_eq!(reason["type"], "string", "{reason}");
}

#[test]
fn constraints_come_from_the_validation_rules() {
    let document = hosting_docs::openapi::document("http://x/api/v1");
    let start = &document["components"]["schemas"]["StartStreamRequest"]["properties"];
    assert_eq!(start["creator_id"]["maxLength"], 64);
    assert_eq!(start["product_name"]["maxLength"], 200);
    assert_eq!(start["platform"]["maxLength"], 32);
    assert_eq!(start["script"]["maxLength"], 50_000);
    assert_eq!(
        (
            start["duration_minutes"]["minimum"].clone(),
            start["duration_minutes"]["maximum"].clone()
        ),
        (1.into(), 480.into())
    );
    assert_eq!(start["platform"]["enum"].as_array().unwrap().len(), 6);
    let post = &document["paths"]["/streams"]["post"]["responses"];
    for status in [
        "201", "400", "401", "402", "403", "409", "422", "429", "500", "502",
    ] {
        assert!(post.get(status).is_some(), "POST /streams {status}");
    }
    assert_eq!(
        post["201"]["headers"]["Location"]["schema"]["type"],
        "string"
    );
    assert_eq!(
        post["401"]["headers"]["WWW-Authenticate"]["schema"]["enum"],
        json!(["Bearer"])
    );
    assert_eq!(
        post["429"]["x-error-codes"],
        json!(["rate_limited", "concurrency_limit"])
    );
    // Every limit placeholder in a description was filled.
    let text = document.to_string();
    for placeholder in ["{max_", "{requests_per_minute}"] {
        assert!(
            !text.contains(placeholder),
            "{placeholder} left in the document"
        );
    }
    assert!(
        document["paths"]["/webhooks"]["post"]["description"]
            .as_str()
            .unwrap()
            .contains("At most 25 webhooks")
    );
    assert!(
        document["webhooks"]["streamEvent"]["post"]["parameters"]
            .as_array()
            .unwrap()
            .len()
            >= 6
    );
}

/// The checker is not vacuous: a body that drifts from the document fails it.
#[test]
#[should_panic(expected = "does not match the document")]
fn a_drifting_body_fails_the_contract_check() {
    let mut headers = axum::http::HeaderMap::new();
    headers.insert("content-type", "application/json".parse().unwrap());
    headers.insert("x-request-id", "x".parse().unwrap());
    let drifted = serde_json::json!({"stream_id": "00000000-0000-4000-8000-000000000000", "status": "finished", "ended_at": "2026-01-01T00:00:00.000Z"});
    crate::common::contract::check(
        "DELETE",
        "/api/v1/streams/00000000-0000-4000-8000-000000000000",
        200,
        &headers,
        &drifted,
    );
}

#[test]
#[should_panic(expected = "is not documented")]
fn an_undocumented_status_fails_the_contract_check() {
    let headers = axum::http::HeaderMap::new();
    crate::common::contract::check("GET", "/api/v1/streams", 418, &headers, &Value::Null);
}

/// The published schemas stay open for clients, yet the suite refuses undocumented fields.
#[test]
#[should_panic(expected = "does not match the document")]
fn an_undocumented_field_fails_the_contract_check() {
    let mut headers = axum::http::HeaderMap::new();
    headers.insert("content-type", "application/json".parse().unwrap());
    headers.insert("x-request-id", "x".parse().unwrap());
    let extra = serde_json::json!({"stream_id": "00000000-0000-4000-8000-000000000000", "status": "ended", "ended_at": "2026-01-01T00:00:00.000Z", "billing": 1});
    crate::common::contract::check(
        "DELETE",
        "/api/v1/streams/00000000-0000-4000-8000-000000000000",
        200,
        &headers,
        &extra,
    );
}
