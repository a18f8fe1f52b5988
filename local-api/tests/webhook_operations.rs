//! One webhook's operations (docs/webhooks.md, "Webhook operations"): `GET` and `PATCH
//! /webhooks/{id}` (re-enabling after `410`) and `POST /webhooks/{id}/rotate-secret` (both secrets
//! sign during the overlap, in both schemes). `403` without `webhooks:write` is checked for every
//! declared endpoint by `pipeline.rs`.

mod common;

use std::time::Duration;

use base64::Engine;
use chrono::{DateTime, Utc};
use common::receiver::{Behaviour, Hit, Receiver, run_verifier};
use common::*;
use hmac::{Hmac, Mac};
use hosting_domain::domain::delivery_log::{DeliveredEvent, DeliveryAttempt};
use hosting_domain::domain::event::EventType;
use serde_json::{Value, json};
use sha2::Sha256;

const PRIVATE_OK: (&str, &str) = ("WEBHOOK_ALLOW_PRIVATE_URLS", "true");
const WAIT: Duration = Duration::from_secs(10);
const NOWHERE: &str = "00000000-0000-4000-8000-000000000000";

async fn register(api: &TestApi, key: &str, url: &str) -> (String, String) {
    let r = api
        .post(
            "/webhooks",
            key,
            json!({"url": url, "events": ["stream.started"]}),
        )
        .await;
    r.assert_status(201);
    (
        r.body["webhook_id"].as_str().unwrap().to_owned(),
        r.body["secret"].as_str().unwrap().to_owned(),
    )
}

async fn patch(api: &TestApi, id: &str, body: &str) -> Response {
    api.call_raw(
        "PATCH",
        &format!("/webhooks/{id}"),
        Some(&Keys::test_a()),
        Some(body),
    )
    .await
}

async fn rotate(api: &TestApi, id: &str, body: Option<&str>) -> Response {
    api.call_raw(
        "POST",
        &format!("/webhooks/{id}/rotate-secret"),
        Some(&Keys::test_a()),
        body,
    )
    .await
}

fn time(value: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(value.as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc)
}

#[tokio::test]
async fn get_shows_the_webhook_and_never_its_secret() {
    let api = TestApi::new().await;
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
    assert_eq!(r.body.as_object().unwrap().len(), 6);
}

