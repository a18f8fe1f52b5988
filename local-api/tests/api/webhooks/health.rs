//! Endpoint health (docs/webhooks.md, "Endpoint health"): `failing_since` through failures and
//! a success, disabling after `WEBHOOK_DISABLE_AFTER_SECS`, on `410` and by `PATCH`, no attempt
//! once disabled, the `webhook.disabled` notice to the brand's other webhooks that list it, and
//! recovery after enabling again. Real receivers on loopback.

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::{log_of, patch, send_test};
use crate::common::receiver::{Behaviour, Hit, Receiver};
use crate::common::*;

/// Retries a second apart: SQS delays are whole seconds.
const RETRIES: [f64; 5] = [1.0, 1.0, 1.0, 1.0, 1.0];

async fn api_disabling_after(secs: u64) -> TestApp {
    TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_webhook_retry_delays_secs(&RETRIES)
        .with_var("WEBHOOK_DISABLE_AFTER_SECS", secs.to_string())
        .await
}

/// A receiver answering `status` until the test changes it, registered for `events` by
/// brand A: (its status, the receiver, the webhook's id).
async fn receiver_listing(
    api: &TestApp,
    status: u16,
    events: Value,
) -> (Arc<AtomicU16>, Receiver, String) {
    let status = Arc::new(AtomicU16::new(status));
    let receiver = Receiver::start(Behaviour::Controlled(status.clone())).await;
    let (id, _) = register_webhook(api, &Keys::test_a(), &receiver.url(), events).await;
    (status, receiver, id)
}

async fn detail(api: &TestApp, id: &str) -> Value {
    let r = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    r.assert_status(200);
    r.body
}

