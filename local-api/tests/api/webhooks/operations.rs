//! `GET` and `PATCH /webhooks/{id}`, and re-enabling a webhook turned off by `410`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{patch, register, rotate};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

#[tokio::test]
async fn get_shows_the_webhook_and_never_its_secret() {
    let api = TestApp::new().await;
    let (id, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    let r = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    r.assert_status(200);
    assert_eq!(r.body["webhook_id"], id.as_str());
    assert_eq!(r.body["url"], "https://hooks.example.com/a");
    assert_eq!(r.body["events"], json!(["stream.started"]));
    assert_eq!(r.body["active"], true);
    assert!(r.body["created_at"].is_string());
    assert_eq!(r.body["secret_rotated_at"], Value::Null);
    assert!(r.body.get("secret").is_none());
    let public_key = r.body["public_key"].as_str().unwrap();
    assert!(
        public_key.starts_with("whpk_") && public_key.len() == 49,
        "{public_key}"
    );
    assert_eq!(r.body["failing_since"], Value::Null);
    // Absent while active.
    assert!(r.body.get("disabled_reason").is_none());
    assert_eq!(r.body.as_object().unwrap().len(), 8);
}

#[tokio::test]
async fn absent_foreign_and_malformed_ids_are_not_found_on_every_operation() {
    let api = TestApp::new().await;
    let (theirs, _) = register(&api, &Keys::test_b(), "https://hooks.example.com/b").await;
    for id in [ABSENT_ID, theirs.as_str(), "nope", "123"] {
        api.get(&format!("/webhooks/{id}"), &Keys::test_a())
            .await
            .assert_error(404, "not_found");
        patch(&api, id, r#"{"active": false}"#)
            .await
            .assert_error(404, "not_found");
        rotate(&api, id, None).await.assert_error(404, "not_found");
    }
    // A path that names nothing is not found whatever the body.
    patch(&api, "nope", "not json")
        .await
        .assert_error(404, "not_found");
    rotate(&api, "nope", Some("[1]"))
        .await
        .assert_error(404, "not_found");
    // The other brand's webhook is untouched.
    let r = api
        .get(&format!("/webhooks/{theirs}"), &Keys::test_b())
        .await;
    assert_eq!(r.body["active"], true);
    assert_eq!(r.body["secret_rotated_at"], Value::Null);
}

#[tokio::test]
async fn patch_checks_like_registration_in_order() {
    let api = TestApp::new().await;
    let (id, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    for (body, code) in [
        ("not json", "missing_fields"),
        ("[1, 2]", "missing_fields"),
        ("{}", "missing_fields"),
        (r#"{"url": null, "events": null}"#, "missing_fields"),
        (r#"{"colour": "blue"}"#, "missing_fields"),
        // url, then events, then active.
        (
            r#"{"url": "http://hooks.example.com", "events": [], "active": "yes"}"#,
            "invalid_url",
        ),
        (r#"{"url": 7}"#, "invalid_url"),
        (r#"{"url": "https://10.0.0.1/x"}"#, "invalid_url"),
        (r#"{"events": [], "active": "yes"}"#, "invalid_events"),
        (r#"{"events": ["stream.paused"]}"#, "invalid_events"),
        (r#"{"events": "stream.started"}"#, "invalid_events"),
        (r#"{"active": "yes"}"#, "invalid_fields"),
        (r#"{"active": 1}"#, "invalid_fields"),
    ] {
        let r = patch(&api, &id, body).await;
        r.assert_error(400, code);
    }
    // Nothing changed by any of those.
    let r = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert_eq!(r.body["url"], "https://hooks.example.com/a");

    // One field at a time; the others stay; unknown fields are ignored.
    let r = patch(
        &api,
        &id,
        r#"{"url": "https://hooks.example.com/b", "colour": "blue"}"#,
    )
    .await;
    r.assert_status(200);
    assert_eq!(r.body["url"], "https://hooks.example.com/b");
    assert_eq!(r.body["events"], json!(["stream.started"]));
    assert_eq!(r.body["active"], true);
    let r = patch(
        &api,
        &id,
        r#"{"events": ["stream.ended", "stream.error", "stream.ended"]}"#,
    )
    .await;
    assert_eq!(r.body["events"], json!(["stream.ended", "stream.error"]));
    assert_eq!(r.body["url"], "https://hooks.example.com/b");
    let r = patch(&api, &id, r#"{"active": false}"#).await;
    assert_eq!(r.body["active"], false);
    assert!(r.body.get("secret").is_none());
    // What PATCH answered is what GET and the list show.
    let got = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert_eq!(got.body, r.body);
    let listed = api.get("/webhooks", &Keys::test_a()).await;
    assert_eq!(listed.body["webhooks"][0]["active"], false);
    assert_eq!(
        listed.body["webhooks"][0]["url"],
        "https://hooks.example.com/b"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_turned_off_by_410_is_turned_back_on() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let gone = Receiver::start(Behaviour::Always(410)).await;
    let (id, _) = register(&api, &Keys::test_a(), &gone.url()).await;
    let stream = api.start_test_stream(&Keys::test_a()).await;
    gone.wait_for(1, WAIT).await;
    let mut active = Value::Bool(true);
    for _ in 0..100 {
        active = api
            .get(&format!("/webhooks/{id}"), &Keys::test_a())
            .await
            .body["active"]
            .clone();
        if active == false {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(active, false, "a 410 turned it off");
    api.delete(&format!("/streams/{stream}"), &Keys::test_a())
        .await
        .assert_status(200);

    let back = Receiver::start(Behaviour::Ok).await;
    let r = patch(
        &api,
        &id,
        &json!({"url": back.url(), "active": true}).to_string(),
    )
    .await;
    r.assert_status(200);
    assert_eq!(r.body["active"], true);
    let stream = api.start_test_stream(&Keys::test_a()).await;
    let hit = &back.wait_for(1, WAIT).await[0];
    let body: Value = serde_json::from_str(&hit.body).unwrap();
    assert_eq!(body["data"]["stream"]["stream_id"], stream.as_str());
    assert_eq!(gone.hits().len(), 1);
}
