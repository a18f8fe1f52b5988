//! Safe retries of creates (docs/idempotency.md): `Idempotency-Key` on `POST /streams` and
//! `POST /webhooks`, on both backends.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Request};

use crate::common::fake_livekit::FakeLiveKit;
use crate::common::*;

const START: &str = r#"{"creator_id":"avt_ava000000001","product_name":"Glow Serum","platform":"tiktok","duration_minutes":30}"#;

/// The same body, keys reordered and spaced out.
const START_REORDERED: &str = r#"{ "duration_minutes" : 30,
    "platform":"tiktok", "product_name": "Glow Serum" , "creator_id":"avt_ava000000001" }"#;

async fn post_raw(
    api: &TestApp,
    path: &str,
    key: &str,
    idem: Option<&[u8]>,
    body: &str,
) -> Response {
    let mut request = Request::builder()
        .method("POST")
        .uri(format!("/api/v1{path}"))
        .header("authorization", format!("Bearer {key}"));
    if let Some(idem) = idem {
        request = request.header("idempotency-key", HeaderValue::from_bytes(idem).unwrap());
    }
    api.send(request.body(Body::from(body.to_owned())).unwrap())
        .await
}

async fn start(api: &TestApp, key: &str, idem: &str, body: &str) -> Response {
    post_raw(api, "/streams", key, Some(idem.as_bytes()), body).await
}

async fn total(api: &TestApp, key: &str) -> u64 {
    api.get("/streams", key).await.body["total"]
        .as_u64()
        .unwrap()
}

fn replayed(r: &Response) -> bool {
    r.header("idempotent-replayed") == Some("true")
}

#[tokio::test]
async fn a_retry_gets_the_first_answer_byte_for_byte_and_creates_nothing() {
    let api = TestApp::new().await;
    let first = start(&api, &Keys::test_a(), "order-1001", START).await;
    first.assert_status(201);
    assert!(!replayed(&first));
    api.advance(chrono::Duration::seconds(5));
    let again = start(&api, &Keys::test_a(), "order-1001", START_REORDERED).await;
    assert_eq!(again.status, first.status);
    assert_eq!(again.bytes, first.bytes, "byte-identical");
    assert_eq!(again.header("location"), first.header("location"));
    assert!(replayed(&again));
    assert_eq!(total(&api, &Keys::test_a()).await, 1);
    assert_eq!(api.active_streams("brand_a").await, 1);
    assert_eq!(
        api.events_of(first.body["stream_id"].as_str().unwrap())
            .await,
        ["stream.started"]
    );
}

#[tokio::test]
async fn the_same_key_with_another_body_is_a_mismatch() {
    let api = TestApp::new().await;
    start(&api, &Keys::test_a(), "k", START)
        .await
        .assert_status(201);
    let other = START.replace("tiktok", "twitch");
    start(&api, &Keys::test_a(), "k", &other)
        .await
        .assert_error(422, "idempotency_key_mismatch");
    assert_eq!(total(&api, &Keys::test_a()).await, 1);
}

/// Kept 48 hours, then a new key: judged by its time, not by whether the store has deleted
/// it yet (DynamoDB's TTL deletes up to two days late; moto never does).
#[tokio::test]
async fn after_48_hours_the_same_key_is_a_new_key() {
    let api = TestApp::new().await;
    let first = start(&api, &Keys::test_a(), "k-48h", START).await;
    first.assert_status(201);
    let other = START.replace("tiktok", "twitch");
    api.advance(chrono::Duration::hours(47));
    start(&api, &Keys::test_a(), "k-48h", &other)
        .await
        .assert_error(422, "idempotency_key_mismatch");
    api.advance(chrono::Duration::hours(2));
    let again = start(&api, &Keys::test_a(), "k-48h", &other).await;
    again.assert_status(201);
    assert!(!replayed(&again));
    assert_ne!(again.body["stream_id"], first.body["stream_id"]);
    // Bound anew: a retry of the new request replays its answer.
    let retry = start(&api, &Keys::test_a(), "k-48h", &other).await;
    assert!(replayed(&retry));
    assert_eq!(retry.bytes, again.bytes);
}

