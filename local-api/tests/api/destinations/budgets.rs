//! The budgets of destinations (BENCHMARKS.md, "Destinations"), on both backends: the agent's
//! `participant_joined` makes no Egress call whatever the Egress API does, so it costs what it
//! did without destinations; and a start with five destinations makes the LiveKit calls a start
//! without them makes. The figures are printed (`-- --nocapture`), not asserted: they are
//! benchmarks, and this machine is shared.

use std::time::{Duration, Instant};

use super::*;
use crate::common::fake_livekit::{CREATE_ROOM, START_EGRESS};

const SHOWS: usize = 15;

fn five() -> Value {
    Value::Array(
        (0..5)
            .map(|i| destination("youtube", YOUTUBE_INGEST, &format!("bench-key-abcdef-{i}")))
            .collect(),
    )
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[tokio::test]
async fn the_join_makes_no_egress_call_whatever_the_egress_api_does() {
    slow_by_design(
        "the_join_makes_no_egress_call",
        "about 2 min on DynamoDB: 15 shows started in each of its cases, their joins timed",
    );
    let mut report = String::from("| case | join p50 | start p50 |\n|---|---|---|\n");
    for (case, destinations, egress) in [
        ("no destinations", json!([]), "healthy"),
        ("5 destinations, Egress healthy", five(), "healthy"),
        ("5 destinations, Egress hanging", five(), "hanging"),
        ("5 destinations, Egress failing", five(), "failing"),
    ] {
        let (api, fake) = app_with_livekit().await;
        match egress {
            "hanging" => fake.hang(START_EGRESS),
            "failing" => fake.fail(START_EGRESS),
            _ => {}
        }
        let (mut joins, mut starts) = (Vec::new(), Vec::new());
        for n in 0..SHOWS {
            let calls = fake.calls().len();
            let started = Instant::now();
            let (id, room) = start_with(&api, destinations.clone()).await;
            starts.push(started.elapsed());
            let made: Vec<String> = fake.methods()[calls..].to_vec();
            assert_eq!(made, [CREATE_ROOM], "{case}: the start's calls");
            let join = signed_webhook(&crate::common::fake_livekit::agent_joined(
                &room,
                &format!("EV_join_{n}"),
            ));
            let joined = Instant::now();
            api.post_livekit(&join).await.assert_status(200);
            joins.push(joined.elapsed());
            assert_eq!(
                fake.count(START_EGRESS),
                0,
                "{case}: no egress call in the join"
            );
            assert_eq!(live_detail(&api, &id).await["status"], "live");
            api.delete(&format!("/streams/{id}"), &Keys::live_a())
                .await
                .assert_status(200);
        }
        report.push_str(&format!(
            "| {case} | {:.2} ms | {:.2} ms |\n",
            median(joins).as_secs_f64() * 1e3,
            median(starts).as_secs_f64() * 1e3
        ));
    }
    println!("{report}");
}

/// Live streams, each pushing to one destination, for the read-back's measure: 30 in the suite,
/// `BENCH_EGRESS_STREAMS` when measured (BENCHMARKS.md, "Egress read-back").
fn streams_measured() -> usize {
    std::env::var("BENCH_EGRESS_STREAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30)
}

#[tokio::test]
async fn a_sweep_makes_one_listegress_call_whatever_the_number_of_live_streams() {
    slow_by_design(
        "a_sweep_makes_one_listegress_call",
        "about 70 s on DynamoDB: 500 live streams with an egress made and swept",
    );
    let mut report = String::from(
        "| live streams with an egress | ListEgress calls per sweep | egresses read back | sweep took |\n|---|---|---|---|\n",
    );
    for streams in [1, streams_measured()] {
        let (api, fake) = app_with_livekit().await;
        live_streams_owing_an_egress(&api, streams).await;
        api.runtime.fire_due_timers().await;
        assert_eq!(fake.egresses().len(), streams);
        let before = fake.count(crate::common::fake_livekit::LIST_EGRESS);
        api.advance(chrono::Duration::seconds(61));
        let started = Instant::now();
        let read = hosting_app::service::timers::sweep(&api.runtime.app)
            .await
            .unwrap();
        let took = started.elapsed();
        let calls = fake.count(crate::common::fake_livekit::LIST_EGRESS) - before;
        assert_eq!(calls, 1, "{streams} streams");
        assert_eq!(read, streams, "every stream read back");
        report.push_str(&format!("| {streams} | {calls} | {read} | {took:.1?} |\n"));
    }
    println!("{report}");
}

/// `streams` live streams with a destination each, across as many brands as their concurrency
/// takes (three each), their egress starts owed and not yet made; their ids.
async fn live_streams_owing_an_egress(api: &TestApp, streams: usize) -> Vec<String> {
    let brands = streams.div_ceil(3);
    let keys: Vec<String> = (0..brands)
        .map(|n| crate::common::key("live", &format!("egress{n}")))
        .collect();
    let seed = json!({
        "brands": (0..brands).map(|n| json!({"id": format!("brand_egress_{n}"),
            "name": "b", "plan": "growth", "vertical": "live-commerce"})).collect::<Vec<_>>(),
        "api_keys": keys.iter().enumerate().map(|(n, key)| json!({"key": key,
            "brand_id": format!("brand_egress_{n}"), "scopes": ["streams:read", "streams:write"],
            "revoked": false, "expires_at": null})).collect::<Vec<_>>(),
    });
    hosting_app::seed::Seed::from_json(&seed.to_string())
        .unwrap()
        .load(&*api.runtime.app.store)
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..streams {
        let body = json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "tiktok",
            "duration_minutes": 30, "destinations": [destination("youtube", YOUTUBE_INGEST,
            &format!("yt-key-SECRET-{n:04}"))]});
        let r = api.post("/streams", &keys[n / 3], body).await;
        r.assert_status(201);
        let room = r.body["room_name"].as_str().unwrap().to_owned();
        agent_joins(api, &room, &format!("EV_join_{n}")).await;
        ids.push(r.body["stream_id"].as_str().unwrap().to_owned());
    }
    ids
}

/// The timers function's trigger on the table's stream hands it up to 10 stream items that
/// owe an egress start (template.yaml, `BatchSize: 10`); with LiveKit taking nearly its whole
/// call timeout to answer each, the batch still ends well inside the function's 60 s.
#[tokio::test]
async fn a_batch_of_ten_owed_starts_with_a_slow_livekit_ends_inside_the_timeout() {
    slow_by_design(
        "a_batch_of_ten_owed_starts",
        "about 10 s: LiveKit answers each start after 9 s",
    );
    let (api, fake) = app_with_livekit().await;
    let ids = live_streams_owing_an_egress(&api, 10).await;
    let due = hosting_domain::clock::format_timestamp(api.now());
    let batch = json!({"Records": ids.iter().map(|id| json!({"dynamodb": {"NewImage": {
        "id": {"S": id}, "egress_due": {"S": due}}}})).collect::<Vec<_>>()});
    let invocation: timers::Invocation = serde_json::from_value(batch).unwrap();
    assert!(matches!(invocation, timers::Invocation::EgressOwed(_)));
    fake.delay(START_EGRESS, Duration::from_secs(9));
    let started = Instant::now();
    let fired = timers::handle(&api.runtime.app, invocation).await.unwrap();
    let took = started.elapsed();
    println!("10 owed starts, LiveKit answering in 9 s: {took:?}");
    assert_eq!(fired, timers::Fired { changed: 10 });
    assert_eq!(fake.count(START_EGRESS), 10);
    // One after another they would take 90 s; the function's timeout is 60 s.
    assert!(took < Duration::from_secs(30), "{took:?}");
}