#[tokio::test]
async fn absent_foreign_and_malformed_ids_are_not_found_on_every_operation() {
    let api = TestApi::new().await;
    let (theirs, _) = register(&api, &Keys::test_b(), "https://hooks.example.com/b").await;
    for id in [NOWHERE, theirs.as_str(), "nope", "123"] {
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
    let api = TestApi::new().await;
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
    let api = TestApi::with_delivery(&[PRIVATE_OK], None).await;
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

#[tokio::test]
async fn rotate_secret_checks_its_optional_body() {
    let api = TestApi::new().await;
    let (id, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    for body in [
        r#"{"expire_previous_in_seconds": -1}"#,
        r#"{"expire_previous_in_seconds": 86401}"#,
        r#"{"expire_previous_in_seconds": 1.5}"#,
        r#"{"expire_previous_in_seconds": "60"}"#,
        r#"{"expire_previous_in_seconds": null}"#,
        "[60]",
        "60",
        "not json",
    ] {
        rotate(&api, &id, Some(body))
            .await
            .assert_error(400, "invalid_fields");
    }
    let r = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert_eq!(r.body["secret_rotated_at"], Value::Null, "nothing rotated");
    // No body, an empty object and unknown fields: the default, a day.
    for body in [None, Some("{}"), Some(r#"{"colour": 1}"#)] {
        let before = api.now();
        let r = rotate(&api, &id, body).await;
        r.assert_status(200);
        let expires = time(&r.body["previous_secret_expires_at"]);
        let overlap = (expires - before).num_seconds();
        assert!((86_399..=86_401).contains(&overlap), "{overlap}");
    }
    for (seconds, expected) in [(0, 0), (86_400, 86_400), (90, 90)] {
        let before = api.now();
        let r = rotate(
            &api,
            &id,
            Some(&json!({"expire_previous_in_seconds": seconds}).to_string()),
        )
        .await;
        r.assert_status(200);
        let overlap = (time(&r.body["previous_secret_expires_at"]) - before).num_seconds();
        assert!(
            (expected - 1..=expected + 1).contains(&overlap),
            "{seconds}: {overlap}"
        );
    }
}

#[tokio::test]
async fn a_new_secret_is_shown_once_and_never_again() {
    let api = TestApi::new().await;
    let (id, first) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    let r = rotate(&api, &id, None).await;
    r.assert_status(200);
    let secret = r.body["secret"].as_str().unwrap().to_owned();
    assert_eq!(r.body["webhook_id"], id.as_str());
    assert!(secret.starts_with("whsec_") && secret.len() == 38 && secret != first);
    assert_eq!(r.body.as_object().unwrap().len(), 3);
    let got = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert!(got.body["secret_rotated_at"].is_string());
    for answer in [
        got.body.to_string(),
        api.get("/webhooks", &Keys::test_a()).await.body.to_string(),
        patch(&api, &id, r#"{"active": true}"#)
            .await
            .body
            .to_string(),
    ] {
        assert!(!answer.contains(&secret) && !answer.contains(&first));
    }
}

fn hmac(key: &[u8], message: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(message.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// The secrets that signed `hit`, among `candidates`, in header order, checked independently
/// of the product's code in both schemes (which must agree).
fn signers<'a>(hit: &Hit, candidates: &[&'a str]) -> Vec<&'a str> {
    let header = hit.header("x-service-signature");
    let mut parts = header.split(',');
    let t = parts.next().unwrap().strip_prefix("t=").unwrap().to_owned();
    let stripe: Vec<String> = parts
        .map(|p| p.strip_prefix("v1=").unwrap().to_owned())
        .collect();
    let standard: Vec<String> = hit
        .header("webhook-signature")
        .split(' ')
        .map(|p| p.strip_prefix("v1,").unwrap().to_owned())
        .collect();
    let id = hit.header("webhook-id");
    let signed_by = |secret: &str| {
        let key = base64::engine::general_purpose::STANDARD
            .decode(secret.strip_prefix("whsec_").unwrap())
            .unwrap();
        (
            hex::encode(hmac(secret.as_bytes(), &format!("{t}.{}", hit.body))),
            base64::engine::general_purpose::STANDARD
                .encode(hmac(&key, &format!("{id}.{t}.{}", hit.body))),
        )
    };
    let mut found = Vec::new();
    for (stripe_sig, standard_sig) in stripe.iter().zip(&standard) {
        let secret = candidates
            .iter()
            .find(|s| signed_by(s) == (stripe_sig.clone(), standard_sig.clone()))
            .unwrap_or_else(|| panic!("a signature by no known secret: {header}"));
        found.push(*secret);
    }
    assert_eq!(stripe.len(), standard.len(), "both schemes sign alike");
    found
}

/// Starts a test stream, returns the delivery of its `stream.started`, and ends it.
async fn next_delivery(api: &TestApi, receiver: &Receiver) -> Hit {
    let seen = receiver.hits().len();
    let stream = api.start_test_stream(&Keys::test_a()).await;
    let hit = receiver.wait_for(seen + 1, WAIT).await[seen].clone();
    api.delete(&format!("/streams/{stream}"), &Keys::test_a())
        .await
        .assert_status(200);
    hit
}

async fn rotated(api: &TestApi, id: &str, body: Option<Value>) -> String {
    let r = rotate(api, id, body.map(|b| b.to_string()).as_deref()).await;
    r.assert_status(200);
    r.body["secret"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_an_overlap_both_secrets_sign_and_never_more_than_two() {
    let api = TestApi::with_delivery(&[PRIVATE_OK], None).await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, s1) = register(&api, &Keys::test_a(), &receiver.url()).await;
    assert_eq!(
        signers(&next_delivery(&api, &receiver).await, &[&s1]),
        [s1.as_str()]
    );

    let s2 = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2]), [s2.as_str(), s1.as_str()]);

    // A rotation during the overlap drops the oldest.
    let s3 = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2, &s3]), [s3.as_str(), s2.as_str()]);

    // No overlap: the new secret alone, at once.
    let s4 = rotated(&api, &id, Some(json!({"expire_previous_in_seconds": 0}))).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2, &s3, &s4]), [s4.as_str()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overlap_ends_when_it_says() {
    let api = TestApi::with_delivery(&[PRIVATE_OK], None).await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, s1) = register(&api, &Keys::test_a(), &receiver.url()).await;
    // Long enough for the first delivery to land inside it on a loaded machine (2 s was not).
    let s2 = rotated(&api, &id, Some(json!({"expire_previous_in_seconds": 8}))).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2]), [s2.as_str(), s1.as_str()]);
    tokio::time::sleep(Duration::from_millis(8100)).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2]), [s2.as_str()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the stripe and standardwebhooks verifiers (WEBHOOK_VERIFIER_PYTHON): scripts/test.sh runs it"]
async fn the_published_libraries_verify_with_either_secret_during_the_overlap() {
    let api = TestApi::with_delivery(&[PRIVATE_OK], None).await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, s1) = register(&api, &Keys::test_a(), &receiver.url()).await;
    let s2 = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    for secret in [&s1, &s2] {
        let (ok, output) = run_verifier(secret, &hit);
        assert!(ok, "{output}");
    }
    // A second rotation: the newest and the one it replaced, not the oldest.
    let s3 = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    assert!(run_verifier(&s3, &hit).0 && run_verifier(&s2, &hit).0);
    let (ok, output) = run_verifier(&s1, &hit);
    assert!(!ok && !output.contains("stripe: ok") && !output.contains("standardwebhooks: ok"));
    // expire_previous_in_seconds 0: only the new one.
    let s4 = rotated(&api, &id, Some(json!({"expire_previous_in_seconds": 0}))).await;
    let hit = next_delivery(&api, &receiver).await;
    assert!(run_verifier(&s4, &hit).0);
    assert!(!run_verifier(&s3, &hit).0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_rotations_each_replace_a_different_secret() {
    let api = std::sync::Arc::new(TestApi::with_delivery(&[PRIVATE_OK], None).await);
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, s1) = register(&api, &Keys::test_a(), &receiver.url()).await;
    let handles: Vec<_> = (0..5)
        .map(|_| {
            let (api, id) = (api.clone(), id.clone());
            tokio::spawn(async move { rotated(&api, &id, None).await })
        })
        .collect();
    let mut secrets = Vec::new();
    for handle in handles {
        secrets.push(handle.await.unwrap());
    }
    let mut all: Vec<&str> = secrets.iter().map(String::as_str).collect();
    all.push(&s1);
    let hit = next_delivery(&api, &receiver).await;
    let signed = signers(&hit, &all);
    // One after another: the last replaced a secret another rotation made, never the first.
    assert_eq!(signed.len(), 2, "{signed:?}");
    assert!(secrets.iter().any(|s| s == signed[0]) && secrets.iter().any(|s| s == signed[1]));
}

const FAST_RETRIES: (&str, &str) = ("WEBHOOK_RETRY_DELAYS_SECS", "0.05,0.05,0.05,0.05,0.05");

async fn send_test(api: &TestApi, id: &str) -> Response {
    api.call(
        "POST",
        &format!("/webhooks/{id}/test"),
        Some(&Keys::test_a()),
        None,
    )
    .await
}

async fn log(api: &TestApi, id: &str, query: &str) -> Value {
    let r = api
        .get(
            &format!("/webhooks/{id}/deliveries{query}"),
            &Keys::test_a(),
        )
        .await;
    r.assert_status(200);
    r.body
}

async fn redeliver(api: &TestApi, id: &str, body: &str) -> Response {
    api.call_raw(
        "POST",
        &format!("/webhooks/{id}/redeliver"),
        Some(&Keys::test_a()),
        Some(body),
    )
    .await
}

/// Waits until the webhook's log holds `n` attempts.
async fn log_of(api: &TestApi, id: &str, n: u64) -> Value {
    for _ in 0..200 {
        let body = log(api, id, "?limit=100").await;
        if body["deliveries"].as_array().unwrap().len() as u64 >= n {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the log never held {n} attempts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_event_goes_out_signed_whatever_the_state_and_is_logged() {
    let api = TestApi::with_delivery(&[PRIVATE_OK], None).await;
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
    let api = TestApi::with_delivery(&[PRIVATE_OK, FAST_RETRIES], None).await;
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
    let api = TestApi::with_delivery(&[PRIVATE_OK, FAST_RETRIES], None).await;
    let receiver = Receiver::start(Behaviour::Statuses(vec![500, 503])).await;
    let (id, _) = register(&api, &Keys::test_a(), &receiver.url()).await;
    api.start_test_stream(&Keys::test_a()).await;
    receiver.wait_for(3, WAIT).await;
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
    for other in [NOWHERE, "nope"] {
        api.get(&format!("/webhooks/{other}/deliveries"), &Keys::test_a())
            .await
            .assert_error(404, "not_found");
    }
    api.get(&format!("/webhooks/{id}/deliveries"), &Keys::test_b())
        .await
        .assert_error(404, "not_found");
}

#[tokio::test]
async fn redeliver_checks_its_body_in_order() {
    let api = TestApi::new().await;
    let (id, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    let month_ago = (api.now() - chrono::Duration::days(31)).to_rfc3339();
    for (body, code) in [
        ("not json", "missing_fields"),
        ("[]", "missing_fields"),
        ("{}", "missing_fields"),
        (r#"{"event_id": null, "since": null}"#, "missing_fields"),
        (
            r#"{"event_id": "evt_x", "since": "2026-01-01T00:00:00Z"}"#,
            "invalid_fields",
        ),
        (r#"{"event_id": 5}"#, "invalid_fields"),
        (r#"{"since": "yesterday"}"#, "invalid_fields"),
        (r#"{"since": 1700000000}"#, "invalid_fields"),
    ] {
        redeliver(&api, &id, body).await.assert_error(400, code);
    }
    redeliver(&api, &id, &json!({"since": month_ago}).to_string())
        .await
        .assert_error(400, "invalid_fields");
    // A well-formed request for an event never delivered to it: 404.
    redeliver(
        &api,
        &id,
        r#"{"event_id": "evt_00000000000000000000000000000000"}"#,
    )
    .await
    .assert_error(404, "not_found");
    // Nothing failed: nothing queued.
    let r = redeliver(
        &api,
        &id,
        &json!({"since": (api.now() - chrono::Duration::hours(1)).to_rfc3339()}).to_string(),
    )
    .await;
    r.assert_status(202);
    assert_eq!(
        r.body,
        json!({"webhook_id": id, "queued": 0, "has_more": false})
    );
    let (theirs, _) = register(&api, &Keys::test_b(), "https://hooks.example.com/b").await;
    for other in [NOWHERE, "nope", theirs.as_str()] {
        redeliver(&api, other, r#"{"event_id": "evt_x"}"#)
            .await
            .assert_error(404, "not_found");
        send_test(&api, other).await.assert_error(404, "not_found");
    }
    // The path first: a malformed id is not found whatever the body.
    redeliver(&api, "nope", "not json")
        .await
        .assert_error(404, "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_event_is_sent_again_with_the_same_id_and_body() {
    let api = TestApi::with_delivery(&[PRIVATE_OK], None).await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, _) = register(&api, &Keys::test_a(), &receiver.url()).await;
    api.start_test_stream(&Keys::test_a()).await;
    let first = receiver.wait_for(1, WAIT).await[0].clone();
    let event_id = first.header("x-service-event-id").to_owned();
    log_of(&api, &id, 1).await;
    let r = redeliver(&api, &id, &json!({"event_id": event_id}).to_string()).await;
    r.assert_status(202);
    assert_eq!(
        r.body,
        json!({"webhook_id": id, "queued": 1, "has_more": false})
    );
    let again = receiver.wait_for(2, WAIT).await[1].clone();
    assert_eq!(again.header("x-service-event-id"), event_id);
    assert_eq!(again.body, first.body);
    let logged = log_of(&api, &id, 2).await;
    assert_eq!(logged["deliveries"][0]["attempt"], 1, "a new delivery");
    assert_eq!(logged["deliveries"][0]["event_id"], event_id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_lettered_event_is_recovered_by_since() {
    let api = TestApi::with_delivery(&[PRIVATE_OK, FAST_RETRIES], None).await;
    // Six failed attempts (the first and five retries), then the receiver is back.
    let receiver = Receiver::start(Behaviour::FailTimes(6)).await;
    let (id, _) = register(&api, &Keys::test_a(), &receiver.url()).await;
    let since = api.now() - chrono::Duration::minutes(5);
    api.start_test_stream(&Keys::test_a()).await;
    // Six attempts, each retry at least a second apart on SQS (its delays are whole seconds).
    api.wait_for_dead_letters(WAIT * 3).await;
    let logged = log_of(&api, &id, 6).await;
    assert_eq!(logged["deliveries"][0]["attempt"], 6);
    assert_eq!(logged["deliveries"][0]["next_attempt_at"], Value::Null);
    let event_id = logged["deliveries"][0]["event_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let r = redeliver(&api, &id, &json!({"since": since.to_rfc3339()}).to_string()).await;
    r.assert_status(202);
    assert_eq!(r.body["queued"], 1);
    let hit = receiver.wait_for(7, WAIT).await[6].clone();
    assert_eq!(hit.header("x-service-event-id"), event_id);
    let logged = log_of(&api, &id, 7).await;
    assert_eq!(logged["deliveries"][0]["status"], "succeeded");
    // Delivered now: nothing left to redeliver.
    let r = redeliver(&api, &id, &json!({"since": since.to_rfc3339()}).to_string()).await;
    assert_eq!(r.body["queued"], 0);
}

/// The webhook operations on DynamoDB and SQS under the faults AWS produces: every answer is
/// `2xx` or `500 db_error`; a rotation whose write was applied but whose answer was lost
/// rotates again from the secret it left, so the secret answered is the one that signs; and
/// once the faults stop, deliveries, the log and redelivery work on what was written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs DynamoDB and SQS (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_webhook_operations_under_aws_faults() {
    let api = TestApi::with_delivery(&[PRIVATE_OK, FAST_RETRIES], None).await;
    let table = api.table().expect("DynamoDB").to_owned();
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, _) = register(&api, &Keys::test_a(), &receiver.url()).await;
    // Failed deliveries for recovery to lease, queue and settle under the faults.
    let start = api.now() - chrono::Duration::hours(1);
    seed_failed(&api.runtime.app.store, &id, 0..30, start).await;
    let since = json!({"since": (start - chrono::Duration::seconds(1)).to_rfc3339()}).to_string();
    common::faults::set(
        &table,
        json!({"throttling": 0.1, "provisioned_throughput": 0.05, "internal_error": 0.05,
               "transaction_conflict": 0.1, "lost_response": 0.15, "sqs_500": 0.1}),
    )
    .await;
    let documented = |r: &Response| {
        assert!(
            r.status.is_success() || (r.status.as_u16() == 500 && r.code() == "db_error"),
            "{} {}",
            r.status,
            r.body
        );
        r.status.is_success()
    };
    let (mut rotations, mut patches) = (0, 0);
    for round in 0..12 {
        let r = rotate(&api, &id, None).await;
        rotations += usize::from(documented(&r));
        let active = json!({"active": round % 2 == 0}).to_string();
        patches += usize::from(documented(&patch(&api, &id, &active).await));
        documented(&api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await);
        documented(
            &api.get(&format!("/webhooks/{id}/deliveries"), &Keys::test_a())
                .await,
        );
        // Recovery leases, queues in batches and settles under the same faults.
        documented(&redeliver(&api, &id, &since).await);
    }
    let stats = common::faults::stats(&table).await;
    common::faults::clear(&table).await;
    let injected: u64 = stats["injected"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(Value::as_u64)
        .sum();
    assert!(injected >= 5, "faults were injected: {stats}");
    assert!(rotations > 0 && patches > 0, "{stats}");

    // What the faults left is whole: the secret a rotation answers is the one that signs.
    patch(&api, &id, r#"{"active": true}"#)
        .await
        .assert_status(200);
    let secret = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    let header = hit.header("x-service-signature");
    assert_eq!(
        header.matches("v1=").count(),
        2,
        "the new secret and the one it replaced"
    );
    let t = &header["t=".len()..header.find(',').unwrap()];
    let expected = hex::encode(hmac(secret.as_bytes(), &format!("{t}.{}", hit.body)));
    assert!(
        header.contains(&format!("v1={expected},")),
        "the answered secret signs first"
    );
    let event_id = hit.header("x-service-event-id").to_owned();
    log_of(&api, &id, 1).await;
    let r = redeliver(&api, &id, &json!({"event_id": event_id}).to_string()).await;
    r.assert_status(202);
    let again = receiver.wait_for(receiver.hits().len() + 1, WAIT).await;
    assert!(
        again
            .iter()
            .filter(|h| h.header("x-service-event-id") == event_id)
            .count()
            >= 2
    );
}

// ---- The log at volume (docs/webhooks.md, "Delivery log" and "Redeliver") ----

/// Attempt `n` of a seeded log: three attempts per event, the third succeeding, a second
/// apart from `start`.
fn seeded_attempt(
    webhook_id: &str,
    n: usize,
    start: DateTime<Utc>,
    ended_failed: bool,
) -> (DeliveryAttempt, DeliveredEvent) {
    let webhook_id = uuid::Uuid::parse_str(webhook_id).unwrap();
    let event_id = format!("evt_{:032x}", n / 3);
    let attempted_at = start + chrono::Duration::seconds(n as i64);
    let succeeded = !ended_failed && n % 3 == 2;
    let attempt = DeliveryAttempt {
        brand_id: "brand_a".into(),
        webhook_id,
        event_id: event_id.clone(),
        event_type: EventType::StreamStarted,
        event_created_at: start + chrono::Duration::seconds((n / 3 * 3) as i64),
        attempt: (n % 3) as u32 + 1,
        attempted_at,
        succeeded,
        response_status: Some(if succeeded { 200 } else { 500 }),
        duration_ms: 12,
        error: None,
        next_attempt_at: (!succeeded && !ended_failed)
            .then(|| attempted_at + chrono::Duration::seconds(1)),
    };
    let event = DeliveredEvent {
        brand_id: "brand_a".into(),
        webhook_id,
        event_id: event_id.clone(),
        event_type: EventType::StreamStarted,
        event_created_at: attempt.event_created_at,
        body: json!({"id": event_id, "type": "stream.started"}).to_string(),
    };
    (attempt, event)
}

/// Every page of a walk with `query`, following `next_cursor`; `between_pages` runs after the
/// first.
async fn walk(
    api: &TestApi,
    id: &str,
    query: &str,
    mut between_pages: impl AsyncFnMut(),
) -> Vec<Value> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page_query = match &cursor {
            Some(cursor) => format!("{query}&cursor={cursor}"),
            None => query.to_owned(),
        };
        let page = log(api, id, &page_query).await;
        seen.extend(page["deliveries"].as_array().unwrap().iter().cloned());
        if cursor.is_none() {
            between_pages().await;
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return seen,
        }
    }
}

/// A cursor as a client could forge one: the right webhook and no filters, any position.
fn forged_cursor(webhook_id: &str, position: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(json!({"w": webhook_id, "s": "", "e": "", "p": position}).to_string())
}

#[tokio::test]
async fn cursor_walks_return_each_attempt_once_in_order_for_every_filter() {
    let api = TestApi::new().await;
    let (id, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    let store = api.runtime.app.store.clone();
    let start = api.now() - chrono::Duration::days(2);
    let seeded: Vec<(DeliveryAttempt, DeliveredEvent)> = (0..90)
        .map(|n| seeded_attempt(&id, n, start, false))
        .collect();
    for (attempt, event) in &seeded {
        store.record_attempt(attempt, event).await.unwrap();
    }
    let newest_first = |keep: &dyn Fn(&DeliveryAttempt) -> bool| -> Vec<(String, u64)> {
        seeded
            .iter()
            .rev()
            .map(|(a, _)| a)
            .filter(|a| keep(a))
            .map(|a| (a.event_id.clone(), u64::from(a.attempt)))
            .collect()
    };
    let shown = |entries: &[Value]| -> Vec<(String, u64)> {
        entries
            .iter()
            .map(|e| {
                (
                    e["event_id"].as_str().unwrap().to_owned(),
                    e["attempt"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let event = format!("evt_{:032x}", 7);
    type Keep<'a> = Box<dyn Fn(&DeliveryAttempt) -> bool + 'a>;
    let cases: [(String, Keep<'_>); 5] = [
        ("?limit=7".into(), Box::new(|_| true)),
        ("?limit=7&status=failed".into(), Box::new(|a| !a.succeeded)),
        (
            "?limit=4&status=succeeded".into(),
            Box::new(|a| a.succeeded),
        ),
        (
            format!("?limit=2&event_id={event}"),
            Box::new(|a| a.event_id == event),
        ),
        (
            format!("?limit=1&event_id={event}&status=failed"),
            Box::new(|a| a.event_id == event && !a.succeeded),
        ),
    ];
    for (query, keep) in &cases {
        let walked = walk(&api, &id, query, async || {}).await;
        assert_eq!(shown(&walked), newest_first(keep.as_ref()), "{query}");
    }

    // Attempts recorded during a walk appear only on a new walk.
    let later: Vec<_> = (0..5)
        .map(|n| seeded_attempt(&id, 300 + n, api.now(), false))
        .collect();
    let walked = walk(&api, &id, "?limit=10", async || {
        for (attempt, event) in &later {
            store.record_attempt(attempt, event).await.unwrap();
        }
    })
    .await;
    assert_eq!(shown(&walked), newest_first(&|_| true));
    assert_eq!(walk(&api, &id, "?limit=100", async || {}).await.len(), 95);

    // A cursor belongs to its webhook and its filters.
    let first = log(&api, &id, "?limit=3&status=failed").await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let (other, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/b").await;
    for (webhook, query) in [
        (id.as_str(), format!("?cursor={cursor}")),
        (id.as_str(), format!("?status=succeeded&cursor={cursor}")),
        (
            id.as_str(),
            format!("?status=failed&event_id={event}&cursor={cursor}"),
        ),
        (other.as_str(), format!("?status=failed&cursor={cursor}")),
        (id.as_str(), "?cursor=not-a-cursor".into()),
        (id.as_str(), "?cursor=".into()),
        (id.as_str(), "?cursor=e30".into()),
        (
            id.as_str(),
            format!("?cursor={}", forged_cursor(&id, &"9".repeat(3000))),
        ),
        (
            id.as_str(),
            format!(
                "?cursor={}",
                forged_cursor(&id, "2026-01-01T00:00:00.000000Z#evt_x")
            ),
        ),
    ] {
        api.get(
            &format!("/webhooks/{webhook}/deliveries{query}"),
            &Keys::test_a(),
        )
        .await
        .assert_error(400, "invalid_fields");
    }
    // A cursor whose place aged out of the 30 days has nothing after it; an event id that
    // cannot be one matches nothing.
    let aged = forged_cursor(&id, "2020-01-01T00:00:00.000000Z#evt_x#1");
    let page = log(&api, &id, &format!("?cursor={aged}")).await;
    assert_eq!(
        (page["deliveries"].clone(), page["next_cursor"].clone()),
        (json!([]), Value::Null)
    );
    let long = "e".repeat(5_000);
    let page = log(&api, &id, &format!("?event_id={long}")).await;
    assert_eq!(page["deliveries"], json!([]));
    // The same cursor with its filters goes on.
    let next = log(
        &api,
        &id,
        &format!("?limit=3&status=failed&cursor={cursor}"),
    )
    .await;
    assert_eq!(next["deliveries"].as_array().unwrap().len(), 3);
}

/// Events `range`, each with one attempt that ended its delivery failed, recorded a few at once.
async fn seed_failed(
    store: &std::sync::Arc<dyn hosting_domain::ports::Store>,
    webhook_id: &str,
    range: std::ops::Range<usize>,
    start: DateTime<Utc>,
) {
    let seeded: Vec<_> = range
        .map(|n| seeded_attempt(webhook_id, n * 3, start, true))
        .collect();
    for chunk in seeded.chunks(16) {
        let writes = chunk
            .iter()
            .map(|(attempt, event)| store.record_attempt(attempt, event));
        for written in futures::future::join_all(writes).await {
            written.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_queues_a_thousand_failed_deliveries_a_call_and_never_one_twice() {
    let api = TestApi::new().await;
    let (id, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    let store = api.runtime.app.store.clone();
    let start = api.now() - chrono::Duration::days(3);
    // 1,040 events whose delivery ended failed, one attempt each, and one that succeeded.
    seed_failed(&store, &id, 0..1_040, start).await;
    let (attempt, event) = seeded_attempt(&id, 5_000 * 3 + 2, start, false);
    store.record_attempt(&attempt, &event).await.unwrap();
    let since = json!({"since": (start - chrono::Duration::seconds(1)).to_rfc3339()}).to_string();

    // One call queues the oldest 1,000 and says there are more.
    let r = redeliver(&api, &id, &since).await;
    assert_eq!(
        r.body,
        json!({"webhook_id": id, "queued": 1_000, "has_more": true})
    );
    // Calls at once take disjoint sets of the rest: each event once in all.
    let (a, b) = tokio::join!(redeliver(&api, &id, &since), redeliver(&api, &id, &since));
    a.assert_status(202);
    b.assert_status(202);
    assert_eq!(
        a.body["queued"].as_u64().unwrap() + b.body["queued"].as_u64().unwrap(),
        40,
        "{} {}",
        a.body,
        b.body
    );
    assert_eq!(
        (&a.body["has_more"], &b.body["has_more"]),
        (&json!(false), &json!(false))
    );
    // Those queued are pending: nothing is left to queue.
    let r = redeliver(&api, &id, &since).await;
    assert_eq!(
        r.body,
        json!({"webhook_id": id, "queued": 0, "has_more": false})
    );
    let other = id.clone();
    // A redelivery by id takes its event out of recovery too.
    let (attempt, event) = seeded_attempt(&other, 9_000 * 3, start, true);
    store.record_attempt(&attempt, &event).await.unwrap();
    let by_id = json!({"event_id": event.event_id}).to_string();
    redeliver(&api, &other, &by_id).await.assert_status(202);
    let r = redeliver(&api, &other, &since).await;
    assert_eq!(r.body["queued"], 0);
}