#[tokio::test]
async fn malformed_keys_are_invalid_fields_and_edge_keys_work() {
    let api = TestApp::new().await;
    let long = "k".repeat(256);
    for bad in [
        &b""[..],
        long.as_bytes(),
        b"has space",
        b"has\ttab",
        "caf\u{e9}".as_bytes(),
    ] {
        let r = post_raw(&api, "/streams", &Keys::test_a(), Some(bad), START).await;
        r.assert_error(400, "invalid_fields");
        let r = post_raw(
            &api,
            "/webhooks",
            &Keys::test_a(),
            Some(bad),
            r#"{"url":"https://hooks.example.com/a","events":["stream.started"]}"#,
        )
        .await;
        r.assert_error(400, "invalid_fields");
    }
    // Missing fields are still reported first, as the body checks go.
    post_raw(&api, "/streams", &Keys::test_a(), Some(b""), "{}")
        .await
        .assert_error(400, "missing_fields");
    let edge_255 = "k".repeat(255);
    let punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    for (i, good) in [edge_255.as_str(), punctuation].into_iter().enumerate() {
        let body = START.replace("Glow Serum", &format!("P{i}"));
        let first = start(&api, &Keys::test_a(), good, &body).await;
        first.assert_status(201);
        let again = start(&api, &Keys::test_a(), good, &body).await;
        assert!(replayed(&again));
        assert_eq!(again.bytes, first.bytes);
    }
    assert_eq!(total(&api, &Keys::test_a()).await, 2);
}

#[tokio::test]
async fn answers_that_created_nothing_leave_the_key_free() {
    let api = TestApp::new().await;
    // 400: the retry with the corrected body runs.
    let bad = START.replace("tiktok", "myspace");
    start(&api, &Keys::test_a(), "k400", &bad)
        .await
        .assert_error(400, "invalid_fields");
    start(&api, &Keys::test_a(), "k400", START)
        .await
        .assert_status(201);
    // 403: another body with the same key is no mismatch, and the same body runs again.
    let mismatched = START.replace(
        "\"duration_minutes\":30",
        "\"duration_minutes\":30,\"vertical\":\"gaming\"",
    );
    start(&api, &Keys::test_a(), "k403", &mismatched)
        .await
        .assert_error(403, "vertical_mismatch");
    let r = start(&api, &Keys::test_a(), "k403", &mismatched).await;
    r.assert_error(403, "vertical_mismatch");
    assert!(!replayed(&r));
    let other = START.replace("Glow Serum", "Other");
    start(&api, &Keys::test_a(), "k403", &other)
        .await
        .assert_status(201);
    // 429 concurrency_limit: once a slot is free, the same request runs.
    start(
        &api,
        &Keys::test_a(),
        "fill",
        &START.replace("Glow Serum", "Fill"),
    )
    .await
    .assert_status(201);
    let last = START.replace("Glow Serum", "Last");
    let r = start(&api, &Keys::test_a(), "k429", &last).await;
    r.assert_error(429, "concurrency_limit");
    let any_live = api.get("/streams?status=live", &Keys::test_a()).await.body["streams"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.delete(&format!("/streams/{any_live}"), &Keys::test_a())
        .await
        .assert_status(200);
    start(&api, &Keys::test_a(), "k429", &last)
        .await
        .assert_status(201);
    // 500: after the outage, the same request runs.
    let api = TestApp::new().await;
    api.store_outage(true).await;
    start(&api, &Keys::test_a(), "k500", START)
        .await
        .assert_error(500, "db_error");
    api.store_outage(false).await;
    let r = start(&api, &Keys::test_a(), "k500", START).await;
    r.assert_status(201);
    assert!(!replayed(&r));
    assert_eq!(total(&api, &Keys::test_a()).await, 1);
}

#[tokio::test]
async fn a_replay_takes_no_slot() {
    let api = TestApp::new().await;
    let first = start(&api, &Keys::test_a(), "k", START).await;
    first.assert_status(201);
    api.start_test_stream(&Keys::test_a()).await;
    api.start_test_stream(&Keys::test_a()).await;
    assert_eq!(api.active_streams("brand_a").await, 3);
    let again = start(&api, &Keys::test_a(), "k", START).await;
    assert!(replayed(&again));
    assert_eq!(again.bytes, first.bytes);
    // Still checked like any request: counted, authenticated, scoped, plan-gated.
    assert!(again.header("ratelimit").is_some());
    start(&api, &Keys::only("streams:read"), "k", START)
        .await
        .assert_error(403, "insufficient_scope");
    start(&api, &Keys::revoked(), "k", START)
        .await
        .assert_error(401, "unauthorized");
    start(&api, &Keys::live_free(), "k", START)
        .await
        .assert_error(402, "plan_required");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_starts_with_one_key_create_one_stream() {
    let api = std::sync::Arc::new(TestApp::new().await);
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let api = api.clone();
            tokio::spawn(async move { start(&api, &Keys::test_a(), "burst", START).await })
        })
        .collect();
    let mut ids = std::collections::BTreeSet::new();
    for handle in handles {
        let r = handle.await.unwrap();
        match r.status.as_u16() {
            201 => {
                ids.insert(r.body["stream_id"].as_str().unwrap().to_owned());
            }
            409 => r.assert_error(409, "idempotency_key_in_use"),
            other => panic!("{other}: {}", r.body),
        }
    }
    assert_eq!(ids.len(), 1, "one stream");
    assert_eq!(total(&api, &Keys::test_a()).await, 1);
    assert_eq!(api.active_streams("brand_a").await, 1);
}

