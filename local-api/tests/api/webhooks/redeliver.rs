//! `POST /webhooks/{id}/redeliver`: one event again, recovery by `since`, at volume and under AWS faults.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::{log_of, next_delivery, patch, register, rotate, rotated, seeded_attempt, send_test};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

async fn redeliver(api: &TestApp, id: &str, body: &str) -> Response {
    api.call_raw(
        "POST",
        &format!("/webhooks/{id}/redeliver"),
        Some(&Keys::test_a()),
        Some(body),
    )
    .await
}

#[tokio::test]
async fn redeliver_checks_its_body_in_order() {
    let api = TestApp::new().await;
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
    // An id no event can have is not found, and never reaches the store as a key (DynamoDB
    // refuses keys over 2,048 bytes: that was a 500).
    for event_id in [
        "e".repeat(3_000),
        String::new(),
        "evt x".into(),
        "évt".into(),
    ] {
        redeliver(&api, &id, &json!({ "event_id": event_id }).to_string())
            .await
            .assert_error(404, "not_found");
    }
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
    for other in [ABSENT_ID, "nope", theirs.as_str()] {
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
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
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
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
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
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
    let table = api.table().expect("DynamoDB").to_owned();
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, _) = register(&api, &Keys::test_a(), &receiver.url()).await;
    // Failed deliveries for recovery to lease, queue and settle under the faults.
    let start = api.now() - chrono::Duration::hours(1);
    seed_failed(&api.runtime.app.store, &id, 0..30, start).await;
    let since = json!({"since": (start - chrono::Duration::seconds(1)).to_rfc3339()}).to_string();
    crate::common::faults::set(
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
        // A page of one event reads its body beside the page: answered whole, or db_error.
        let one = api
            .get(
                &format!("/webhooks/{id}/deliveries?event_id={FIRST_SEEDED}"),
                &Keys::test_a(),
            )
            .await;
        if documented(&one) {
            let entries = one.body["deliveries"].as_array().unwrap();
            assert!(!entries.is_empty());
            for entry in entries {
                assert_eq!(
                    entry["body"],
                    json!({"id": FIRST_SEEDED, "type": "stream.started"})
                );
            }
        }
        // Recovery leases, queues in batches and settles under the same faults.
        documented(&redeliver(&api, &id, &since).await);
    }
    let stats = crate::common::faults::stats(&table).await;
    crate::common::faults::clear(&table).await;
    let injected = crate::common::faults::injected(&stats);
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
    // The stream's end and late recoveries arrive alongside: wait for this event by its id.
    let again = receiver.wait_for_event(&event_id, 2, WAIT).await;
    assert_eq!(
        again[0].body, again[1].body,
        "sent again with the same body"
    );
}

/// The event id `seed_failed` gives its first event (`seeded_attempt`'s, for `n` 0).
const FIRST_SEEDED: &str = "evt_00000000000000000000000000000000";

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
    slow_by_design(
        "recovery_queues_a_thousand",
        "about 1 min on DynamoDB: 1,040 failed deliveries seeded and recovered",
    );
    let api = TestApp::new().await;
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
