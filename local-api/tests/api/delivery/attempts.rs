//! Fan-out, both signature schemes, retries, `410`, redirects, timeouts and dead letters.

use std::time::Duration;

use serde_json::{Value, json};

use super::assert_signed;
use crate::common::receiver::{Behaviour, Hit, Receiver, run_verifier};
use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_webhook_gets_only_its_event_types_signed() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let started = Receiver::start(Behaviour::Ok).await;
    let ended = Receiver::start(Behaviour::Ok).await;
    let other_brand = Receiver::start(Behaviour::Ok).await;
    let (_, started_secret) = register_webhook(
        &api,
        &Keys::test_a(),
        &started.url(),
        json!(["stream.started"]),
    )
    .await;
    let (_, ended_secret) = register_webhook(
        &api,
        &Keys::test_a(),
        &ended.url(),
        json!(["stream.ended", "stream.error"]),
    )
    .await;
    register_webhook(
        &api,
        &Keys::test_b(),
        &other_brand.url(),
        json!(["stream.started", "stream.ended"]),
    )
    .await;

    let id = api.start_test_stream(&Keys::test_a()).await;
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);

    let hit = &started.wait_for(1, WAIT).await[0];
    let end_hit = &ended.wait_for(1, WAIT).await[0];
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(started.hits().len(), 1);
    assert_eq!(ended.hits().len(), 1);
    assert!(other_brand.hits().is_empty());

    for (hit, secret, kind) in [
        (hit, &started_secret, "stream.started"),
        (end_hit, &ended_secret, "stream.ended"),
    ] {
        assert_signed(hit, secret);
        let body: Value = serde_json::from_str(&hit.body).unwrap();
        assert_eq!(body["type"], kind);
        assert_eq!(body["test"], true);
        assert_eq!(body["api_version"], "v1");
        assert_eq!(body["data"]["stream"]["stream_id"], id.as_str());
        // An event is a change, not a read: no `usage` as of some later moment (docs/usage.md).
        assert!(body["data"]["stream"].get("usage").is_none());
        assert_eq!(
            hit.header("x-service-event-id"),
            body["id"].as_str().unwrap()
        );
        assert_eq!(hit.header("webhook-id"), body["id"].as_str().unwrap());
        assert_eq!(hit.header("x-service-event-type"), kind);
        assert_eq!(hit.header("content-type"), "application/json");
        assert!(
            hit.header("user-agent")
                .starts_with("LiveStreamHostingAPI-Webhooks/")
        );
        assert_eq!(hit.path, "/hook");
    }
    let ended_body: Value = serde_json::from_str(&end_hit.body).unwrap();
    assert_eq!(ended_body["data"]["stream"]["status"], "ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_three_times_then_delivered_with_the_same_event() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
    let receiver = Receiver::start(Behaviour::FailTimes(3)).await;
    let (_, secret) = register_webhook(
        &api,
        &Keys::test_a(),
        &receiver.url(),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;

    let hits = receiver.wait_for(4, WAIT * 2).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        receiver.hits().len(),
        4,
        "delivered on the 4th attempt, then no more"
    );
    for hit in &hits {
        assert_eq!(hit.body, hits[0].body);
        assert_eq!(
            hit.header("x-service-event-id"),
            hits[0].header("x-service-event-id")
        );
        assert_signed(hit, &secret);
    }
    assert!(api.dead_letters().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_failing_gets_six_attempts_then_a_dead_letter() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
    let receiver = Receiver::start(Behaviour::Always(500)).await;
    let (webhook_id, _) = register_webhook(
        &api,
        &Keys::test_a(),
        &receiver.url(),
        json!(["stream.started"]),
    )
    .await;
    let stream_id = api.start_test_stream(&Keys::test_a()).await;

    // Six attempts, each retry at least a second apart on SQS (its delays are whole seconds).
    receiver.wait_for(6, WAIT * 3).await;
    api.wait_for_dead_letters(WAIT).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(receiver.hits().len(), 6);
    let dead = api.dead_letters().await;
    assert_eq!(dead.len(), 1);
    let letter = &dead[0];
    assert_eq!(letter.delivery.attempt, 6);
    assert_eq!(letter.delivery.webhook_id.to_string(), webhook_id);
    assert_eq!(letter.delivery.body, receiver.hits()[0].body);
    assert!(letter.delivery.body.contains(&stream_id));
    assert!(letter.last_error.contains("500"), "{}", letter.last_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gone_deactivates_the_webhook() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
    let receiver = Receiver::start(Behaviour::Always(410)).await;
    register_webhook(
        &api,
        &Keys::test_a(),
        &receiver.url(),
        json!(["stream.started", "stream.ended"]),
    )
    .await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    receiver.wait_for(1, WAIT).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while api.get("/webhooks", &Keys::test_a()).await.body["webhooks"][0]["active"] != false {
        assert!(
            tokio::time::Instant::now() < deadline,
            "webhook still active"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        receiver.hits().len(),
        1,
        "no retries and no further deliveries"
    );
    assert!(api.dead_letters().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_failures_and_never_followed() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_webhook_retry_delays_secs(&[0.05, 0.05])
        .await;
    let receiver = Receiver::start(Behaviour::Redirect).await;
    register_webhook(
        &api,
        &Keys::test_a(),
        &receiver.url(),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;
    api.wait_for_dead_letters(WAIT).await;
    let hits = receiver.hits();
    assert_eq!(hits.len(), 3);
    assert!(
        hits.iter().all(|h| h.path == "/hook"),
        "the redirect target is never requested"
    );
    assert!(api.dead_letters().await[0].last_error.contains("302"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_receiver_times_out_and_delays_no_one_else() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_webhook_timeout_secs(1)
        .with_webhook_retry_delays_secs(&[0.05])
        .await;
    let slow = Receiver::start(Behaviour::Slow(Duration::from_secs(4))).await;
    let fast = Receiver::start(Behaviour::Ok).await;
    register_webhook(
        &api,
        &Keys::test_a(),
        &slow.url(),
        json!(["stream.started"]),
    )
    .await;
    register_webhook(
        &api,
        &Keys::test_a(),
        &fast.url(),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;
    // The fast one is served without waiting for the slow one's attempt to time out.
    let slow_first = slow.wait_for(1, WAIT).await[0].at;
    let fast_first = fast.wait_for(1, WAIT).await[0].at;
    assert!(
        fast_first < slow_first + chrono::Duration::seconds(1),
        "fast delivered at {fast_first}, slow attempt began at {slow_first}"
    );
    api.wait_for_dead_letters(WAIT).await;
    assert_eq!(
        slow.hits().len(),
        2,
        "timed out twice: first attempt and one retry"
    );
    assert!(api.dead_letters().await[0].last_error.contains("timed out"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_honoured() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_webhook_retry_delays_secs(&[0.05, 5.0])
        .await;
    // 3 s: longer than the scheduled 0.05 s even as SQS delays it (whole seconds, rounded
    // up to 1), so only a delivery that honours the header waits this long.
    let receiver = Receiver::start(Behaviour::RetryAfterOnce(3)).await;
    register_webhook(
        &api,
        &Keys::test_a(),
        &receiver.url(),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;
    let hits = receiver.wait_for(2, WAIT).await;
    let gap = (hits[1].at - hits[0].at).num_milliseconds();
    assert!(gap >= 2_900, "waited {gap} ms, Retry-After asked for 3 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_webhook_receives_nothing_more() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_webhook_retry_delays_secs(&[1.0; 5])
        .await;
    let receiver = Receiver::start(Behaviour::Always(500)).await;
    let (webhook_id, _) = register_webhook(
        &api,
        &Keys::test_a(),
        &receiver.url(),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;
    receiver.wait_for(1, WAIT).await;
    api.delete(&format!("/webhooks?id={webhook_id}"), &Keys::test_a())
        .await
        .assert_status(200);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(receiver.hits().len(), 1);
    assert!(api.dead_letters().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the stripe and standardwebhooks verifiers (WEBHOOK_VERIFIER_PYTHON): scripts/test.sh runs it"]
async fn published_libraries_verify_both_signatures() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .await;
    let receiver = Receiver::start(Behaviour::FailTimes(1)).await;
    let (_, secret) = register_webhook(
        &api,
        &Keys::test_a(),
        &receiver.url(),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;
    // The first attempt and the retry, each with its own timestamp.
    for hit in receiver.wait_for(2, WAIT).await {
        let (ok, output) = run_verifier(&secret, &hit);
        assert!(ok, "{output}");
        assert!(
            output.contains("stripe: ok") && output.contains("standardwebhooks: ok"),
            "{output}"
        );
    }
    // The verifier is not vacuous: another secret fails both schemes.
    let hit = receiver.hits()[0].clone();
    let (ok, output) = run_verifier(&hosting_domain::webhook::generate_secret(), &hit);
    assert!(!ok);
    assert!(
        !output.contains("stripe: ok") && !output.contains("standardwebhooks: ok"),
        "{output}"
    );
    // And so does a body changed after signing.
    let tampered = Hit {
        body: hit.body.replace("stream.started", "stream.ended"),
        ..hit
    };
    assert!(!run_verifier(&secret, &tampered).0);
}
