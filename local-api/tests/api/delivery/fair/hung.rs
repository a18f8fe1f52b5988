//! A brand whose 25 webhooks all point at a receiver that accepts and never answers, with a
//! backlog of 750 deliveries, holds at most its delivery slots of the shared workers; its
//! waiting deliveries are parked off the shared queue, and another brand's deliveries arrive
//! within seconds of its requests.

use std::time::Duration;

use chrono::Utc;

use super::{assert_within_slots, register_many};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;
use hosting_app::delivery::worker::BRAND_DELIVERY_SLOTS;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_brands_750_hung_deliveries_never_delay_another_brands() {
    // The default attempt timeout (10 s): a tarpit holds each attempt that long.
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let tarpit = Receiver::start(Behaviour::Slow(Duration::from_secs(600))).await;
    let other = Receiver::start(Behaviour::Ok).await;
    register_many(
        &api,
        &Keys::test_a(),
        &tarpit,
        25,
        &["stream.started", "stream.ended"],
    )
    .await;
    register_many(&api, &Keys::test_b(), &other, 1, &["stream.started"]).await;

    // The backlog: 15 test streams started and ended, 2 events for 25 webhooks each.
    for _ in 0..15 {
        let id = api.start_test_stream(&Keys::test_a()).await;
        api.delete(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .assert_status(200);
    }
    // The tarpit holds the first attempts.
    tarpit.wait_for(1, Duration::from_secs(10)).await;

    // Meanwhile another brand starts streams: each start is delivered within seconds.
    let mut latencies = Vec::new();
    for round in 0..5 {
        let sent = Utc::now();
        let id = api.start_test_stream(&Keys::test_b()).await;
        let hit = other.wait_for(round + 1, Duration::from_secs(30)).await[round].clone();
        latencies.push((hit.at - sent).to_std().unwrap_or_default());
        api.delete(&format!("/streams/{id}"), &Keys::test_b())
            .await
            .assert_status(200);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!(
        "fair delivery: other brand's latencies {latencies:?}; tarpit attempts {}",
        tarpit.hits().len()
    );
    // Within 3 s of the request, on both backends: a hung attempt holds a worker for 10 s.
    assert!(
        latencies
            .iter()
            .all(|latency| *latency < Duration::from_secs(3)),
        "another brand's deliveries took {latencies:?}"
    );
    // The hung brand never had more attempts open at once than its slots.
    assert!(tarpit.hits().len() >= BRAND_DELIVERY_SLOTS as usize);
    assert_within_slots(&tarpit, Duration::from_secs(10));
}
