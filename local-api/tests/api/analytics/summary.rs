//! The periods, averages, one stream, large windows and API-started test streams.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use super::{edge_id, ended_at, ids, totals};
use crate::common::*;

struct Fixture {
    id: &'static str,
    brand: &'static str,
    status: &'static str,
    platform: Option<&'static str>,
    age: Duration,
    viewers: u64,
    /// (start after creation, run length) in milliseconds.
    run: Option<(i64, Option<i64>)>,
}

fn stream_json(now: DateTime<Utc>, f: &Fixture) -> Value {
    let created = now - f.age;
    let started = f
        .run
        .map(|(after, _)| created + Duration::milliseconds(after));
    let ended = match (f.run, f.status) {
        (Some((_, Some(len))), _) => started.map(|s| s + Duration::milliseconds(len)),
        (None, "error") => Some(created + Duration::minutes(1)),
        _ => None,
    };
    json!({
        "id": f.id, "brand_id": f.brand, "status": f.status, "platform": f.platform,
        "vertical": "live-commerce", "creator_id": CREATOR_AVA, "product_name": "P",
        "source": if f.platform.is_none() { "dashboard" } else { "api" },
        "room_name": format!("room-{}", f.id), "viewer_count": f.viewers, "test": false,
        "created_at": created.to_rfc3339(),
        "started_at": started.map(|s| s.to_rfc3339()),
        "ended_at": ended.map(|e| e.to_rfc3339()),
    })
}

const S1: &str = "a0000000-0000-4000-8000-000000000001";

const S2: &str = "a0000000-0000-4000-8000-000000000002";

const S3: &str = "a0000000-0000-4000-8000-000000000003";

const S4: &str = "a0000000-0000-4000-8000-000000000004";

const S5: &str = "a0000000-0000-4000-8000-000000000005";

const S6: &str = "a0000000-0000-4000-8000-000000000006";

const S7: &str = "a0000000-0000-4000-8000-000000000007";

const S8: &str = "a0000000-0000-4000-8000-000000000008";

const S9: &str = "a0000000-0000-4000-8000-000000000009";

const S10: &str = "a0000000-0000-4000-8000-000000000010";

const S11: &str = "a0000000-0000-4000-8000-000000000011";

const OTHER: &str = "b0000000-0000-4000-8000-000000000001";

async fn seeded() -> TestApp {
    let api = TestApp::new().await;
    let now = api.now();
    let f = |id, status, platform, age: Duration, viewers, run| Fixture {
        id,
        brand: "brand_a",
        status,
        platform,
        age,
        viewers,
        run,
    };
    let fixtures = [
        // 24h window
        f(
            S1,
            "ended",
            Some("tiktok"),
            Duration::hours(1),
            10,
            Some((0, Some(630_000))),
        ),
        f(
            S2,
            "live",
            Some("youtube"),
            Duration::hours(2),
            5,
            Some((30_000, None)),
        ),
        f(S3, "error", None, Duration::hours(3), 0, None),
        f(
            S4,
            "ended",
            Some("tiktok"),
            Duration::hours(23) + Duration::minutes(59),
            7,
            Some((1_000, Some(59_999))),
        ),
        f(
            S5,
            "ended",
            Some("kick"),
            Duration::hours(24),
            1,
            Some((0, Some(90_000))),
        ),
        f(
            S11,
            "preparing",
            Some("instagram"),
            Duration::minutes(10),
            0,
            None,
        ),
        // just outside 24h, inside 7d
        f(
            S6,
            "ended",
            Some("twitch"),
            Duration::hours(24) + Duration::milliseconds(1),
            100,
            Some((0, Some(600_000))),
        ),
        f(
            S7,
            "ended",
            Some("twitch"),
            Duration::days(7),
            3,
            Some((0, Some(60_000))),
        ),
        // just outside 7d, inside 30d
        f(
            S8,
            "ended",
            Some("facebook"),
            Duration::days(7) + Duration::seconds(1),
            2,
            Some((0, Some(120_000))),
        ),
        f(
            S9,
            "ended",
            None,
            Duration::days(30),
            4,
            Some((0, Some(59_000))),
        ),
        // outside every window
        f(
            S10,
            "ended",
            Some("kick"),
            Duration::days(30) + Duration::seconds(1),
            1000,
            Some((0, Some(3_600_000))),
        ),
    ];
    let mut streams: Vec<Value> = fixtures.iter().map(|f| stream_json(now, f)).collect();
    streams.push(stream_json(
        now,
        &Fixture {
            id: OTHER,
            brand: "brand_b",
            status: "live",
            platform: Some("tiktok"),
            age: Duration::hours(1),
            viewers: 50,
            run: Some((0, None)),
        },
    ));
    api.seed(json!({"streams": streams})).await;
    api
}

