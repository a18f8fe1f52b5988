//! A healthy brand's deliveries arrive at its receivers' speed: those beyond its slots wait
//! parked and are handed over as each slot frees, never after a timer.

use std::time::Duration;

use chrono::Utc;
use serde_json::json;

use super::register_many;
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;
use crate::webhooks::seeded_attempt;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_event_reaches_25_healthy_webhooks_of_one_brand_at_once() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    register_many(&api, &Keys::test_a(), &receiver, 25, &["stream.started"]).await;

    let sent = Utc::now();
    api.start_test_stream(&Keys::test_a()).await;
    let hits = receiver.wait_for(25, Duration::from_secs(30)).await;
    let last = hits.iter().map(|hit| hit.at).max().unwrap();
    let took = (last - sent).to_std().unwrap_or_default();
    eprintln!("fair delivery: 25 healthy webhooks, the last delivery {took:?} after the start");
    // The relay's poll (250 ms) on DynamoDB, and moto's pace for each hand-over's requests.
    let bound = Duration::from_secs(if api.dynamo().is_some() { 3 } else { 1 });
    assert!(took < bound, "the 25 deliveries took {took:?}");
    // Each webhook once: parking sent none twice.
    let mut targets: Vec<String> = hits
        .iter()
        .map(|hit| hit.header("webhook-id").to_owned())
        .collect();
    targets.sort();
    targets.dedup();
    assert_eq!(targets.len(), 1, "one event");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.hits().len(), 25, "each delivery once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_failed_events_redelivered_to_a_healthy_receiver_arrive_at_once() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": receiver.url(), "events": ["stream.started"]}),
        )
        .await;
    r.assert_status(201);
    let id = r.body["webhook_id"].as_str().unwrap().to_owned();
    // 40 events whose delivery ended failed.
    let store = api.runtime.app.store.clone();
    let start = api.now() - chrono::Duration::hours(1);
    for n in 0..40 {
        let (attempt, event) = seeded_attempt(&id, n * 3, start, true);
        store.record_attempt(&attempt, &event).await.unwrap();
    }

    let sent = Utc::now();
    let since = (start - chrono::Duration::seconds(1)).to_rfc3339();
    let r = api
        .post(
            &format!("/webhooks/{id}/redeliver"),
            &Keys::test_a(),
            json!({ "since": since }),
        )
        .await;
    assert_eq!(r.body["queued"], 40, "{}", r.body);
    let hits = receiver.wait_for(40, Duration::from_secs(60)).await;
    let last = hits.iter().map(|hit| hit.at).max().unwrap();
    let took = (last - sent).to_std().unwrap_or_default();
    eprintln!("fair delivery: 40 redeliveries, the last {took:?} after the request");
    let bound = Duration::from_secs(if api.dynamo().is_some() { 6 } else { 2 });
    assert!(took < bound, "the 40 redeliveries took {took:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut events: Vec<String> = receiver
        .hits()
        .iter()
        .map(|hit| hit.header("webhook-id").to_owned())
        .collect();
    events.sort();
    events.dedup();
    assert_eq!((receiver.hits().len(), events.len()), (40, 40), "each once");
}
