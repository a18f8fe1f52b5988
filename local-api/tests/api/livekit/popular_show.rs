//! A popular show (docs/lifecycle.md, "Viewer counts"): viewers join and leave many times a
//! second from many senders, each waiting for its answer as LiveKit's notifier does, while
//! the stream must stay exact and end at once when asked.
//!
//! On DynamoDB the fault proxy emulates DynamoDB's optimistic concurrency for the test's table
//! (a transaction holds its items about as long as DynamoDB's do, and one that overlaps it on
//! an item is cancelled with `TransactionConflict`). moto serializes DynamoDB requests, so
//! the rate here is what it can carry; the figures for AWS are in
//! BENCHMARKS.md, "A popular show".
//!
//! Run alone (scripts/test.sh): it measures a rate, which other tests sharing the machine's
//! two cores and moto would distort.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{deliver, live_show};
use crate::common::backend::is_dynamodb;
use crate::common::fake_livekit::{FakeLiveKit, participant_event};
use crate::common::*;

const EVENTS_PER_SECOND: u64 = 20;
const SECONDS: u64 = 60;
const SENDERS: usize = 32;
/// How long a DynamoDB transaction holds its items in the emulation.
const TRANSACTION_HOLD_MS: u64 = 15;

/// What the senders did.
#[derive(Default)]
struct Churn {
    joined: AtomicU64,
    left: AtomicU64,
    refused: AtomicU64,
    /// Viewers whose join was answered and who have not left: only they leave, so a leave
    /// never comes before its join.
    present: Mutex<Vec<u64>>,
    next_viewer: AtomicU64,
    next_event: AtomicUsize,
}

impl Churn {
    /// One event: a leave of a present viewer two times in five, else a new viewer's join.
    async fn send_one(&self, api: &TestApp, room: &str, k: usize) {
        let leaving = if k % 5 == 1 || k % 5 == 3 {
            let mut present = self.present.lock().unwrap();
            let count = present.len();
            (count > 0).then(|| present.swap_remove(k % count))
        } else {
            None
        };
        let (event, viewer) = match leaving {
            Some(viewer) => ("participant_left", viewer),
            None => (
                "participant_joined",
                self.next_viewer.fetch_add(1, Ordering::SeqCst),
            ),
        };
        let id = format!("EV_{event}_{viewer}");
        let response = deliver(api, participant_event(event, room, None, &id)).await;
        if !response.status.is_success() {
            self.refused.fetch_add(1, Ordering::SeqCst);
            eprintln!("{event} of viewer {viewer}: {}", response.status);
            // The viewer is where it was.
            if leaving.is_some() {
                self.present.lock().unwrap().push(viewer);
            }
            return;
        }
        match leaving {
            Some(_) => self.left.fetch_add(1, Ordering::SeqCst),
            None => {
                self.present.lock().unwrap().push(viewer);
                self.joined.fetch_add(1, Ordering::SeqCst)
            }
        };
    }