#[tokio::test]
async fn last_24_hours() {
    let api = seeded().await;
    let r = api.get("/analytics?period=24h", &Keys::test_a()).await;
    r.assert_status(200);
    let b = &r.body;
    let fields = field_names(b);
    assert_eq!(
        fields,
        [
            "avg_viewers_per_stream",
            "brand_id",
            "by_platform",
            "live_now",
            "period",
            "streams",
            "total_minutes",
            "total_streams",
            "total_viewers"
        ]
    );
    assert_eq!(b["period"], "24h");
    assert_eq!(b["brand_id"], "brand_a");
    assert_eq!(b["total_streams"], 6);
    assert_eq!(b["total_viewers"], 23);
    // 630 s + 59.999 s + 90 s = 779.999 s: 12 whole minutes.
    assert_eq!(b["total_minutes"], 12);
    assert_eq!(b["live_now"], 1);
    assert_eq!(b["avg_viewers_per_stream"], 3.83); // 23 / 6
    assert_eq!(
        b["by_platform"],
        json!({"tiktok": 2, "youtube": 1, "unknown": 1, "kick": 1, "instagram": 1})
    );
    assert_eq!(ids(b), [S11, S1, S2, S3, S4, S5]);
    let item = &b["streams"][3];
    let fields = field_names(item);
    assert_eq!(
        fields,
        [
            "ended_at",
            "id",
            "platform",
            "started_at",
            "status",
            "vertical",
            "viewer_count"
        ]
    );
    assert_eq!(item["platform"], "unknown");
    assert_eq!(item["status"], "error");
    assert_eq!(item["started_at"], Value::Null);
    assert!(item["ended_at"].is_string());
}

#[tokio::test]
async fn seven_days_is_the_default() {
    let api = seeded().await;
    for path in ["/analytics", "/analytics?period=7d"] {
        let b = api.get(path, &Keys::test_a()).await.body;
        assert_eq!(b["period"], "7d");
        assert_eq!(b["total_streams"], 8);
        assert_eq!(b["total_viewers"], 126);
        // 779.999 + 600 + 60 = 1439.999 s: 23 minutes.
        assert_eq!(b["total_minutes"], 23);
        assert_eq!(b["avg_viewers_per_stream"], 15.75);
        assert_eq!(b["by_platform"]["twitch"], 2);
        assert_eq!(ids(&b), [S11, S1, S2, S3, S4, S5, S6, S7]);
    }
}

#[tokio::test]
async fn thirty_days() {
    let api = seeded().await;
    let b = api.get("/analytics?period=30d", &Keys::test_a()).await.body;
    assert_eq!(b["total_streams"], 10);
    assert_eq!(b["total_viewers"], 132);
    // 1439.999 + 120 + 59 = 1618.999 s: 26 minutes.
    assert_eq!(b["total_minutes"], 26);
    assert_eq!(b["avg_viewers_per_stream"], 13.2);
    assert_eq!(b["by_platform"]["unknown"], 2);
    assert_eq!(b["by_platform"]["facebook"], 1);
    assert!(
        b["by_platform"].get("kick").is_some_and(|k| k == 1),
        "S10 is outside"
    );
    assert!(!ids(&b).contains(&S10));
}

