//! `POST /webhooks/{id}/test` and the delivery log `GET /webhooks/{id}/deliveries`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{log, log_of, patch, register, send_test, signers, time};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_event_goes_out_signed_whatever_the_state_and_is_logged() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, secret) = register(&api, &Keys::test_a(), &receiver.url()).await;
    // Inactive, and not subscribed to anything a test could match: it still goes out.
    patch(
        &api,
        &id,
        r#"{"active": false, "events": ["stream.error"]}"#,
    )
    .await
    .assert_status(200);
    let r = send_test(&api, &id).await;
    r.assert_status(200);
    let event_id = r.body["event_id"].as_str().unwrap().to_owned();
    assert!(event_id.starts_with("evt_") && event_id.len() == 36);
    assert_eq!(r.body["delivered"], true);
    assert_eq!(r.body["status_code"], 200);
    assert!(r.body["duration_ms"].as_u64().is_some());
    assert_eq!(r.body["error"], Value::Null);

    let hits = receiver.hits();
    assert_eq!(hits.len(), 1, "sent before the answer, once");
    let body: Value = serde_json::from_str(&hits[0].body).unwrap();
    assert_eq!(body["id"], event_id.as_str());
    assert_eq!(body["type"], "webhook.test");
    assert_eq!(body["api_version"], "v1");
    assert_eq!(body["test"], true);
    assert_eq!(body["data"], json!({"webhook_id": id}));
    assert!(body["created_at"].is_string());
    assert_eq!(hits[0].header("x-service-event-type"), "webhook.test");
    assert_eq!(hits[0].header("x-service-event-id"), event_id);
    assert_eq!(signers(&hits[0], &[&secret]), [secret.as_str()]);

    let logged = log(&api, &id, "").await;
    assert_eq!(logged["deliveries"].as_array().unwrap().len(), 1);
    assert_eq!(logged["next_cursor"], Value::Null);
    let entry = &logged["deliveries"][0];
    assert_eq!(entry["event_id"], event_id.as_str());
    assert_eq!(entry["event_type"], "webhook.test");
    assert_eq!(entry["attempt"], 1);
    assert_eq!(entry["status"], "succeeded");
    assert_eq!(entry["response_status"], 200);
    assert_eq!(entry["error"], Value::Null);
    assert_eq!(entry["next_attempt_at"], Value::Null);
    assert!(entry.get("body").is_none() && !logged.to_string().contains(&secret));
    // Still inactive: a test changes nothing.
    let got = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert_eq!(got.body["active"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_receiver_is_reported_and_not_retried() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
    let failing = Receiver::start(Behaviour::Always(500)).await;
    let (id, _) = register(&api, &Keys::test_a(), &failing.url()).await;
    let r = send_test(&api, &id).await;
    r.assert_status(200);
    assert_eq!(r.body["delivered"], false);
    assert_eq!(r.body["status_code"], 500);
    assert_eq!(r.body["error"], Value::Null);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(failing.hits().len(), 1, "never retried");
    let entry = &log(&api, &id, "").await["deliveries"][0];
    assert_eq!(entry["status"], "failed");
    assert_eq!(entry["next_attempt_at"], Value::Null);

    // No HTTP answer at all: no status, a reason.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    patch(
        &api,
        &id,
        &json!({"url": format!("http://127.0.0.1:{port}/closed")}).to_string(),
    )
    .await
    .assert_status(200);
    let r = send_test(&api, &id).await;
    assert_eq!(r.body["delivered"], false);
    assert_eq!(r.body["status_code"], Value::Null);
    assert!(r.body["error"].as_str().is_some_and(|e| !e.is_empty()));
    // A 410 to a test deactivates nothing.
    let gone = Receiver::start(Behaviour::Always(410)).await;
    patch(&api, &id, &json!({"url": gone.url()}).to_string())
        .await
        .assert_status(200);
    assert_eq!(send_test(&api, &id).await.body["status_code"], 410);
    let got = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert_eq!(got.body["active"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_shows_each_attempt_newest_first_with_filters_and_pages() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
    let receiver = Receiver::start(Behaviour::Statuses(vec![500, 503])).await;
    let (id, _) = register(&api, &Keys::test_a(), &receiver.url()).await;
    api.start_test_stream(&Keys::test_a()).await;
    let hits = receiver.wait_for(3, WAIT).await;
    let logged = log_of(&api, &id, 3).await;
    let entries = logged["deliveries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(logged["next_cursor"], Value::Null);
    let event_id = entries[0]["event_id"].as_str().unwrap().to_owned();
    for (entry, (attempt, status, response)) in entries.iter().zip([
        (3, "succeeded", 200),
        (2, "failed", 503),
        (1, "failed", 500),
    ]) {
        assert_eq!(entry["event_id"], event_id.as_str());
        assert_eq!(entry["event_type"], "stream.started");
        assert_eq!(entry["attempt"], attempt);
        assert_eq!(entry["status"], status);
        assert_eq!(entry["response_status"], response);
        assert_eq!(entry["error"], Value::Null);
        if status == "failed" {
            let next = time(&entry["next_attempt_at"]);
            assert!(
                next >= time(&entry["attempted_at"]),
                "a failure says when it is retried"
            );
        } else {
            assert_eq!(entry["next_attempt_at"], Value::Null);
        }
    }
    let at = |i: usize| time(&entries[i]["attempted_at"]);
    assert!(at(0) >= at(1) && at(1) >= at(2), "newest first");

    // Filters.
    let count = |body: Value| body["deliveries"].as_array().unwrap().len();
    assert_eq!(count(log(&api, &id, "?status=failed").await), 2);
    assert_eq!(count(log(&api, &id, "?status=succeeded").await), 1);
    let none = log(&api, &id, "?status=pending").await;
    assert_eq!(
        (none["deliveries"].clone(), none["next_cursor"].clone()),
        (json!([]), Value::Null)
    );
    assert_eq!(
        count(log(&api, &id, &format!("?event_id={event_id}")).await),
        3
    );
    assert_eq!(
        count(log(&api, &id, &format!("?event_id={event_id}&status=failed")).await),
        2
    );
    assert_eq!(count(log(&api, &id, "?event_id=evt_other").await), 0);
    // The body as delivered: only on a page filtered by event, on each of its attempts.
    assert!(entries.iter().all(|entry| entry.get("body").is_none()));
    let delivered: Value = serde_json::from_str(&hits[2].body).unwrap();
    let one_event = log(&api, &id, &format!("?event_id={event_id}")).await;
    for entry in one_event["deliveries"].as_array().unwrap() {
        assert_eq!(entry["body"], delivered);
    }
    // Byte for byte, in the order its fields were sent.
    let raw = api
        .get(
            &format!("/webhooks/{id}/deliveries?event_id={event_id}&limit=1"),
            &Keys::test_a(),
        )
        .await
        .bytes;
    let raw = String::from_utf8(raw).unwrap();
    assert!(raw.contains(&format!("\"body\":{}", hits[2].body)), "{raw}");
    // Pages by cursor, the limit clamped like GET /streams.
    let first = log(&api, &id, "?limit=1").await;
    assert_eq!(first["deliveries"][0]["attempt"], 3);
    assert_eq!(first["limit"], 1);
    let cursor = first["next_cursor"]
        .as_str()
        .expect("more pages")
        .to_owned();
    let second = log(&api, &id, &format!("?limit=1&cursor={cursor}")).await;
    assert_eq!(second["deliveries"][0]["attempt"], 2);
    let cursor = second["next_cursor"].as_str().unwrap().to_owned();
    let last = log(&api, &id, &format!("?limit=5&cursor={cursor}")).await;
    assert_eq!(last["deliveries"][0]["attempt"], 1);
    assert_eq!(last["next_cursor"], Value::Null);
    assert_eq!(log(&api, &id, "?limit=0").await["limit"], 1);
    let defaulted = log(&api, &id, "?limit=abc").await;
    assert_eq!(defaulted["limit"], 20);
    assert_eq!(log(&api, &id, "?limit=101").await["limit"], 100);
    // Another brand's, absent and malformed ids: 404.
    for other in [ABSENT_ID, "nope"] {
        api.get(&format!("/webhooks/{other}/deliveries"), &Keys::test_a())
            .await
            .assert_error(404, "not_found");
    }
    api.get(&format!("/webhooks/{id}/deliveries"), &Keys::test_b())
        .await
        .assert_error(404, "not_found");
}