    /// Sends events at `EVENTS_PER_SECOND` from `SENDERS` senders until `until`, each sender
    /// taking the next event once its time has come and it has its previous answer.
    async fn run(self: &Arc<Self>, api: &Arc<TestApp>, room: &str, until: Duration) -> usize {
        let started = Instant::now();
        let mut senders = tokio::task::JoinSet::new();
        for _ in 0..SENDERS {
            let (churn, api, room) = (self.clone(), api.clone(), room.to_owned());
            senders.spawn(async move {
                let mut sent = 0;
                loop {
                    let k = churn.next_event.fetch_add(1, Ordering::SeqCst);
                    let due = Duration::from_millis(k as u64 * 1000 / EVENTS_PER_SECOND);
                    if due >= until {
                        return sent;
                    }
                    tokio::time::sleep_until((started + due).into()).await;
                    churn.send_one(&api, &room, k).await;
                    sent += 1;
                }
            });
        }
        let mut sent = 0;
        while let Some(done) = senders.join_next().await {
            sent += done.unwrap();
        }
        sent
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "measures a rate: run alone by scripts/test.sh, on both backends"]
async fn popular_show_churn_keeps_the_count_exact_and_never_holds_up_the_end() {
    slow_by_design(
        "popular_show_churn",
        "about 80 s: 60 s of viewer events at 20 a second, then the end",
    );
    let fake = FakeLiveKit::start().await;
    let api = Arc::new(TestApp::builder().with_livekit(&fake).await);
    let (id, room) = live_show(&api, 30).await;
    assert_eq!(live_detail(&api, &id).await["status"], "live");
    if is_dynamodb() {
        faults::set(
            api.table().unwrap(),
            json!({"conflicts": {"hold_ms": TRANSACTION_HOLD_MS}}),
        )
        .await;
    }

    let churn = Arc::new(Churn::default());
    let started = Instant::now();
    let sent = churn.run(&api, &room, Duration::from_secs(SECONDS)).await;
    let elapsed = started.elapsed().as_secs_f64();
    let last_answered = Instant::now();
    let (joined, left) = (
        churn.joined.load(Ordering::SeqCst),
        churn.left.load(Ordering::SeqCst),
    );
    eprintln!(
        "{sent} viewer events in {elapsed:.1} s ({:.1} a second): {joined} joins, {left} leaves, {} refused",
        sent as f64 / elapsed,
        churn.refused.load(Ordering::SeqCst)
    );
    if is_dynamodb() {
        // Counted since the rules were set: the churn's own requests.
        let stats = faults::stats(api.table().unwrap()).await;
        let requests = stats["requests"].as_u64().unwrap();
        let refused: u64 = stats["injected"]
            .as_object()
            .map(|kinds| kinds.values().filter_map(|n| n.as_u64()).sum())
            .unwrap_or(0);
        eprintln!(
            "DynamoDB requests: {requests} ({:.2} a viewer event), conflicts: {}",
            requests as f64 / sent as f64,
            stats["injected"]["conflict"]
        );
        // Its read and its transaction (docs/lifecycle.md, "Viewer counts"), and a transaction
        // again for each the proxy refused.
        assert!(
            requests <= 2 * sent as u64 + refused,
            "{requests} requests for {sent} viewer events, {refused} refused"
        );
    }
    assert_eq!(
        churn.refused.load(Ordering::SeqCst),
        0,
        "every event answered 2xx"
    );
    assert!(
        sent as f64 / elapsed >= 18.0,
        "{sent} events in {elapsed:.1} s: the rate did not hold"
    );
    assert!(
        left > 100 && joined > left,
        "a churn: {joined} joins, {left} leaves"
    );

    // Exact within 2 s of the last event.
    let expected = joined - left;
    let mut count = json!(null);
    while last_answered.elapsed() < Duration::from_secs(2) {
        count = live_detail(&api, &id).await["viewer_count"].clone();
        if count == expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(count, expected, "the count once the churn settled");
    let listed = api.get("/streams?status=live", &Keys::live_a()).await.body;
    assert_eq!(listed["streams"][0]["viewer_count"], expected);

    // The end, while the churn goes on.
    let background = {
        let (churn, api, room) = (churn.clone(), api.clone(), room.clone());
        churn.next_event.store(0, Ordering::SeqCst);
        tokio::spawn(async move { churn.run(&api, &room, Duration::from_secs(5)).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let asked = Instant::now();
    let r = api.delete(&format!("/streams/{id}"), &Keys::live_a()).await;
    let took = asked.elapsed();
    eprintln!("DELETE took {took:?}");
    r.assert_status(200);
    assert!(took < Duration::from_secs(2), "DELETE took {took:?}");
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["status"], "ended");
    assert_eq!(detail["end_reason"], "requested");
    let final_count = detail["viewer_count"].as_u64().unwrap();
    background.await.unwrap();
    if is_dynamodb() {
        let stats = faults::stats(api.table().unwrap()).await;
        eprintln!("fault proxy: {stats}");
        faults::clear(api.table().unwrap()).await;
    }
    // Final: what it was at the end, whatever came after.
    assert_eq!(live_detail(&api, &id).await["viewer_count"], final_count);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
}
