//! One brand never hurts another (docs/webhooks.md, "Fair delivery"): a brand whose 25 webhooks all
//! point at a receiver that accepts and never answers, under a burst of events, holds at most its
//! delivery slots of the shared workers, and another brand's deliveries still arrive within
//! seconds. Real HTTP to real receivers on loopback, through the background loops the local server
//! runs, on both backends (on DynamoDB and SQS the deferrals and slots go through moto).

use std::time::Duration;

use chrono::{TimeDelta, Utc};
use hosting_app::delivery::worker::BRAND_DELIVERY_SLOTS;
use serde_json::json;

use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_brands_tarpit_receivers_never_delay_another_brands_deliveries() {
    // The default attempt timeout (10 s): a tarpit holds each attempt that long.
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let tarpit = Receiver::start(Behaviour::Slow(Duration::from_secs(600))).await;
    let other = Receiver::start(Behaviour::Ok).await;
    for _ in 0..25 {
        api.post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": tarpit.url(), "events": ["stream.started", "stream.ended"]}),
        )
        .await
        .assert_status(201);
    }
    api.post(
        "/webhooks",
        &Keys::test_b(),
        json!({"url": other.url(), "events": ["stream.started"]}),
    )
    .await
    .assert_status(201);

    // The burst: test streams started and ended, 2 events for 25 webhooks each. Three streams
    // (150 deliveries) on the embedded backends; one (50) on moto, whose ~100 requests a
    // second the deferrals of a larger burst would take, slowing every request (AWS has no
    // such ceiling).
    let bursts = if api.dynamo().is_some() { 1 } else { 3 };
    let mut streams = Vec::new();
    for _ in 0..bursts {
        streams.push(api.start_test_stream(&Keys::test_a()).await);
    }
    for id in &streams {
        api.delete(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .assert_status(200);
    }
    // The tarpit holds the first attempts.
    tarpit.wait_for(1, Duration::from_secs(10)).await;

    // Meanwhile another brand starts streams: each start is delivered within seconds.
    let mut latencies = Vec::new();
    for round in 0..4 {
        let sent = Utc::now();
        let id = api.start_test_stream(&Keys::test_b()).await;
        let hit = other.wait_for(round + 1, Duration::from_secs(30)).await[round].clone();
        latencies.push((hit.at - sent).to_std().unwrap_or_default());
        api.delete(&format!("/streams/{id}"), &Keys::test_b())
            .await
            .assert_status(200);
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }
    // Within 3 s: a hung attempt holds a worker for 10 s. On moto every request shares the
    // emulator's capacity with the burst's deferrals (each a read, a send and a
    // delete), which alone adds a second or two in waves: there the bound is 6 s, still short
    // of one hung attempt (without the slots it takes longer: BENCHMARKS.md, "Fair delivery").
    let bound = Duration::from_secs(if api.dynamo().is_some() { 6 } else { 3 });
    assert!(
        latencies.iter().all(|latency| *latency < bound),
        "another brand's deliveries took {latencies:?}"
    );

    // The tarpit brand never had more attempts open at once than its slots: no attempt began
    // while as many others, begun under a timeout (10 s) earlier, could still be open.
    let starts: Vec<_> = tarpit.hits().into_iter().map(|hit| hit.at).collect();
    assert!(starts.len() >= BRAND_DELIVERY_SLOTS as usize, "{starts:?}");
    for at in &starts {
        let open = starts
            .iter()
            .filter(|other| **other <= *at && *at - **other < TimeDelta::milliseconds(9_500))
            .count();
        assert!(
            open <= BRAND_DELIVERY_SLOTS as usize,
            "{open} attempts open at {at}: {starts:?}"
        );
    }
    eprintln!(
        "fair delivery: other brand's latencies {latencies:?}; tarpit attempts {}",
        starts.len()
    );
}