#[tokio::test]
async fn a_key_is_scoped_to_brand_environment_and_endpoint() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let a = start(&api, &Keys::test_a(), "shared", START).await;
    let b = start(&api, &Keys::test_b(), "shared", START).await;
    let live = start(&api, &Keys::live_a(), "shared", START).await;
    for r in [&a, &b, &live] {
        r.assert_status(201);
        assert!(!replayed(r));
    }
    let ids: std::collections::BTreeSet<&str> = [&a, &b, &live]
        .iter()
        .map(|r| r.body["stream_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    let webhook = post_raw(
        &api,
        "/webhooks",
        &Keys::test_a(),
        Some(b"shared"),
        r#"{"url":"https://hooks.example.com/a","events":["stream.started"]}"#,
    )
    .await;
    webhook.assert_status(201);
    assert!(!replayed(&webhook));
}

#[tokio::test]
async fn a_failed_launch_binds_its_key_and_replays_its_502() {
    let api = TestApp::new().await; // no room provider: live starts fail after the record
    let first = start(&api, &Keys::live_a(), "live-1", START).await;
    first.assert_error(502, "launch_failed");
    let again = start(&api, &Keys::live_a(), "live-1", START_REORDERED).await;
    assert_eq!(again.status, 502);
    assert_eq!(again.bytes, first.bytes);
    assert!(replayed(&again));
    assert_eq!(
        total(&api, &Keys::live_a()).await,
        1,
        "one stream, in error"
    );
}

