//! `GET /analytics` (docs/analytics.md), over seeded history.

mod common;

use chrono::{DateTime, Duration, Utc};
use common::*;
use serde_json::{Value, json};

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

async fn seeded() -> TestApi {
    let api = TestApi::new().await;
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

fn ids(body: &Value) -> Vec<&str> {
    body["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn last_24_hours() {
    let api = seeded().await;
    let r = api.get("/analytics?period=24h", &Keys::test_a()).await;
    r.assert_status(200);
    let b = &r.body;
    let mut fields: Vec<&str> = b.as_object().unwrap().keys().map(String::as_str).collect();
    fields.sort();
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
    let mut fields: Vec<&str> = item
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort();
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
}

#[tokio::test]
async fn no_streams_gives_zeros() {
    let api = TestApi::new().await;
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
    let api = TestApi::new().await;
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
    let api = TestApi::new().await;
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
    let api = TestApi::new().await;
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

/// An ended stream of brand_b created at `created`, run for one minute from its creation.
fn ended_at(id: &str, created: DateTime<Utc>, viewers: u64, platform: &str) -> Value {
    json!({"id": id, "brand_id": "brand_b", "status": "ended", "platform": platform,
           "product_name": "P", "viewer_count": viewers, "created_at": created.to_rfc3339(),
           "started_at": created.to_rfc3339(),
           "ended_at": (created + Duration::seconds(60)).to_rfc3339()})
}

fn edge_id(i: u32) -> String {
    format!("f0000000-0000-4000-8000-{i:012}")
}

/// (total_streams, total_viewers, total_minutes) of brand_b over `period`.
async fn totals(api: &TestApi, period: &str) -> (u64, u64, u64) {
    let b = api
        .get(&format!("/analytics?period={period}"), &Keys::test_b())
        .await
        .body;
    let field = |name: &str| b[name].as_u64().unwrap();
    assert_eq!(
        field("total_streams"),
        b["streams"].as_array().unwrap().len() as u64
    );
    assert_eq!(
        b["by_platform"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>(),
        field("total_streams")
    );
    (
        field("total_streams"),
        field("total_viewers"),
        field("total_minutes"),
    )
}

/// Windows are exact to the second wherever `since` falls: in a minute (streams of the partial
/// minute), on a minute, an hour or a day boundary. Each stream has its own power of two as
/// its viewer count, so the total names exactly the streams counted.
#[tokio::test]
async fn window_edges_to_the_second() {
    let api = TestApi::new().await;
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
    let api = TestApi::new().await;
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

/// A LiveKit webhook request: (body, Authorization header).
fn livekit_webhook(event: Value) -> (String, String) {
    use base64::Engine;
    use sha2::Digest;
    let body = event.to_string();
    let sha =
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(body.as_bytes()));
    let now = Utc::now().timestamp();
    let claims = json!({"iss": common::fake_livekit::API_KEY, "nbf": now - 10,
                        "exp": now + 600, "sha256": sha});
    (
        body,
        common::fake_livekit::sign_jwt(&claims, common::fake_livekit::API_SECRET),
    )
}

fn participant(kind: &str, room: &str, agent: bool, id: &str) -> Value {
    common::fake_livekit::participant_event(kind, room, agent.then_some("AGENT"), id)
}

/// Viewer counts of a live stream move its analytics while it is live; the count it ends with
/// is final, and viewers leaving afterwards change nothing.
#[tokio::test]
async fn viewer_counts_change_on_a_live_stream() {
    let fake = common::fake_livekit::FakeLiveKit::start().await;
    let config = fake.config();
    let vars: Vec<(&str, &str)> = config.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let api = TestApi::with_config(&vars).await;
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": 60}))
        .await;
    r.assert_status(201);
    let room = r.body["room_name"].as_str().unwrap().to_owned();
    let send = |event: Value| {
        let api = &api;
        async move {
            api.post_livekit(&livekit_webhook(event))
                .await
                .assert_status(200)
        }
    };
    let figures = || {
        let api = &api;
        async move {
            let b = api.get("/analytics", &Keys::live_a()).await.body;
            (
                b["total_viewers"].as_u64().unwrap(),
                b["live_now"].as_u64().unwrap(),
                b["total_minutes"].as_u64().unwrap(),
                b["streams"][0]["viewer_count"].as_u64().unwrap(),
            )
        }
    };
    assert_eq!(figures().await, (0, 0, 0, 0));
    send(participant("participant_joined", &room, true, "EV_agent")).await;
    for i in 0..3 {
        send(participant(
            "participant_joined",
            &room,
            false,
            &format!("EV_j{i}"),
        ))
        .await;
    }
    assert_eq!(figures().await, (3, 1, 0, 3));
    send(participant("participant_left", &room, false, "EV_l0")).await;
    assert_eq!(figures().await, (2, 1, 0, 2));
    api.advance(Duration::minutes(7));
    send(participant(
        "participant_left",
        &room,
        true,
        "EV_agent_left",
    ))
    .await;
    assert_eq!(figures().await, (2, 0, 7, 2));
    // After the end: nothing moves.
    for (kind, id) in [
        ("participant_left", "EV_l1"),
        ("participant_joined", "EV_j9"),
    ] {
        api.post_livekit(&livekit_webhook(participant(kind, &room, false, id)))
            .await;
    }
    assert_eq!(figures().await, (2, 0, 7, 2));
}

/// Seeded history counts, whether it is appended after the brand's streams, inserted before
/// them, or replaces some of them (as `admin load-seed` does from another instance).
#[tokio::test]
async fn seeded_history_counts() {
    let api = TestApi::new().await;
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

/// Items each DynamoDB request asks for, counted by an SDK interceptor from the request: a
/// `GetItem` one, a `BatchGetItem` or `TransactGetItems` its keys; any other read (`Query`,
/// `Scan`) is recorded by name.
#[derive(Debug, Clone, Default)]
struct ItemsRead(std::sync::Arc<std::sync::Mutex<Vec<(String, usize)>>>);

impl aws_sdk_dynamodb::config::Intercept for ItemsRead {
    fn name(&self) -> &'static str {
        "ItemsRead"
    }

    fn read_before_transmit(
        &self,
        context: &aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef<'_>,
        _: &aws_sdk_dynamodb::config::RuntimeComponents,
        _: &mut aws_sdk_dynamodb::config::ConfigBag,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let request = context.request();
        let operation = request
            .headers()
            .get("x-amz-target")
            .and_then(|t| t.split('.').nth(1))
            .unwrap_or("?")
            .to_owned();
        let body: Value = request
            .body()
            .bytes()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default();
        let items = match operation.as_str() {
            "GetItem" => 1,
            "TransactGetItems" => body["TransactItems"].as_array().map_or(0, Vec::len),
            "BatchGetItem" => body["RequestItems"].as_object().map_or(0, |tables| {
                tables
                    .values()
                    .map(|t| t["Keys"].as_array().map_or(0, Vec::len))
                    .sum()
            }),
            _ => 0,
        };
        self.0.lock().unwrap().push((operation, items));
        Ok(())
    }
}

/// A 30-day call reads the aggregates, the listed streams and a constant: the same with 2,000
/// streams in the window as with 200, where reading the window would read them all.
#[tokio::test]
#[ignore = "needs DynamoDB (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_30_day_call_reads_a_bounded_number_of_items() {
    use hosting_runtime::{LocalQueue, Parts, Runtime};
    let sdk = hosting_aws::sdk_config().await;
    let recorder = ItemsRead::default();
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&sdk)
            .interceptor(recorder.clone())
            .build(),
    );
    let mut reads = Vec::new();
    for (brand, key, window) in [
        ("brand_a", Keys::test_a(), 200u32),
        ("brand_b", Keys::test_b(), 2_000),
    ] {
        let store = hosting_aws::dynamodb::DynamoStore::new(
            client.clone(),
            format!("items-{}", uuid::Uuid::new_v4().simple()),
        );
        store.create_table().await.unwrap();
        let config = hosting_domain::config::Config::from_lookup(
            hosting_domain::config::StoreKind::Memory,
            |_| None,
        )
        .unwrap();
        let runtime = Runtime::assemble(
            config,
            std::sync::Arc::new(hosting_domain::clock::SystemClock),
            None,
            Parts {
                store: std::sync::Arc::new(store),
                memory: None,
                queue: LocalQueue::Memory(hosting_embedded::MemoryQueue::new()),
                scheduler: None,
            },
        );
        // The window's streams, one every 20 minutes back from now, and history before it.
        let now = Utc::now();
        let mut seed = base_seed(now);
        seed["streams"] = (0..window + 50)
            .map(|i| {
                let created = now
                    - Duration::minutes(20 * i64::from(i) + 1)
                    - if i >= window {
                        Duration::days(31)
                    } else {
                        Duration::zero()
                    };
                let mut stream = ended_at(
                    &format!("e0000000-0000-4000-8000-{i:012}"),
                    created,
                    3,
                    ["kick", "tiktok"][i as usize % 2],
                );
                stream["brand_id"] = json!(brand);
                stream
            })
            .collect();
        hosting_app::seed::Seed::from_json(&seed.to_string())
            .unwrap()
            .load(&*runtime.app.store)
            .await
            .unwrap();
        let service = local_api::service(runtime.app.clone());
        let get = || {
            let service = service.clone();
            let key = key.clone();
            async move {
                use tower::ServiceExt;
                let request = axum::http::Request::builder()
                    .uri("/api/v1/analytics?period=30d")
                    .header("authorization", format!("Bearer {key}"))
                    .body(axum::body::Body::empty())
                    .unwrap();
                let response = service.oneshot(request).await.unwrap();
                assert_eq!(response.status().as_u16(), 200);
                let bytes = http_body_util::BodyExt::collect(response.into_body())
                    .await
                    .unwrap()
                    .to_bytes();
                serde_json::from_slice::<Value>(&bytes).unwrap()
            }
        };
        // A warm instance: its key is cached.
        get().await;
        recorder.0.lock().unwrap().clear();
        let b = get().await;
        let requests = std::mem::take(&mut *recorder.0.lock().unwrap());
        assert_eq!(b["total_streams"], window);
        assert_eq!(b["total_viewers"], 3 * window);
        assert_eq!(b["total_minutes"], window);
        assert_eq!(
            b["by_platform"],
            json!({"kick": window / 2, "tiktok": window / 2})
        );
        assert_eq!(ids(&b).len(), window.min(1000) as usize);
        for (operation, _) in &requests {
            assert!(
                ["GetItem", "BatchGetItem", "TransactGetItems", "UpdateItem"]
                    .contains(&operation.as_str()),
                "{operation}: {requests:?}"
            );
        }
        let items: usize = requests.iter().map(|(_, items)| items).sum();
        // The listed streams, the brand's counters, the hour of `since`, 32 days, the stream
        // of the partial minute, and the key and brand if the instance's cache expired.
        assert!(
            items <= window.min(1000) as usize + 40,
            "{window} streams in the window: {items} items read ({requests:?})"
        );
        reads.push(items);
    }
    // Beyond the 1,000 listed, nothing grows with the window.
    assert!(reads[1] <= reads[0] + 800 + 5, "{reads:?}");
}
