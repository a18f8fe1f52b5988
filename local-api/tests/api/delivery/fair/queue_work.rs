//! The shared queue's work per delivery attempt does not grow with a hung brand's backlog: its
//! waiting deliveries are parked in the store, not cycled through the queue. Counted as the
//! queue requests that carried work (on SQS every request but an idle long poll's answer; on
//! the embedded queue, messages sent) over the attempts the tarpit received, with a backlog of
//! 50 and of 5,000 (BENCHMARKS.md, "Fair delivery").

use std::time::Duration;

use chrono::Utc;
use hosting_app::delivery::parking;
use hosting_app::delivery::worker::BRAND_DELIVERY_SLOTS;
use hosting_domain::EventType;
use hosting_domain::ports::Delivery;
use serde_json::json;

use super::assert_within_slots;
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

const TIMEOUT_SECS: u64 = 1;

/// Queue requests per attempt while a hung brand has `backlog` deliveries parked.
async fn work_per_attempt(backlog: usize) -> f64 {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_webhook_timeout_secs(TIMEOUT_SECS)
        .with_webhook_retry_delays_secs(&[1.0; 20])
        .await;
    let tarpit = Receiver::start(Behaviour::Slow(Duration::from_secs(600))).await;
    let mut webhooks = Vec::new();
    for _ in 0..25 {
        let r = api
            .post(
                "/webhooks",
                &Keys::test_a(),
                json!({"url": tarpit.url(), "events": ["stream.started"]}),
            )
            .await;
        r.assert_status(201);
        webhooks.push(r.body["webhook_id"].as_str().unwrap().parse().unwrap());
    }
    // The backlog, parked as the relay parks a saturated brand's events, and its wake-up due.
    let store = api.runtime.app.store.clone();
    let deliveries: Vec<Delivery> = (0..backlog)
        .map(|n| {
            let event_id = format!("evt_{:032x}", n / 25);
            Delivery {
                body: json!({"id": event_id, "type": "stream.started", "created_at": Utc::now()})
                    .to_string(),
                event_id,
                event_type: EventType::StreamStarted,
                brand_id: "brand_a".into(),
                webhook_id: webhooks[n % 25],
                attempt: 1,
            }
        })
        .collect();
    for chunk in deliveries.chunks(250) {
        store
            .park_deliveries("brand_a", chunk, BRAND_DELIVERY_SLOTS, Utc::now())
            .await
            .unwrap();
    }
    // Its wake-up due now, and the sweep's pass that finds it.
    store.set_parked_wake("brand_a", Utc::now()).await.unwrap();
    parking::sweep(&api.runtime.app).await.unwrap();
    tarpit
        .wait_for(BRAND_DELIVERY_SLOTS as usize, Duration::from_secs(30))
        .await;

    // Past the first attempts, one window of steady state.
    tokio::time::sleep(Duration::from_secs(3)).await;
    api.queue_work();
    let before = tarpit.hits().len();
    // Longer on moto, whose index queries scan the whole table: the local relay's poll of
    // the due index (four passes a second) slows every request there while 5,000 items are
    // parked (not on AWS, where a query reads only its range).
    let window = if api.dynamo().is_some() { 20 } else { 12 };
    tokio::time::sleep(Duration::from_secs(window)).await;
    let work = api.queue_work();
    let attempts = tarpit.hits().len() - before;
    assert!(attempts >= 6, "the slots kept attempting: {attempts}");
    assert_within_slots(&tarpit, Duration::from_secs(TIMEOUT_SECS));
    let per_attempt = work as f64 / attempts as f64;
    eprintln!(
        "fair delivery: backlog {backlog}: {work} queue requests for {attempts} attempts, \
         {per_attempt:.2} per attempt"
    );
    per_attempt
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queue_work_per_attempt_is_flat_from_a_backlog_of_50_to_5000() {
    let small = work_per_attempt(50).await;
    let large = work_per_attempt(5_000).await;
    assert!(
        large <= small * 1.5,
        "per attempt: {small:.2} with 50 parked, {large:.2} with 5,000"
    );
}