#[tokio::test]
async fn a_start_still_running_holds_its_key() {
    let fake = FakeLiveKit::start().await;
    fake.hang("livekit.RoomService/CreateRoom");
    let api = std::sync::Arc::new(
        TestApp::builder()
            .with_livekit(&fake)
            .with_launch_timeout_secs(2.0)
            .await,
    );
    let first = {
        let api = api.clone();
        tokio::spawn(async move { start(&api, &Keys::live_a(), "slow", START).await })
    };
    while !fake.methods().iter().any(|m| m.ends_with("CreateRoom")) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    start(&api, &Keys::live_a(), "slow", START)
        .await
        .assert_error(409, "idempotency_key_in_use");
    let first = first.await.unwrap();
    first.assert_error(502, "launch_failed");
    let again = start(&api, &Keys::live_a(), "slow", START).await;
    assert_eq!(
        (again.status, again.bytes.clone()),
        (first.status, first.bytes.clone())
    );
    assert!(replayed(&again));
}

#[tokio::test]
async fn a_webhook_registration_replays_the_same_secret() {
    let api = TestApp::new().await;
    let body =
        r#"{"url":"https://hooks.example.com/live","events":["stream.started","stream.ended"]}"#;
    let reordered = r#"{"events": ["stream.started", "stream.ended"], "url": "https://hooks.example.com/live"}"#;
    let first = post_raw(&api, "/webhooks", &Keys::test_a(), Some(b"hook-1"), body).await;
    first.assert_status(201);
    let again = post_raw(
        &api,
        "/webhooks",
        &Keys::test_a(),
        Some(b"hook-1"),
        reordered,
    )
    .await;
    assert_eq!(again.status, first.status);
    assert_eq!(again.bytes, first.bytes);
    assert!(replayed(&again));
    assert_eq!(again.body["secret"], first.body["secret"]);
    let listed = api.get("/webhooks", &Keys::test_a()).await;
    assert_eq!(listed.body["webhooks"].as_array().unwrap().len(), 1);
    post_raw(
        &api,
        "/webhooks",
        &Keys::test_a(),
        Some(b"hook-1"),
        r#"{"url":"https://hooks.example.com/other","events":["stream.started"]}"#,
    )
    .await
    .assert_error(422, "idempotency_key_mismatch");
}

#[tokio::test]
async fn without_a_key_every_start_creates() {
    let api = TestApp::new().await;
    let a = post_raw(&api, "/streams", &Keys::test_a(), None, START).await;
    let b = post_raw(&api, "/streams", &Keys::test_a(), None, START).await;
    assert_ne!(a.body["stream_id"], b.body["stream_id"]);
    assert!(!replayed(&a) && !replayed(&b));
}

#[tokio::test]
async fn a_bound_key_is_kept_at_least_24_hours() {
    let api = TestApp::new().await;
    let bound_at = api.now();
    let first = start(&api, &Keys::test_a(), "kept", START).await;
    first.assert_status(201);
    let id = first.body["stream_id"].as_str().unwrap().to_owned();
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    api.advance(chrono::Duration::hours(24) + chrono::Duration::seconds(1));
    let again = start(&api, &Keys::test_a(), "kept", START).await;
    assert!(replayed(&again));
    assert_eq!(again.bytes, first.bytes);
    assert_eq!(total(&api, &Keys::test_a()).await, 1);
    // On DynamoDB, TTL removes it: not before 24 hours after binding.
    if let Some(dynamo) = api.dynamo() {
        let key_id = hosting_domain::idempotency::key_id(
            "brand_a",
            hosting_domain::KeyEnvironment::Test,
            hosting_domain::idempotency::Endpoint::StartStream,
            "kept",
        );
        let item = dynamo
            .client()
            .get_item()
            .table_name(dynamo.table())
            .key(
                "pk",
                aws_sdk_dynamodb::types::AttributeValue::S(format!("IDEMPOTENCY#{key_id}")),
            )
            .key(
                "sk",
                aws_sdk_dynamodb::types::AttributeValue::S("IDEMPOTENCY".into()),
            )
            .send()
            .await
            .unwrap()
            .item
            .expect("the key's item");
        let ttl: i64 = item["ttl"].as_n().unwrap().parse().unwrap();
        assert!(
            ttl >= (bound_at + chrono::Duration::hours(24)).timestamp(),
            "{ttl}"
        );
    }
}
