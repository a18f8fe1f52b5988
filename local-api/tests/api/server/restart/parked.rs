//! Parked deliveries across a killed process (docs/webhooks.md, "Fair delivery"): a process
//! killed while it holds its brand's three delivery slots and the brand's other deliveries are
//! parked. The next process makes every delivery from what the store and the queue hold: the
//! parked ones once each, once the dead holders' slots free themselves and the sweep hands them
//! over; the three whose attempts died, again after the queue's visibility timeout. Each
//! webhook's delivery log shows its one attempt once.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{environment, start_server};
use crate::common::fake_livekit::FakeLiveKit;
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

const WEBHOOKS: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_process_killed_holding_slots_and_parked_deliveries_makes_each_after_a_restart()
 {
    let livekit = FakeLiveKit::start().await;
    let environment = environment(&livekit).await;
    // Each attempt is held 3 s, then answered (the attempt timeout is 10 s).
    let receiver = Receiver::start(Behaviour::Slow(Duration::from_secs(3))).await;
    let server = start_server(&environment);
    let mut webhooks = Vec::new();
    for n in 0..WEBHOOKS {
        let (status, body) = server
            .call(
                "POST",
                "/webhooks",
                &Keys::test_a(),
                Some(json!({"url": format!("{}/hook/{n}", receiver.base), "events": ["stream.started"]})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        webhooks.push(body["webhook_id"].as_str().unwrap().to_owned());
    }
    let (status, body) = server
        .call(
            "POST",
            "/streams",
            &Keys::test_a(),
            Some(json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick"})),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    // Three attempts hold the slots; the other seven are parked. Killed there.
    receiver.wait_for(3, Duration::from_secs(10)).await;
    server.kill();
    let before_kill = receiver.hits().len();
    assert_eq!(before_kill, 3, "the slots held three attempts");

    let server = start_server(&environment);
    // Every webhook receives its delivery: the parked ones once their slots' dead holders' time
    // runs out (15 s), the three killed once the queue shows their messages again (30 s).
    let deadline = Instant::now() + Duration::from_secs(90);
    let per_webhook = loop {
        let mut per_webhook = BTreeMap::<String, usize>::new();
        for hit in receiver.hits() {
            *per_webhook.entry(hit.path.clone()).or_default() += 1;
        }
        let answered_after_kill = receiver.hits().len() - before_kill;
        if per_webhook.len() == WEBHOOKS && answered_after_kill >= WEBHOOKS {
            break per_webhook;
        }
        assert!(
            Instant::now() < deadline,
            "not every delivery made after the restart: {per_webhook:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Time for a duplicate to turn up.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let killed: Vec<_> = receiver.hits()[..before_kill]
        .iter()
        .map(|hit| hit.path.clone())
        .collect();
    for (path, count) in &per_webhook {
        let expected = if killed.contains(path) { 2 } else { 1 };
        assert_eq!(*count, expected, "{path}: {per_webhook:?}");
    }
    assert_eq!(receiver.hits().len(), WEBHOOKS + before_kill);

    // Each webhook's log: its one attempt, once, succeeded.
    for id in &webhooks {
        let (status, log) = server
            .call(
                "GET",
                &format!("/webhooks/{id}/deliveries"),
                &Keys::test_a(),
                None,
            )
            .await;
        assert_eq!(status, 200, "{log}");
        let attempts: Vec<_> = log["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| (entry["attempt"].clone(), entry["status"].clone()))
            .collect();
        assert_eq!(attempts, vec![(json!(1), json!("succeeded"))], "{log}");
    }
}
