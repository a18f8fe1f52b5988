//! Test keys (docs/destinations.md, "Test keys"): a test stream's destinations are `active` at
//! once and `ended` with it, no egress is requested, and the helper fails one; and the two
//! destination events go only to webhooks that list them.

use super::*;

fn fail_path(id: &str, destination: &str) -> String {
    format!("/test_helpers/streams/{id}/destinations/{destination}/fail")
}

#[tokio::test]
async fn a_test_streams_destinations_are_active_at_once_and_end_with_it() {
    let (api, fake) = app_with_livekit().await;
    let r = api
        .start(&Keys::test_a(), json!({"destinations": two_destinations()}))
        .await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let created: Vec<&Value> = r.body["destinations"].as_array().unwrap().iter().collect();
    assert!(
        created.iter().all(|d| d["status"] == "active"),
        "{created:?}"
    );
    let detail = api
        .get(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .body;
    assert_eq!(
        detail["destinations"][0]["started_at"],
        detail["started_at"]
    );
    assert_eq!(
        event_types(&api, &id).await,
        [
            "stream.destination_active",
            "stream.destination_active",
            "stream.started"
        ]
    );
    api.post(
        &format!("/test_helpers/streams/{id}/finish"),
        &Keys::test_a(),
        json!({}),
    )
    .await
    .assert_status(200);
    let detail = api
        .get(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .body;
    let ended: Vec<&str> = detail["destinations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["status"].as_str().unwrap())
        .collect();
    assert_eq!(ended, ["ended", "ended"]);
    assert!(fake.calls().is_empty(), "no LiveKit call for a test stream");
}

#[tokio::test]
async fn the_helper_fails_one_destination_with_its_error() {
    let api = TestApp::new().await;
    let r = api
        .start(&Keys::test_a(), json!({"destinations": two_destinations()}))
        .await;
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let first = r.body["destinations"][0]["destination_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = r.body["destinations"][1]["destination_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The body first, whatever the rest.
    for (path, key) in [
        (fail_path(&id, &first), Keys::test_a()),
        (fail_path(ABSENT_ID, &first), Keys::test_a()),
        (fail_path(&id, "dst_nope"), Keys::test_a()),
    ] {
        for body in [
            json!({"error": ""}),
            json!({"error": 5}),
            json!({"error": "x".repeat(201)}),
            json!([1]),
        ] {
            api.post(&path, &key, body)
                .await
                .assert_error(400, "invalid_fields");
        }
    }
    // Then the stream, then the destination.
    for (path, key) in [
        (fail_path(&id, &first), Keys::live_a()),
        (fail_path(&id, &first), Keys::test_b()),
        (fail_path(ABSENT_ID, &first), Keys::test_a()),
        (fail_path("not-a-uuid", &first), Keys::test_a()),
        (fail_path(&id, "dst_nope"), Keys::test_a()),
    ] {
        api.post(&path, &key, json!({}))
            .await
            .assert_error(404, "not_found");
    }
    let r = api
        .call("POST", &fail_path(&id, &first), Some(&Keys::test_a()), None)
        .await;
    r.assert_status(200);
    assert_eq!(
        (r.body["status"].as_str(), r.body["error"].as_str()),
        (Some("failed"), Some("simulated failure"))
    );
    let r = api
        .post(
            &fail_path(&id, &second),
            &Keys::test_a(),
            json!({"error": "TikTok refused the key"}),
        )
        .await;
    r.assert_status(200);
    assert_eq!(r.body["error"], "TikTok refused the key");
    // Final: not found again.
    api.post(&fail_path(&id, &first), &Keys::test_a(), json!({}))
        .await
        .assert_error(404, "not_found");
    assert_eq!(
        api.get(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .body["status"],
        "live"
    );
    assert_eq!(
        event_types(&api, &id).await,
        [
            "stream.destination_active",
            "stream.destination_active",
            "stream.destination_failed",
            "stream.destination_failed",
            "stream.started"
        ]
    );
    // A finished test stream: not found.
    api.post(
        &format!("/test_helpers/streams/{id}/finish"),
        &Keys::test_a(),
        json!({}),
    )
    .await
    .assert_status(200);
    api.post(&fail_path(&id, &first), &Keys::test_a(), json!({}))
        .await
        .assert_error(404, "not_found");
}

#[tokio::test]
async fn destination_events_are_subscribed_to_at_registration_and_patch() {
    let api = TestApp::new().await;
    let r = api
        .post("/webhooks", &Keys::test_a(), json!({"url": "https://hooks.example.com/a",
            "events": ["stream.destination_active", "stream.destination_failed", "stream.destination_active"]}))
        .await;
    r.assert_status(201);
    assert_eq!(
        r.body["events"],
        json!(["stream.destination_active", "stream.destination_failed"])
    );
    let id = r.body["webhook_id"].as_str().unwrap();
    let patched = api
        .call(
            "PATCH",
            &format!("/webhooks/{id}"),
            Some(&Keys::test_a()),
            Some(json!({"events": ["stream.started", "stream.destination_failed"]})),
        )
        .await;
    patched.assert_status(200);
    assert_eq!(
        patched.body["events"],
        json!(["stream.started", "stream.destination_failed"])
    );
    api.post(
        "/webhooks",
        &Keys::test_a(),
        json!({"url": "https://hooks.example.com/b", "events": ["stream.destination_removed"]}),
    )
    .await
    .assert_error(400, "invalid_events");
}
