//! A big show's opening minute on DynamoDB (docs/lifecycle.md, "Viewer counts"): joins far
//! beyond what one partition key takes, with DynamoDB's per-partition write throughput
//! emulated by the fault proxy at 1/100 of AWS's (10 write units a second per partition key
//! against 1,000; a join's transactional write of its shard costs 2), and its optimistic
//! concurrency on. Spread over their partitions the shards take the surge; under one
//! partition key (the store's test switch) they must not, which shows the spread is what
//! carries it.
//!
//! Run alone (scripts/test.sh): it measures a rate.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{deliver, live_show};
use crate::common::fake_livekit::{FakeLiveKit, participant_event};
use crate::common::*;

/// A partition key's write units a second, scaled down from AWS's 1,000.
const PARTITION_WRITE_UNITS: u64 = 10;
/// Five times what one partition key takes: 10 units a second are 5 joins.
const JOINS_PER_SECOND: u64 = 5 * PARTITION_WRITE_UNITS / 2;
const SECONDS: u64 = 30;
const SENDERS: u64 = 32;

struct Opening {
    sent: u64,
    refused: u64,
    joined: u64,
    elapsed: f64,
    /// The live count 2 s after the last answer (or as soon as it matched the joins).
    count: serde_json::Value,
    throttled: serde_json::Value,
}

/// Sends `JOINS_PER_SECOND` joins for `SECONDS` to a live show whose shards are spread over
/// `partitions` partition keys (the product's when `None`), then reads the count.
async fn opening(partitions: Option<u32>) -> Opening {
    let fake = FakeLiveKit::start().await;
    let mut builder = TestApp::builder();
    if let Some(partitions) = partitions {
        builder = builder.with_viewer_partitions(partitions);
    }
    let api = Arc::new(builder.with_livekit(&fake).await);
    let (id, room) = live_show(&api, 30).await;
    let table = api.table().unwrap().to_owned();
    faults::set(
        &table,
        json!({"conflicts": {"hold_ms": 15}, "partition_write_units": PARTITION_WRITE_UNITS}),
    )
    .await;
    let (next, joined, refused) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let started = Instant::now();
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..SENDERS {
        let (api, room) = (api.clone(), room.clone());
        let (next, joined, refused) = (next.clone(), joined.clone(), refused.clone());
        senders.spawn(async move {
            loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                if k >= JOINS_PER_SECOND * SECONDS {
                    return;
                }
                let due = Duration::from_millis(k * 1000 / JOINS_PER_SECOND);
                tokio::time::sleep_until((started + due).into()).await;
                let event =
                    participant_event("participant_joined", &room, None, &format!("EV_{k}"));
                if deliver(&api, event).await.status.is_success() {
                    joined.fetch_add(1, Ordering::SeqCst);
                } else {
                    refused.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
    }
    while let Some(done) = senders.join_next().await {
        done.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let last_answered = Instant::now();
    let joined = joined.load(Ordering::SeqCst);
    let mut count = json!(null);
    while last_answered.elapsed() < Duration::from_secs(2) {
        count = live_detail(&api, &id).await["viewer_count"].clone();
        if count == joined {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let throttled = faults::stats(&table).await["injected"]["partition_write_units"].clone();
    faults::clear(&table).await;
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    Opening {
        sent: JOINS_PER_SECOND * SECONDS,
        refused: refused.load(Ordering::SeqCst),
        joined,
        elapsed,
        count,
        throttled,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "measures a rate: run alone by scripts/test.sh, on DynamoDB"]
async fn popular_show_dynamodb_only_an_opening_surge_is_taken_by_the_spread_shards() {
    slow_by_design(
        "popular_show_opening_surge",
        "about 70 s: two 30 s surges of joins, shards spread and under one partition key",
    );
    let spread = opening(None).await;
    eprintln!(
        "spread: {} joins sent in {:.1} s, {} answered 2xx, {} refused, count {}, {} writes throttled",
        spread.sent, spread.elapsed, spread.joined, spread.refused, spread.count, spread.throttled
    );
    let one = opening(Some(1)).await;
    eprintln!(
        "one partition key: {} joins sent in {:.1} s, {} answered 2xx, {} refused, count {}, {} writes throttled",
        one.sent, one.elapsed, one.joined, one.refused, one.count, one.throttled
    );
    assert_eq!(spread.refused, 0, "every LiveKit webhook answered 2xx");
    assert_eq!(spread.joined, spread.sent);
    assert_eq!(spread.count, spread.joined, "the count exact within 2 s");
    assert!(
        spread.elapsed < SECONDS as f64 + 3.0,
        "the surge's rate held: {:.1} s",
        spread.elapsed
    );
    let held =
        |o: &Opening| o.refused == 0 && o.count == o.joined && o.elapsed < SECONDS as f64 + 3.0;
    assert!(held(&spread));
    assert!(
        !held(&one),
        "under one partition key the surge must not hold"
    );
}