#[tokio::test]
async fn invalid_periods() {
    let api = seeded().await;
    for period in ["1d", "", "7D", "24H", "30", "week", "7d,24h"] {
        let r = api
            .get(&format!("/analytics?period={period}"), &Keys::test_a())
            .await;
        r.assert_error(400, "invalid_fields");
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("period")
        );
    }
    // The message names the periods the check accepts, each of them answered.
    let r = api.get("/analytics?period=1d", &Keys::test_a()).await;
    let message = r.body["error"]["message"].as_str().unwrap();
    assert_eq!(message, "period must be one of 24h, 7d, 30d.");
    for period in ["24h", "7d", "30d"] {
        api.get(&format!("/analytics?period={period}"), &Keys::test_a())
            .await
            .assert_status(200);
    }
}

#[tokio::test]
async fn no_streams_gives_zeros() {
    let api = TestApp::new().await;
    let b = api.get("/analytics", &Keys::test_b()).await.body;
    assert_eq!(b["total_streams"], 0);
    assert_eq!(b["total_viewers"], 0);
    assert_eq!(b["total_minutes"], 0);
    assert_eq!(b["live_now"], 0);
    assert_eq!(b["avg_viewers_per_stream"], 0.0);
    assert_eq!(b["by_platform"], json!({}));
    assert_eq!(b["streams"], json!([]));
    assert_eq!(b["brand_id"], "brand_b");
}

#[tokio::test]
async fn averages_round_to_two_decimals() {
    let api = TestApp::new().await;
    let now = api.now();
    let streams: Vec<Value> = [1u64, 1, 0]
        .iter()
        .enumerate()
        .map(|(i, v)| {
            stream_json(
                now,
                &Fixture {
                    id: [
                        "c0000000-0000-4000-8000-000000000001",
                        "c0000000-0000-4000-8000-000000000002",
                        "c0000000-0000-4000-8000-000000000003",
                    ][i],
                    brand: "brand_b",
                    status: "ended",
                    platform: Some("kick"),
                    age: Duration::hours(1),
                    viewers: *v,
                    run: None,
                },
            )
        })
        .collect();
    api.seed(json!({"streams": streams})).await;
    let b = api.get("/analytics", &Keys::test_b()).await.body;
    assert_eq!(b["avg_viewers_per_stream"], 0.67); // 2 / 3
    assert_eq!(b["total_minutes"], 0, "no started_at: no minutes");
}

#[tokio::test]
async fn restricted_to_one_stream() {
    let api = seeded().await;
    let b = api
        .get(
            &format!("/analytics?period=24h&stream_id={S1}"),
            &Keys::test_a(),
        )
        .await
        .body;
    assert_eq!(b["total_streams"], 1);
    assert_eq!(b["total_viewers"], 10);
    assert_eq!(b["total_minutes"], 10);
    assert_eq!(b["avg_viewers_per_stream"], 10.0);
    assert_eq!(b["by_platform"], json!({"tiktok": 1}));
    assert_eq!(ids(&b), [S1]);
    let live = api
        .get(&format!("/analytics?stream_id={S2}"), &Keys::test_a())
        .await
        .body;
    assert_eq!(live["live_now"], 1);
    assert_eq!(live["total_minutes"], 0);

    // Another brand's, a random one, garbage, and one outside the window: all zeros.
    for id in [
        OTHER,
        "d0000000-0000-4000-8000-000000000000",
        "garbage",
        "",
        S6,
    ] {
        let r = api
            .get(
                &format!("/analytics?period=24h&stream_id={id}"),
                &Keys::test_a(),
            )
            .await;
        r.assert_status(200);
        assert_eq!(r.body["total_streams"], 0, "{id}");
        assert_eq!(r.body["streams"], json!([]));
        assert_eq!(r.body["by_platform"], json!({}));
    }
}