/// Polls the webhook's detail until `done` holds, well inside the key's rate limit.
async fn detail_when(api: &TestApp, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..60 {
        let body = detail(api, id).await;
        if done(&body) {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!(
        "the webhook never reached the state: {}",
        detail(api, id).await
    );
}

fn events_of(hits: &[Hit], event_type: &str) -> Vec<Value> {
    hits.iter()
        .map(|hit| serde_json::from_str::<Value>(&hit.body).unwrap())
        .filter(|event| event["type"] == event_type)
        .collect()
}

/// A notice's receiver: lists `webhook.disabled` only.
async fn notice_receiver(api: &TestApp) -> (String, Receiver) {
    let (_, receiver, id) = receiver_listing(api, 200, json!(["webhook.disabled"])).await;
    (id, receiver)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_since_starts_at_the_first_failure_and_a_success_clears_it() {
    let api = api_disabling_after(3_600).await;
    let (status, _receiver, id) = receiver_listing(&api, 500, json!(["stream.started"])).await;
    assert_eq!(detail(&api, &id).await["failing_since"], Value::Null);
    api.start_test_stream(&Keys::test_a()).await;
    let failing = detail_when(&api, &id, |d| d["failing_since"].is_string()).await;
    let since = failing["failing_since"].clone();
    let first = log_of(&api, &id, 1).await["deliveries"][0].clone();
    assert_eq!(since, first["attempted_at"], "the first failed attempt");
    // The second failure leaves it where the run began.
    log_of(&api, &id, 2).await;
    let again = detail(&api, &id).await;
    assert_eq!(again["failing_since"], since);
    assert_eq!(again["active"], true);
    assert!(again.get("disabled_reason").is_none());
    // A success ends the run.
    status.store(200, Ordering::SeqCst);
    detail_when(&api, &id, |d| d["failing_since"].is_null()).await;
    let logged = log_of(&api, &id, 3).await;
    assert_eq!(logged["deliveries"][0]["status"], "succeeded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_failing_past_the_limit_is_disabled_and_the_others_that_list_it_hear_once() {
    // With delivery the app runs on the system clock: a limit of 2 s, and retries 1 s apart,
    // disable it at the third attempt or so.
    let api = api_disabling_after(2).await;
    let (_, failing, id) =
        receiver_listing(&api, 503, json!(["stream.started", "webhook.disabled"])).await;
    let (notice_id, notices) = notice_receiver(&api).await;
    // Another webhook of the brand that does not list it, and another brand's that does.
    let (_, unlisted, _) = receiver_listing(&api, 200, json!(["stream.started"])).await;
    let foreign = Receiver::start(Behaviour::Ok).await;
    register_webhook(
        &api,
        &Keys::test_b(),
        &foreign.url(),
        json!(["webhook.disabled"]),
    )
    .await;

    api.start_test_stream(&Keys::test_a()).await;
    let run = detail_when(&api, &id, |d| d["failing_since"].is_string()).await;
    // Not yet: the run is younger than the limit.
    assert_eq!(run["active"], true);
    let disabled = detail_when(&api, &id, |d| d["active"] == false).await;
    assert_eq!(disabled["disabled_reason"], "failing");
    assert_eq!(disabled["failing_since"], run["failing_since"]);
    // The disabling attempt was the last: no retry is scheduled; the one before it was
    // retried, inside the limit.
    let logged = log_of(&api, &id, 2).await;
    let last = &logged["deliveries"][0];
    assert_eq!(last["status"], "failed");
    assert_eq!(last["next_attempt_at"], Value::Null);
    let since =
        chrono::DateTime::parse_from_rfc3339(run["failing_since"].as_str().unwrap()).unwrap();
    let at = chrono::DateTime::parse_from_rfc3339(last["attempted_at"].as_str().unwrap()).unwrap();
    assert!(at - since >= chrono::Duration::seconds(2), "{since} {at}");
    assert!(logged["deliveries"][1]["next_attempt_at"].is_string());
    let attempts = failing.hits().len();

    let hits = notices.wait_for(1, WAIT).await;
    let notice: Value = serde_json::from_str(&hits[0].body).unwrap();
    assert_eq!(notice["type"], "webhook.disabled");
    assert_eq!(notice["test"], false);
    assert_eq!(notice["api_version"], "v1");
    assert_eq!(notice["data"]["webhook"], disabled, "the detail, as read");
    assert!(notice["data"].get("stream").is_none());
    assert_eq!(hits[0].header("x-service-event-type"), "webhook.disabled");
    for secretish in ["whsec_", "whsk_", "\"secret\"", "signing_key"] {
        assert!(!hits[0].body.contains(secretish), "{secretish}");
    }
    // Nothing more reaches the disabled receiver; the notice came once, only where listed.
    api.start_test_stream(&Keys::test_a()).await;
    unlisted.wait_for(2, WAIT).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(failing.hits().len(), attempts, "no attempt once disabled");
    assert_eq!(events_of(&notices.hits(), "webhook.disabled").len(), 1);
    assert!(events_of(&unlisted.hits(), "webhook.disabled").is_empty());
    assert!(foreign.hits().is_empty());
    // The notice's own delivery is logged on the webhook that received it.
    let notice_log = log_of(&api, &notice_id, 1).await;
    assert_eq!(
        notice_log["deliveries"][0]["event_type"],
        "webhook.disabled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_disables_with_reason_gone_and_a_patch_enables_again() {
    let api = api_disabling_after(3_600).await;
    let (status, gone, id) = receiver_listing(&api, 410, json!(["stream.started"])).await;
    let (_, notices) = notice_receiver(&api).await;
    api.start_test_stream(&Keys::test_a()).await;
    let disabled = detail_when(&api, &id, |d| d["active"] == false).await;
    assert_eq!(disabled["disabled_reason"], "gone");
    assert!(disabled["failing_since"].is_string(), "a 410 is a failure");
    let hits = notices.wait_for(1, WAIT).await;
    let notice: Value = serde_json::from_str(&hits[0].body).unwrap();
    assert_eq!(notice["data"]["webhook"]["disabled_reason"], "gone");
    assert_eq!(notice["data"]["webhook"]["webhook_id"], id.as_str());

    // Disabling by hand keeps the reason of a webhook already off.
    patch(&api, &id, r#"{"active": false}"#)
        .await
        .assert_status(200);
    assert_eq!(detail(&api, &id).await["disabled_reason"], "gone");
    // Enabling clears both fields, and deliveries resume.
    status.store(200, Ordering::SeqCst);
    let r = patch(&api, &id, r#"{"active": true}"#).await;
    r.assert_status(200);
    assert_eq!(r.body["active"], true);
    assert_eq!(r.body["failing_since"], Value::Null);
    assert!(r.body.get("disabled_reason").is_none());
    api.start_test_stream(&Keys::test_a()).await;
    gone.wait_for(2, WAIT).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(events_of(&notices.hits(), "webhook.disabled").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_by_hand_its_retries_end_failed_unattempted_and_since_recovers_them() {
    let api = api_disabling_after(3_600).await;
    let (status, receiver, id) = receiver_listing(&api, 500, json!(["stream.started"])).await;
    let (_, notices) = notice_receiver(&api).await;
    let since = api.now() - chrono::Duration::minutes(1);
    api.start_test_stream(&Keys::test_a()).await;
    receiver.wait_for(1, WAIT).await;
    let r = patch(&api, &id, r#"{"active": false}"#).await;
    r.assert_status(200);
    assert_eq!(r.body["disabled_reason"], "manual");
    assert_eq!(r.body["active"], false);
    // The retry comes due on a disabled webhook: not attempted, ended failed.
    let logged = log_of(&api, &id, 2).await;
    let ended = &logged["deliveries"][0];
    assert_eq!(ended["attempt"], 2);
    assert_eq!(ended["status"], "failed");
    assert_eq!(ended["response_status"], Value::Null);
    assert_eq!(ended["error"], "webhook disabled: not attempted");
    assert_eq!(ended["next_attempt_at"], Value::Null);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.hits().len(), 1, "nothing sent once disabled");
    assert!(
        notices.hits().is_empty(),
        "no notice for a webhook disabled by hand"
    );

    status.store(200, Ordering::SeqCst);
    patch(&api, &id, r#"{"active": true}"#)
        .await
        .assert_status(200);
    let r = api
        .call(
            "POST",
            &format!("/webhooks/{id}/redeliver"),
            Some(&Keys::test_a()),
            Some(json!({"since": since.to_rfc3339()})),
        )
        .await;
    r.assert_status(202);
    assert_eq!(r.body["queued"], 1);
    let hits = receiver.wait_for(2, WAIT).await;
    assert_eq!(hits[1].body, hits[0].body, "the same event");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_event_leaves_the_health_as_it_is() {
    let api = api_disabling_after(0).await;
    let (_, _receiver, id) = receiver_listing(&api, 500, json!(["stream.started"])).await;
    for _ in 0..2 {
        let r = send_test(&api, &id).await;
        r.assert_status(200);
        assert_eq!(r.body["delivered"], false);
    }
    let after = detail(&api, &id).await;
    assert_eq!(after["failing_since"], Value::Null);
    assert_eq!(after["active"], true);
}

#[tokio::test]
async fn webhook_disabled_is_selectable_at_registration_and_patch() {
    let api = TestApp::new().await;
    let (id, _) = register_webhook(
        &api,
        &Keys::test_a(),
        "https://hooks.example.com/a",
        json!(["webhook.disabled"]),
    )
    .await;
    assert_eq!(
        detail(&api, &id).await["events"],
        json!(["webhook.disabled"])
    );
    let r = patch(
        &api,
        &id,
        r#"{"events": ["stream.ended", "webhook.disabled"]}"#,
    )
    .await;
    r.assert_status(200);
    assert_eq!(
        r.body["events"],
        json!(["stream.ended", "webhook.disabled"])
    );
    // `webhook.test` is still no subscription.
    patch(&api, &id, r#"{"events": ["webhook.test"]}"#)
        .await
        .assert_error(400, "invalid_events");
}

/// The distinct `webhook.disabled` events among `hits` (a delivery may repeat: at least once).
fn distinct_notices(hits: &[Hit]) -> std::collections::BTreeSet<String> {
    events_of(hits, "webhook.disabled")
        .iter()
        .map(|event| event["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_failures_disable_the_webhook_once_with_one_notice() {
    let api = api_disabling_after(3_600).await;
    let (_, _gone, id) = receiver_listing(&api, 410, json!(["stream.started"])).await;
    let (_, notices) = notice_receiver(&api).await;
    // Three deliveries at once, each answered `410`, up to the brand's three slots.
    let key = Keys::test_a();
    let (a, b, c) = tokio::join!(
        api.start(&key, json!({})),
        api.start(&key, json!({})),
        api.start(&key, json!({}))
    );
    for r in [a, b, c] {
        r.assert_status(201);
    }
    let disabled = detail_when(&api, &id, |d| d["active"] == false).await;
    assert_eq!(disabled["disabled_reason"], "gone");
    notices.wait_for(1, WAIT).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(distinct_notices(&notices.hits()).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_a_webhook_is_disabled_with_one_notice_through_store_faults() {
    let api = api_disabling_after(3_600).await;
    let table = api.table().expect("DynamoDB").to_owned();
    let (_, _gone, id) = receiver_listing(&api, 410, json!(["stream.started"])).await;
    let (_, notices) = notice_receiver(&api).await;
    faults::set(&table, serde_json::from_str(crate::faults::FAULTS).unwrap()).await;
    // Under faults a start may be refused; the first that is made is delivered.
    let mut started = false;
    for _ in 0..10 {
        if api.start(&Keys::test_a(), json!({})).await.status.as_u16() == 201 {
            started = true;
            break;
        }
    }
    assert!(started, "no start got through the faults");
    let hits = notices.wait_for(1, Duration::from_secs(60)).await;
    let stats = faults::stats(&table).await;
    faults::clear(&table).await;
    assert!(faults::injected(&stats) > 0, "{stats}");
    let notice: Value = serde_json::from_str(&hits[0].body).unwrap();
    assert_eq!(notice["data"]["webhook"]["webhook_id"], id.as_str());
    let disabled = detail_when(&api, &id, |d| d["active"] == false).await;
    assert_eq!(disabled["disabled_reason"], "gone");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(distinct_notices(&notices.hits()).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs DynamoDB and SQS (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_a_healthy_webhook_costs_no_write_for_its_health() {
    let api = api_disabling_after(3_600).await;
    let (status, receiver, id) =
        receiver_listing(&api, 200, json!(["stream.started", "stream.ended"])).await;
    let webhook_sk = format!("WEBHOOK#{id}");
    let health_writes = |requests: &crate::common::store_log::StoreRequests| {
        requests.naming("UpdateItem", &webhook_sk)
            + requests.naming("TransactWriteItems", &webhook_sk)
    };
    api.store_requests();
    // Successes of a healthy webhook: no write to it.
    for _ in 0..3 {
        let stream = api.start_test_stream(&Keys::test_a()).await;
        api.delete(&format!("/streams/{stream}"), &Keys::test_a())
            .await
            .assert_status(200);
    }
    receiver.wait_for(6, WAIT).await;
    log_of(&api, &id, 6).await;
    let requests = api.store_requests();
    assert_eq!(health_writes(&requests), 0, "{:?}", requests.operations());
    // The first failure of a run writes once; the success that ends it, once.
    status.store(500, Ordering::SeqCst);
    api.start_test_stream(&Keys::test_a()).await;
    detail_when(&api, &id, |d| d["failing_since"].is_string()).await;
    status.store(200, Ordering::SeqCst);
    detail_when(&api, &id, |d| d["failing_since"].is_null()).await;
    let requests = api.store_requests();
    assert_eq!(health_writes(&requests), 2, "{:?}", requests.operations());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs DynamoDB and SQS (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_failing_since_is_set_and_cleared_through_store_faults() {
    let api = api_disabling_after(3_600).await;
    let table = api.table().expect("DynamoDB").to_owned();
    let (status, receiver, id) = receiver_listing(&api, 500, json!(["stream.started"])).await;
    faults::set(&table, serde_json::from_str(crate::faults::FAULTS).unwrap()).await;
    // Under faults a start may be refused, and a read answer `500`: both are tried again.
    let mut started = false;
    for _ in 0..10 {
        if api.start(&Keys::test_a(), json!({})).await.status.as_u16() == 201 {
            started = true;
            break;
        }
    }
    assert!(started, "no start got through the faults");
    let read_when = |done: fn(&Value) -> bool| {
        let api = &api;
        let id = id.clone();
        async move {
            for _ in 0..120 {
                let r = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
                if r.status.as_u16() == 200 && done(&r.body) {
                    return r.body;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            panic!("the webhook never reached the state");
        }
    };
    let failing = read_when(|d| d["failing_since"].is_string()).await;
    assert_eq!(failing["active"], true);
    status.store(200, Ordering::SeqCst);
    read_when(|d| d["failing_since"].is_null()).await;
    let stats = faults::stats(&table).await;
    faults::clear(&table).await;
    assert!(faults::injected(&stats) > 0, "{stats}");
    assert!(receiver.hits().len() >= 2);
}
