//! What the host read-backs cost LiveKit (BENCHMARKS.md, "Host read-backs"; docs/livekit.md,
//! "Read-backs"): a sweep reads each due live stream back once, one `ListRooms` and one
//! `ListParticipants`, whatever the number of live streams; and a live stream costs LiveKit
//! those two calls per `HOST_READBACK_INTERVAL_SECS` in the steady state. On both backends.

use std::collections::BTreeMap;
use std::time::Instant;

use chrono::Duration;
use serde_json::json;

use crate::common::fake_livekit::{Agents, FakeLiveKit, LIST_PARTICIPANTS, LIST_ROOMS};
use crate::common::*;
use hosting_app::service::timers::HOST_READBACKS_PER_SWEEP;

/// Live streams for the sweep's measure: 30 in the suite, `BENCH_HOST_STREAMS` when measured.
fn streams_measured() -> usize {
    std::env::var("BENCH_HOST_STREAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30)
}

/// An app whose hosts join by themselves, with `streams` live streams across as many brands as
/// their concurrency takes (three each).
async fn live_streams(streams: usize) -> (TestApp, FakeLiveKit) {
    let fake = FakeLiveKit::start().await;
    fake.agents(Agents::JoinAtOnce);
    let api = TestApp::builder().with_livekit(&fake).await;
    let brands = streams.div_ceil(3);
    let keys: Vec<String> = (0..brands)
        .map(|n| key("live", &format!("readback{n}")))
        .collect();
    let seed = json!({
        "brands": (0..brands).map(|n| json!({"id": format!("brand_readback_{n}"),
            "name": "b", "plan": "growth", "vertical": "live-commerce"})).collect::<Vec<_>>(),
        "api_keys": keys.iter().enumerate().map(|(n, key)| json!({"key": key,
            "brand_id": format!("brand_readback_{n}"), "scopes": ["streams:read", "streams:write"],
            "revoked": false, "expires_at": null})).collect::<Vec<_>>(),
    });
    api.seed(seed).await;
    for n in 0..streams {
        let body = json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "tiktok",
            "duration_minutes": 120});
        api.post("/streams", &keys[n / 3], body)
            .await
            .assert_status(201);
        api.livekit_sends().await;
    }
    (api, fake)
}

async fn sweep(api: &TestApp) -> usize {
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_sweep_reads_each_due_live_stream_back_once_whatever_their_number() {
    slow_by_design(
        "a_sweep_reads_each_due_live_stream_back_once",
        "about 40 s on DynamoDB at 500 live streams",
    );
    let mut report = String::from(
        "| live streams | ListParticipants calls in the sweep | ListRooms calls | streams read back | sweep took |\n|---|---|---|---|---|\n",
    );
    for streams in [1, streams_measured()] {
        let (api, fake) = live_streams(streams).await;
        let before = (fake.count(LIST_PARTICIPANTS), fake.count(LIST_ROOMS));
        api.advance(Duration::seconds(121));
        let started = Instant::now();
        let read = sweep(&api).await;
        let took = started.elapsed();
        let participants = fake.count(LIST_PARTICIPANTS) - before.0;
        let rooms = fake.count(LIST_ROOMS) - before.1;
        // At most HOST_READBACKS_PER_SWEEP; the rest at the next sweep.
        let bounded = streams.min(HOST_READBACKS_PER_SWEEP);
        assert_eq!(participants, bounded, "one per due stream, bounded");
        assert_eq!(rooms, bounded, "one per due stream, bounded");
        assert_eq!(read, bounded, "every stream read back, bounded");
        sweep(&api).await;
        assert_eq!(
            fake.count(LIST_PARTICIPANTS) - before.0,
            streams,
            "the rest at the next sweep, and each once"
        );
        report.push_str(&format!(
            "| {streams} | {participants} | {rooms} | {read} | {took:.1?} |\n"
        ));
    }
    println!("{report}");
}

#[tokio::test]
async fn a_live_stream_costs_livekit_two_calls_per_read_back() {
    let (api, fake) = live_streams(1).await;
    let before: Vec<String> = fake.methods();
    // An hour of the steady state: timers fired as they fall due (every 10 s here) and a
    // sweep a minute (`SWEEP_INTERVAL_SECS`).
    for step in 1..=360 {
        api.advance_and_fire(Duration::seconds(10)).await;
        if step % 6 == 0 {
            sweep(&api).await;
        }
    }
    let mut calls: BTreeMap<String, usize> = BTreeMap::new();
    for method in &fake.methods()[before.len()..] {
        *calls.entry(method.clone()).or_default() += 1;
    }
    println!("LiveKit calls in a live stream's hour: {calls:?}");
    // Every 120 s by the read-back's timer; the sweep finds each one read already.
    let reads = calls.get(LIST_PARTICIPANTS).copied().unwrap_or(0);
    assert_eq!(reads, 30, "{calls:?}");
    assert_eq!(
        calls,
        BTreeMap::from([
            (LIST_PARTICIPANTS.to_owned(), reads),
            (LIST_ROOMS.to_owned(), reads)
        ]),
        "a ListRooms with each ListParticipants, nothing else"
    );
}
