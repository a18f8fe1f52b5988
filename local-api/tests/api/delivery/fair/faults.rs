//! Parking and hand-overs under AWS's faults (throttling, conflicts, lost responses, SQS
//! errors, unprocessed batch items, stale indexes) through the fault proxy: one brand's
//! deliveries to 10 webhooks, more than its slots take at once, all arrive.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use hosting_domain::EventType;
use serde_json::json;

use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

const WEBHOOKS: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_parked_deliveries_all_arrive_under_aws_faults() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_fast_retries()
        .with_var("SWEEP_INTERVAL_SECS", "1")
        .await;
    let table = api.table().expect("DynamoDB").to_owned();
    let receiver = Receiver::start(Behaviour::Ok).await;
    for n in 0..WEBHOOKS {
        api.post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": format!("{}/hook/{n}", receiver.base), "events": ["stream.started", "stream.ended"]}),
        )
        .await
        .assert_status(201);
    }

    faults::set(&table, serde_json::from_str(crate::faults::FAULTS).unwrap()).await;
    // Test streams started and ended; under faults a request may fail, and what it emitted
    // is what must arrive.
    for _ in 0..3 {
        let r = api.start(&Keys::test_a(), json!({})).await;
        if let Some(id) = r.body["stream_id"].as_str() {
            api.delete(&format!("/streams/{id}"), &Keys::test_a()).await;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(90);
    let (wanted, missing) = loop {
        let wanted: BTreeSet<(String, String)> = api
            .emitted_events()
            .await
            .iter()
            .filter(|event| {
                event.brand_id == "brand_a"
                    && matches!(
                        event.event_type,
                        EventType::StreamStarted | EventType::StreamEnded
                    )
            })
            .flat_map(|event| (0..WEBHOOKS).map(|n| (event.id.clone(), format!("/hook/{n}"))))
            .collect();
        let arrived: BTreeSet<(String, String)> = receiver
            .hits()
            .iter()
            .map(|hit| (hit.header("webhook-id").to_owned(), hit.path.clone()))
            .collect();
        let missing: Vec<_> = wanted.difference(&arrived).cloned().collect();
        if missing.is_empty() || Instant::now() > deadline {
            break (wanted, missing);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let stats = faults::stats(&table).await;
    faults::clear(&table).await;
    println!("fair delivery under faults: {stats}");
    assert!(
        wanted.len() >= 2 * WEBHOOKS,
        "a stream started and ended: {wanted:?}"
    );
    assert!(
        faults::injected(&stats) >= 10,
        "faults were injected: {stats}"
    );
    assert_eq!(
        missing,
        Vec::<(String, String)>::new(),
        "deliveries never made"
    );
}