#[tokio::test]
async fn more_than_1000_streams_in_the_window() {
    let api = TestApp::new().await;
    let now = api.now();
    let streams: Vec<Value> = (0..1005u32)
        .map(|i| {
            let id = format!("e0000000-0000-4000-8000-{i:012}");
            let created = now - Duration::seconds(i64::from(i) + 1);
            json!({"id": id, "brand_id": "brand_b", "status": "ended", "platform": "kick",
                   "product_name": "P", "viewer_count": 2, "created_at": created.to_rfc3339(),
                   "started_at": created.to_rfc3339(),
                   "ended_at": (created + Duration::seconds(60)).to_rfc3339()})
        })
        .collect();
    api.seed(json!({"streams": streams})).await;
    let b = api.get("/analytics?period=24h", &Keys::test_b()).await.body;
    assert_eq!(b["total_streams"], 1005);
    assert_eq!(b["total_viewers"], 2010);
    assert_eq!(b["total_minutes"], 1005);
    assert_eq!(b["by_platform"], json!({"kick": 1005}));
    let listed = ids(&b);
    assert_eq!(listed.len(), 1000);
    assert_eq!(listed[0], "e0000000-0000-4000-8000-000000000000");
    assert_eq!(listed[999], "e0000000-0000-4000-8000-000000000999");
}

#[tokio::test]
async fn test_streams_started_through_the_api_count() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    api.advance(Duration::minutes(5));
    let b = api.get("/analytics", &Keys::test_a()).await.body;
    assert_eq!(
        (b["total_streams"].clone(), b["live_now"].clone()),
        (json!(1), json!(1))
    );
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    let b = api.get("/analytics", &Keys::test_a()).await.body;
    assert_eq!(b["live_now"], 0);
    assert_eq!(b["total_minutes"], 5);
}

/// Seeded history counts, whether it is appended after the brand's streams, inserted before
/// them, or replaces some of them (as `admin load-seed` does from another instance).
#[tokio::test]
async fn seeded_history_counts() {
    let api = TestApp::new().await;
    let now = api.now();
    let id = api.start_test_stream(&Keys::test_b()).await;
    api.seed(json!({"streams": [ended_at(&edge_id(1), now + Duration::seconds(1), 10, "kick")]}))
        .await;
    api.advance(Duration::minutes(2));
    assert_eq!(totals(&api, "24h").await, (2, 10, 1));
    // Older history, loaded elsewhere: the brand is numbered again.
    api.seed_elsewhere(json!({"streams": [
        ended_at(&edge_id(2), now - Duration::hours(3), 100, "youtube"),
        ended_at(&edge_id(3), now - Duration::days(3), 1000, "youtube"),
    ]}))
    .await;
    assert_eq!(totals(&api, "24h").await, (3, 110, 2));
    assert_eq!(totals(&api, "7d").await, (4, 1110, 3));
    // A replaced stream counts as it is now, where it is now.
    api.seed_elsewhere(json!({"streams": [
        ended_at(&edge_id(2), now - Duration::days(2), 7, "kick"),
    ]}))
    .await;
    assert_eq!(totals(&api, "24h").await, (2, 10, 1));
    assert_eq!(totals(&api, "7d").await, (4, 1017, 3));
    let b = api.get("/analytics?period=7d", &Keys::test_b()).await.body;
    assert_eq!(
        b["by_platform"],
        json!({"kick": 2, "tiktok": 1, "youtube": 1})
    );
    // The API's stream still ends into the aggregates.
    api.delete(&format!("/streams/{id}"), &Keys::test_b())
        .await
        .assert_status(200);
    assert_eq!(totals(&api, "24h").await, (2, 10, 3));
}
