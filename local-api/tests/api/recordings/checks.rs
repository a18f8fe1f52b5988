//! `record`: its checks and their order, what a stream without it shows, and the idempotency
//! fingerprint.

use super::*;

#[tokio::test]
async fn record_must_be_a_boolean_and_absent_null_or_false_record_nothing() {
    let api = TestApp::new().await;
    for bad in [json!("true"), json!(1), json!(0), json!({}), json!([true])] {
        let r = api.start(&Keys::test_a(), json!({"record": bad})).await;
        r.assert_error(400, "invalid_fields");
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("record")
        );
    }
    // Nothing was created by a refused start.
    let list = api.get("/streams?status=live", &Keys::test_a()).await;
    assert_eq!(list.body["total"], 0);
    for body in [json!({}), json!({"record": null}), json!({"record": false})] {
        let r = api.start(&Keys::test_a(), body).await;
        r.assert_status(201);
        assert!(r.body.get("recording").is_none(), "{}", r.body);
        let id = r.body["stream_id"].as_str().unwrap();
        let shown = detail(&api, &Keys::test_a(), id).await;
        assert!(shown.get("recording").is_none(), "{shown}");
        api.delete(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .assert_status(200);
    }
}

#[tokio::test]
async fn record_is_checked_after_the_destinations_and_before_the_concurrency_limit() {
    let api = TestApp::new().await;
    let bad_destinations = json!([{"platform": "tiktok", "ingest_url": "rtmp://10.0.0.1/x",
        "stream_key": "k1"}]);
    // A bad destination answers before a bad `record`, and says so.
    let r = api
        .start(
            &Keys::test_a(),
            json!({"destinations": bad_destinations, "record": "yes"}),
        )
        .await;
    r.assert_error(400, "invalid_fields");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("destinations[0]"),
        "{}",
        r.body
    );
    // An unknown creator answers before it.
    api.start(
        &Keys::test_a(),
        json!({"creator_id": "avt_nobody", "record": "yes"}),
    )
    .await
    .assert_error(400, "invalid_creator");
    // With every slot taken, a bad `record` still answers 400, a good one 429.
    for _ in 0..3 {
        api.start_test_stream(&Keys::test_a()).await;
    }
    api.start(&Keys::test_a(), json!({"record": 1}))
        .await
        .assert_error(400, "invalid_fields");
    api.start(&Keys::test_a(), json!({"record": true}))
        .await
        .assert_error(429, "concurrency_limit");
}

#[tokio::test]
async fn the_idempotency_fingerprint_covers_record() {
    let api = TestApp::new().await;
    let send = |record: Value| {
        let body = json!({"creator_id": CREATOR_AVA, "product_name": "Glow Serum",
            "platform": "tiktok", "record": record});
        let request = axum::http::Request::builder()
            .method("POST")
            .uri("/api/v1/streams")
            .header("authorization", format!("Bearer {}", Keys::test_a()))
            .header("idempotency-key", "start-recorded")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body.to_string()))
            .unwrap();
        api.send(request)
    };
    let first = send(json!(true)).await;
    first.assert_status(201);
    assert_eq!(first.body["recording"]["status"], "recording");
    let again = send(json!(true)).await;
    again.assert_status(201);
    assert_eq!(again.body, first.body);
    send(json!(false))
        .await
        .assert_error(422, "idempotency_key_mismatch");
}

#[tokio::test]
async fn recording_events_are_subscribed_to_at_registration_and_patch_and_go_only_to_their_listers()
{
    use crate::common::receiver::{Behaviour, Receiver};
    let api = TestApp::builder()
        .with_private_webhook_urls()
        .with_delivery()
        .await;
    let (listing, other) = (
        Receiver::start(Behaviour::Ok).await,
        Receiver::start(Behaviour::Ok).await,
    );
    let r = api
        .post("/webhooks", &Keys::test_a(), json!({"url": listing.url(),
            "events": ["stream.recording_failed", "stream.recording_ready", "stream.recording_failed"]}))
        .await;
    r.assert_status(201);
    assert_eq!(
        r.body["events"],
        json!(["stream.recording_failed", "stream.recording_ready"])
    );
    let id = r.body["webhook_id"].as_str().unwrap().to_owned();
    let patched = api
        .call(
            "PATCH",
            &format!("/webhooks/{id}"),
            Some(&Keys::test_a()),
            Some(json!({"events": ["stream.recording_ready"]})),
        )
        .await;
    patched.assert_status(200);
    assert_eq!(patched.body["events"], json!(["stream.recording_ready"]));
    api.post(
        "/webhooks",
        &Keys::test_a(),
        json!({"url": other.url(), "events": ["stream.ended"]}),
    )
    .await
    .assert_status(201);
    api.post(
        "/webhooks",
        &Keys::test_a(),
        json!({"url": "https://hooks.example.com/c", "events": ["stream.recording_expired"]}),
    )
    .await
    .assert_error(400, "invalid_events");
    // A recorded test stream ends: `stream.recording_ready` goes to the webhook listing it
    // alone, `stream.ended` to the other alone.
    let (stream, _) = start_recorded(&api, &Keys::test_a(), json!({})).await;
    api.delete(&format!("/streams/{stream}"), &Keys::test_a())
        .await
        .assert_status(200);
    let types = |receiver: &Receiver| -> Vec<String> {
        receiver
            .hits()
            .iter()
            .filter(|hit| hit.body.contains(&stream))
            .map(|hit| hit.header("x-service-event-type").to_owned())
            .collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while types(&listing).is_empty() || types(&other).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the events never arrived"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Time for a wrong delivery to turn up too.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(types(&listing), ["stream.recording_ready"]);
    assert_eq!(types(&other), ["stream.ended"]);
}
