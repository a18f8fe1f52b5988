//! Routing and the envelope: unknown routes, trailing slashes, request ids and body limits.

use axum::body::Body;
use axum::http::Request;
use serde_json::json;

use crate::common::*;

#[tokio::test]
async fn unknown_routes_and_methods_get_the_404_envelope() {
    let api = TestApp::new().await;
    let cases = [
        ("GET", "/nope"),
        ("GET", "/streams/a/b"),
        ("PUT", "/streams"),
        ("PATCH", "/streams/00000000-0000-4000-8000-000000000000"),
        ("POST", "/creators"),
        ("DELETE", "/"),
        ("POST", "/analytics"),
        ("PUT", "/webhooks"),
    ];
    for (method, path) in cases {
        let r = api.call(method, path, Some(&Keys::test_a()), None).await;
        r.assert_error(404, "not_found");
        assert!(r.header("x-request-id").is_some());
    }
    let outside = api
        .send(
            Request::builder()
                .uri("/elsewhere")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    outside.assert_error(404, "not_found");
}

#[tokio::test]
async fn trailing_slash_is_the_same_route() {
    let api = TestApp::new().await;
    api.get("/streams/", &Keys::test_a())
        .await
        .assert_status(200);
    api.get("/webhooks/", &Keys::test_a())
        .await
        .assert_status(200);
    let r = api.call("GET", "/creators/", None, None).await;
    r.assert_status(200);
}

#[tokio::test]
async fn every_response_is_json_with_a_request_id() {
    let api = TestApp::new().await;
    let responses = [
        api.call("GET", "/", None, None).await,
        api.call("GET", "/creators", None, None).await,
        api.get("/streams", &Keys::test_a()).await,
        api.get("/streams", "bad").await,
        api.get("/nope", &Keys::test_a()).await,
        api.call_raw("POST", "/streams", Some(&Keys::test_a()), Some("{"))
            .await,
    ];
    let mut ids = std::collections::HashSet::new();
    for r in responses {
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert!(ids.insert(r.header("x-request-id").unwrap().to_owned()));
    }
}

#[tokio::test]
async fn the_gateway_request_id_is_echoed() {
    let api = TestApp::new().await;
    let mut request = Request::builder()
        .uri("/api/v1/")
        .body(Body::empty())
        .unwrap();
    request
        .extensions_mut()
        .insert(hosting_http::GatewayRequestId("gw-123".into()));
    let r = api.send(request).await;
    assert_eq!(r.header("x-request-id"), Some("gw-123"));
}

#[tokio::test]
async fn bodies_over_1_mib_are_invalid_fields() {
    let api = TestApp::new().await;
    let product = "p".repeat(1024 * 1024);
    let body = json!({"creator_id": CREATOR_AVA, "product_name": product, "platform": "kick"});
    api.post("/streams", &Keys::test_a(), body)
        .await
        .assert_error(400, "invalid_fields");
    api.post(
        "/webhooks",
        &Keys::test_a(),
        json!({"url": "x".repeat(1024 * 1024), "events": []}),
    )
    .await
    .assert_error(400, "invalid_fields");
}
