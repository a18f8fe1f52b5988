//! Window edges to the second, and streams ending after creation adding their minutes.

use chrono::Duration;
use serde_json::{Value, json};

use super::{edge_id, ended_at, ids, totals};
use crate::common::*;

/// Windows are exact to the second wherever `since` falls: in a minute (streams of the partial
/// minute), on a minute, an hour or a day boundary. Each stream has its own power of two as
/// its viewer count, so the total names exactly the streams counted.
#[tokio::test]
async fn window_edges_to_the_second() {
    let api = TestApp::new().await;
    let now = api.now(); // hh:mm:30
    let day = Duration::hours(24);
    let ages = [
        Duration::minutes(30),                      // 1
        day,                                        // 2: exactly at since (24h)
        day + Duration::seconds(1),                 // 4: a second before
        day - Duration::seconds(29),                // 8: the partial minute's last second
        day - Duration::seconds(30),                // 16: the next whole minute
        day - Duration::hours(1),                   // 32: a whole hour of since's day
        Duration::days(7),                          // 64: exactly at since (7d)
        Duration::days(7) + Duration::seconds(1),   // 128
        Duration::days(30),                         // 256: exactly at since (30d)
        Duration::days(30) + Duration::seconds(1),  // 512
        Duration::days(30) - Duration::minutes(1),  // 1024: a whole minute of since's hour
        Duration::days(30) - Duration::hours(2),    // 2048: a whole hour of since's day
        Duration::days(29),                         // 4096: a whole day
        Duration::days(30) + Duration::seconds(30), // 8192: the minute before since's
    ];
    let platforms = ["kick", "tiktok", "youtube"];
    let streams: Vec<Value> = ages
        .iter()
        .enumerate()
        .map(|(i, age)| {
            ended_at(
                &edge_id(i as u32),
                now - *age,
                1 << i,
                platforms[i % platforms.len()],
            )
        })
        .collect();
    api.seed(json!({"streams": streams})).await;
    let viewers = |bits: &[u32]| bits.iter().map(|b| 1u64 << b).sum::<u64>();
    let counted = |bits: &[u32]| (bits.len() as u64, viewers(bits), bits.len() as u64);

    let day_set = [0, 1, 3, 4, 5];
    let week_set = [0, 1, 2, 3, 4, 5, 6];
    let month_set = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12];
    assert_eq!(totals(&api, "24h").await, counted(&day_set));
    assert_eq!(totals(&api, "7d").await, counted(&week_set));
    assert_eq!(totals(&api, "30d").await, counted(&month_set));
    let b = api.get("/analytics?period=30d", &Keys::test_b()).await.body;
    assert_eq!(
        b["by_platform"],
        json!({"kick": 4, "tiktok": 4, "youtube": 4})
    );
    let mut by_age: Vec<(Duration, String)> = month_set
        .iter()
        .map(|i| (ages[*i as usize], edge_id(*i)))
        .collect();
    by_age.sort();
    assert_eq!(
        ids(&b),
        by_age.iter().map(|(_, id)| id.as_str()).collect::<Vec<_>>()
    );

    // One stream's figures follow the same edge.
    for (i, expected) in [(1u32, 1), (2, 0)] {
        let b = api
            .get(
                &format!("/analytics?period=24h&stream_id={}", edge_id(i)),
                &Keys::test_b(),
            )
            .await
            .body;
        assert_eq!(b["total_streams"], expected, "stream {i}");
    }

    // A second later, the streams that were exactly at `since` are out.
    api.advance(Duration::seconds(1));
    assert_eq!(totals(&api, "24h").await, counted(&[0, 3, 4, 5]));
    assert_eq!(totals(&api, "7d").await, counted(&[0, 1, 2, 3, 4, 5]));
    assert_eq!(
        totals(&api, "30d").await,
        counted(&[0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12])
    );
    // 29 seconds more: `since` is on a whole minute, and the stream at it still counts.
    api.advance(Duration::seconds(29));
    assert_eq!(totals(&api, "24h").await, counted(&[0, 4, 5]));
    // Past the whole minute: it is out, the next hour's stream in.
    api.advance(Duration::seconds(1));
    assert_eq!(totals(&api, "24h").await, counted(&[0, 5]));
    // An hour later the 24h window holds only the recent stream.
    api.advance(Duration::hours(1));
    assert_eq!(totals(&api, "24h").await, counted(&[0]));
}

/// Streams count from their start, and their minutes and final viewer counts from when they
/// finish, however they finish; a window moving past them drops all of it.
#[tokio::test]
async fn streams_ending_after_creation_add_their_minutes() {
    let api = TestApp::new().await;
    let a = api
        .start(&Keys::test_a(), json!({"duration_minutes": 30}))
        .await;
    a.assert_status(201);
    api.advance(Duration::minutes(10));
    let b = api.start_test_stream(&Keys::test_a()).await;
    // Launch failure (no room provider for live keys): an error stream, counted, no minutes.
    let failed = api
        .start(&Keys::live_a(), json!({"platform": "kick"}))
        .await;
    failed.assert_error(502, "launch_failed");
    let body = |b: Value| {
        (
            b["total_streams"].as_u64().unwrap(),
            b["live_now"].as_u64().unwrap(),
            b["total_minutes"].as_u64().unwrap(),
        )
    };
    let get = |period: &'static str| {
        let api = &api;
        async move {
            api.get(&format!("/analytics?period={period}"), &Keys::test_a())
                .await
                .body
        }
    };
    let now = get("24h").await;
    assert_eq!(body(now.clone()), (3, 2, 0));
    assert_eq!(now["by_platform"], json!({"tiktok": 2, "kick": 1}));

    // A's duration ends at 30 minutes.
    api.advance_and_fire(Duration::minutes(25)).await;
    assert_eq!(body(get("24h").await), (3, 1, 30));
    // B ended by DELETE after 25 minutes.
    api.delete(&format!("/streams/{b}"), &Keys::test_a())
        .await
        .assert_status(200);
    assert_eq!(body(get("24h").await), (3, 0, 55));
    assert_eq!(body(get("30d").await), (3, 0, 55));
    // A day after A's start, A is out of the 24h window, B and the failed start in.
    api.advance(Duration::hours(24) - Duration::minutes(35) + Duration::seconds(1));
    assert_eq!(body(get("24h").await), (2, 0, 25));
    assert_eq!(body(get("7d").await), (3, 0, 55));
}
