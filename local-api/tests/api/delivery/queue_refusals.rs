//! Events the queue refuses: characters SQS refuses arrive intact, and an event that cannot be queued is set aside and replayed.

use std::time::Duration;

use serde_json::{Value, json};

use super::assert_signed;
use crate::common::receiver::{Behaviour, Receiver, run_verifier};
use crate::common::*;

/// A receiver registered by the brand of `key` for `stream.started`; returns it and the secret.
async fn receiver_of(api: &TestApp, key: &str) -> (Receiver, String) {
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (_, secret) = register_webhook(api, key, &receiver.url(), json!(["stream.started"])).await;
    (receiver, secret)
}

/// `U+FFFF` is a valid JSON string character that SQS refuses in a message body.
const ODD_PRODUCT: &str = "Glow \u{FFFF} Serum";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the stripe and standardwebhooks verifiers (WEBHOOK_VERIFIER_PYTHON): scripts/test.sh runs it"]
async fn characters_sqs_refuses_arrive_intact_and_hold_up_no_one() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
    let (odd, secret) = receiver_of(&api, &Keys::test_a()).await;
    let (other, _) = receiver_of(&api, &Keys::test_b()).await;

    let r = api
        .start(&Keys::test_a(), json!({"product_name": ODD_PRODUCT}))
        .await;
    r.assert_status(201);
    let started = std::time::Instant::now();
    api.start_test_stream(&Keys::test_b()).await;
    // Another brand's event, started after it, arrives within seconds.
    other.wait_for(1, WAIT).await;
    assert!(started.elapsed() < WAIT);

    let hit = odd.wait_for(1, WAIT).await.remove(0);
    let body: Value = serde_json::from_str(&hit.body).unwrap();
    assert_eq!(body["data"]["stream"]["product_name"], ODD_PRODUCT);
    assert!(
        hit.body.contains(ODD_PRODUCT),
        "the character itself, not an escape"
    );
    assert_signed(&hit, &secret);
    let (ok, output) = run_verifier(&secret, &hit);
    assert!(
        ok && output.contains("stripe: ok") && output.contains("standardwebhooks: ok"),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_cannot_be_queued_is_set_aside_and_replayed_holding_up_no_one() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .with_outbox_retry_delays_secs(&[0.05, 0.05])
        .await;
    let (stuck, _) = receiver_of(&api, &Keys::test_a()).await;
    let (other, _) = receiver_of(&api, &Keys::test_b()).await;
    api.refuse_queue_bodies_containing(Some("poison-pill"))
        .await;

    let stuck_id = api
        .start(&Keys::test_a(), json!({"product_name": "poison-pill"}))
        .await
        .body["stream_id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.start_test_stream(&Keys::test_b()).await;
    other.wait_for(1, WAIT).await;

    // Tried once and twice more, then set aside with its reason.
    let store = &api.runtime.app.store;
    let deadline = std::time::Instant::now() + WAIT;
    let set_aside = loop {
        let set_aside = store.set_aside_events(10).await.unwrap();
        if !set_aside.is_empty() {
            break set_aside;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing was set aside"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(set_aside.len(), 1);
    assert_eq!(
        set_aside[0]
            .event
            .stream_id
            .map(|id| id.to_string())
            .unwrap_or_default(),
        stuck_id
    );
    assert_eq!(set_aside[0].attempts, 3);
    assert!(
        set_aside[0].error.contains("refused")
            || set_aside[0].error.contains("InvalidMessageContents"),
        "{}",
        set_aside[0].error
    );
    assert!(stuck.hits().is_empty());

    // The operator's replay, once the cause is gone: delivered, same event.
    api.refuse_queue_bodies_containing(None).await;
    let event_id = set_aside[0].event.id.clone();
    assert!(store.requeue_event(&event_id, api.now()).await.unwrap());
    assert!(
        !store.requeue_event(&event_id, api.now()).await.unwrap(),
        "not set aside any more"
    );
    let hit = stuck.wait_for(1, WAIT).await.remove(0);
    assert_eq!(hit.header("webhook-id"), event_id);
    assert!(store.set_aside_events(10).await.unwrap().is_empty());
}
