//! The four stream endpoints: `POST`/`GET`/`DELETE /streams` as docs/streams.md and
//! docs/request-pipeline.md ("Order of checks per endpoint", "Errors") state them.

mod common;

use std::sync::Arc;

use chrono::Duration;
use common::*;
use serde_json::{Value, json};

fn field_names(v: &Value) -> Vec<String> {
    let mut names: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    names.sort();
    names
}

// ---- POST /streams: success -------------------------------------------------------------

#[tokio::test]
async fn test_key_start_is_live_at_once() {
    let api = TestApi::new().await;
    let r = api.start(&Keys::test_a(), json!({})).await;
    r.assert_status(201);
    let b = &r.body;
    assert_eq!(
        field_names(b),
        [
            "created_at",
            "room_name",
            "status",
            "stream_id",
            "test",
            "viewer_token",
            "ws_url"
        ]
    );
    assert_eq!(b["status"], "live");
    assert_eq!(b["test"], true);
    assert_eq!(b["ws_url"], Value::Null);
    assert_eq!(b["viewer_token"], Value::Null);
    assert!(b["room_name"].as_str().is_some_and(|n| !n.is_empty()));
    assert_eq!(b["created_at"], "2026-03-02T12:00:30.000Z");
    let id = b["stream_id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok());
    assert_eq!(
        r.header("location"),
        Some(&*format!("/api/v1/streams/{id}"))
    );
    assert_eq!(api.events_of(id).await, ["stream.started"]);

    let detail = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    detail.assert_status(200);
    assert_eq!(detail.body["started_at"], b["created_at"]);
    assert_eq!(detail.body["viewer_count"], 0);
}

#[tokio::test]
async fn room_names_are_unique() {
    let api = TestApi::new().await;
    let a = api.start(&Keys::test_a(), json!({})).await;
    let b = api.start(&Keys::test_a(), json!({})).await;
    assert_ne!(a.body["room_name"], b.body["room_name"]);
}

#[tokio::test]
async fn live_key_without_room_provider_fails_launch_and_frees_the_slot() {
    let api = TestApi::new().await;
    let r = api.start(&Keys::live_a(), json!({})).await;
    r.assert_error(502, "launch_failed");
    assert_eq!(api.active_streams("brand_a").await, 0);
    // The stream remains retrievable, in error with ended_at.
    let list = api.get("/streams", &Keys::live_a()).await;
    assert_eq!(list.body["total"], 1);
    let id = list.body["streams"][0]["id"].as_str().unwrap().to_owned();
    let detail = api.get(&format!("/streams/{id}"), &Keys::live_a()).await;
    assert_eq!(detail.body["status"], "error");
    assert!(detail.body["ended_at"].is_string());
    assert_eq!(detail.body["started_at"], Value::Null);
    assert!(detail.body.get("test").is_none());
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
    // Three more can still start: the failed one holds no slot.
    for _ in 0..3 {
        api.start(&Keys::test_a(), json!({}))
            .await
            .assert_status(201);
    }
}

#[tokio::test]
async fn duration_is_optional_for_test_keys_only() {
    let api = TestApi::new().await;
    api.start(&Keys::test_a(), json!({"duration_minutes": null}))
        .await
        .assert_status(201);
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": null}))
        .await;
    r.assert_error(400, "missing_fields");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("duration_minutes")
    );
    // Nothing was created for the live key.
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 1);
}

#[tokio::test]
async fn optional_fields_and_unknown_fields() {
    let api = TestApi::new().await;
    for overrides in [
        json!({"script": "Talk about the serum."}),
        json!({"script": null, "vertical": null}),
        json!({"vertical": "live-commerce"}),
        json!({"whatever": [1, 2, 3], "another": {"x": 1}}),
    ] {
        let r = api.start(&Keys::test_a(), overrides.clone()).await;
        r.assert_status(201);
        let id = r.body["stream_id"].as_str().unwrap();
        api.delete(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .assert_status(200);
    }
}

// ---- POST /streams: every error, in order ------------------------------------------------

#[tokio::test]
async fn bodies_that_are_not_json_objects_are_missing_fields() {
    let api = TestApi::new().await;
    for raw in [
        "",
        "{",
        "not json",
        "[]",
        "[1]",
        "\"text\"",
        "1",
        "null",
        "true",
        "{\"a\":1,}",
    ] {
        api.call_raw("POST", "/streams", Some(&Keys::test_a()), Some(raw))
            .await
            .assert_error(400, "missing_fields");
    }
}

#[tokio::test]
async fn each_required_field_absent_or_null_is_missing_fields() {
    let api = TestApi::new().await;
    for field in ["creator_id", "product_name", "platform"] {
        let r = api.start(&Keys::test_a(), json!({ field: null })).await;
        r.assert_error(400, "missing_fields");
        assert!(r.body["error"]["message"].as_str().unwrap().contains(field));
        let mut body = json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick"});
        body[field] = Value::Null;
        api.post("/streams", &Keys::test_a(), body)
            .await
            .assert_error(400, "missing_fields");
    }
    let r = api.post("/streams", &Keys::live_a(), json!({})).await;
    r.assert_error(400, "missing_fields");
    let message = r.body["error"]["message"].as_str().unwrap();
    for field in ["creator_id", "product_name", "platform", "duration_minutes"] {
        assert!(message.contains(field), "{message}");
    }
}

#[tokio::test]
async fn missing_fields_wins_over_invalid_fields() {
    let api = TestApi::new().await;
    let r = api
        .post(
            "/streams",
            &Keys::test_a(),
            json!({"creator_id": CREATOR_AVA, "platform": "myspace"}),
        )
        .await;
    r.assert_error(400, "missing_fields");
    let r = api
        .post(
            "/streams",
            &Keys::live_a(),
            json!({"creator_id": "x".repeat(65), "product_name": "P", "platform": "kick"}),
        )
        .await;
    r.assert_error(400, "missing_fields");
}

async fn code_of(api: &TestApi, overrides: Value) -> String {
    let r = api.start(&Keys::test_a(), overrides).await;
    if r.status.as_u16() == 201 {
        let id = r.body["stream_id"].as_str().unwrap().to_owned();
        api.delete(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .assert_status(200);
        "created".into()
    } else {
        r.code().to_owned()
    }
}

#[tokio::test]
async fn boundaries_count_unicode_characters() {
    let api = TestApi::new().await;
    let cases: Vec<(Value, &str)> = vec![
        // creator_id: 64 passes the length rule (then matches no creator), 65 does not.
        (json!({"creator_id": "é".repeat(64)}), "invalid_creator"),
        (json!({"creator_id": "é".repeat(65)}), "invalid_fields"),
        (json!({"creator_id": 12}), "invalid_fields"),
        (json!({"product_name": "ü".repeat(200)}), "created"),
        (json!({"product_name": "ü".repeat(201)}), "invalid_fields"),
        (json!({"product_name": "😀".repeat(200)}), "created"),
        (json!({"product_name": "😀".repeat(201)}), "invalid_fields"),
        (json!({"product_name": ""}), "invalid_fields"),
        (json!({"product_name": "  \t "}), "invalid_fields"),
        (json!({"product_name": 5}), "invalid_fields"),
        // platform: 33 characters fail on length, 32 on the list, both invalid_fields.
        (json!({"platform": "y".repeat(33)}), "invalid_fields"),
        (json!({"platform": "y".repeat(32)}), "invalid_fields"),
        (json!({"platform": "TikTok"}), "invalid_fields"),
        (json!({"platform": " tiktok"}), "invalid_fields"),
        (json!({"platform": ["tiktok"]}), "invalid_fields"),
        (json!({"duration_minutes": 0}), "invalid_fields"),
        (json!({"duration_minutes": 1}), "created"),
        (json!({"duration_minutes": 480}), "created"),
        (json!({"duration_minutes": 481}), "invalid_fields"),
        (json!({"duration_minutes": -1}), "invalid_fields"),
        (json!({"duration_minutes": "10"}), "invalid_fields"),
        (json!({"duration_minutes": 10.5}), "invalid_fields"),
        (json!({"duration_minutes": 1e2}), "invalid_fields"),
        (json!({"duration_minutes": true}), "invalid_fields"),
        (json!({"script": "ß".repeat(50_000)}), "created"),
        (json!({"script": "ß".repeat(50_001)}), "invalid_fields"),
        (json!({"script": 1}), "invalid_fields"),
        (json!({"vertical": 1}), "invalid_fields"),
    ];
    for (overrides, expected) in cases {
        let got = code_of(&api, overrides.clone()).await;
        assert_eq!(
            got,
            expected,
            "{}",
            overrides.to_string().chars().take(80).collect::<String>()
        );
    }
    for platform in [
        "youtube",
        "tiktok",
        "twitch",
        "kick",
        "facebook",
        "instagram",
    ] {
        assert_eq!(
            code_of(&api, json!({"platform": platform})).await,
            "created"
        );
    }
}

#[tokio::test]
async fn invalid_field_messages_name_the_field() {
    let api = TestApi::new().await;
    for (field, value) in [
        ("creator_id", json!("x".repeat(65))),
        ("product_name", json!("")),
        ("platform", json!("myspace")),
        ("duration_minutes", json!(0)),
        ("script", json!(false)),
    ] {
        let r = api.start(&Keys::test_a(), json!({ field: value })).await;
        r.assert_error(400, "invalid_fields");
        assert!(
            r.body["error"]["message"].as_str().unwrap().contains(field),
            "{field}"
        );
    }
}

#[tokio::test]
async fn vertical_mismatch() {
    let api = TestApi::new().await;
    api.start(&Keys::test_a(), json!({"vertical": "gaming"}))
        .await
        .assert_error(403, "vertical_mismatch");
    api.start(&Keys::test_a(), json!({"vertical": "Live-Commerce"}))
        .await
        .assert_error(403, "vertical_mismatch");
    // A brand whose vertical this API does not serve.
    api.start(&Keys::test_gaming(), json!({}))
        .await
        .assert_error(403, "vertical_mismatch");
    api.start(&Keys::test_gaming(), json!({"vertical": "gaming"}))
        .await
        .assert_error(403, "vertical_mismatch");
}

#[tokio::test]
async fn check_order_invalid_then_vertical_then_creator_then_concurrency() {
    let api = TestApi::new().await;
    // invalid_fields before vertical_mismatch
    api.start(
        &Keys::test_a(),
        json!({"vertical": "gaming", "duration_minutes": 0}),
    )
    .await
    .assert_error(400, "invalid_fields");
    // vertical_mismatch before invalid_creator
    api.start(
        &Keys::test_a(),
        json!({"vertical": "gaming", "creator_id": "avt_nobody00000"}),
    )
    .await
    .assert_error(403, "vertical_mismatch");
    // invalid_creator before concurrency_limit
    for _ in 0..3 {
        api.start(&Keys::test_a(), json!({}))
            .await
            .assert_status(201);
    }
    api.start(&Keys::test_a(), json!({"creator_id": "avt_nobody00000"}))
        .await
        .assert_error(400, "invalid_creator");
    api.start(&Keys::test_a(), json!({}))
        .await
        .assert_error(429, "concurrency_limit");
}

#[tokio::test]
async fn creator_must_be_the_exact_public_id() {
    let api = TestApi::new().await;
    for creator in [
        "ava",
        "Ava",
        "AVT_AVA000000001",
        "avt_ava00000000",
        "avt_ava000000001 ",
        "avt_",
    ] {
        api.start(&Keys::test_a(), json!({"creator_id": creator}))
            .await
            .assert_error(400, "invalid_creator");
    }
}

#[tokio::test]
async fn store_failure_is_db_error() {
    let api = TestApi::new().await;
    api.set_failing().await;
    // The pipeline itself reads the store, so the failure surfaces there as db_error too.
    api.start(&Keys::test_a(), json!({}))
        .await
        .assert_error(500, "db_error");
}

// ---- concurrency limit -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_starts_give_exactly_three() {
    let api = Arc::new(TestApi::new().await);
    let starts = (0..20).map(|i| {
        let api = api.clone();
        tokio::spawn(async move {
            let key = if i % 2 == 0 {
                Keys::test_a()
            } else {
                Keys::test_a2()
            };
            let r = api.start(&key, json!({})).await;
            (
                r.status.as_u16(),
                r.code().to_owned(),
                r.body["stream_id"].as_str().map(String::from),
            )
        })
    });
    let results: Vec<_> = futures::future::join_all(starts)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let created: Vec<String> = results.iter().filter_map(|r| r.2.clone()).collect();
    assert_eq!(created.len(), 3);
    assert_eq!(
        results
            .iter()
            .filter(|r| r.0 == 429 && r.1 == "concurrency_limit")
            .count(),
        17
    );
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 3);

    // Ending one frees exactly one slot, also under concurrency.
    api.delete(&format!("/streams/{}", created[0]), &Keys::test_a())
        .await
        .assert_status(200);
    let statuses = concurrently(10, |_| {
        let api = api.clone();
        async move { api.start(&Keys::test_a(), json!({})).await.status.as_u16() }
    })
    .await;
    assert_eq!(statuses.get(&201), Some(&1));
    assert_eq!(statuses.get(&429), Some(&9));
}

#[tokio::test]
async fn the_limit_is_per_brand_and_counts_seeded_active_streams() {
    let api = TestApi::new().await;
    let now = api.now();
    let seeded = |id: &str, status: &str| {
        json!({"id": id, "brand_id": "brand_a", "status": status, "platform": "kick",
               "vertical": "live-commerce", "creator_id": CREATOR_AVA, "product_name": "P",
               "source": "dashboard", "room_name": format!("room-{id}"), "viewer_count": 3,
               "test": false, "created_at": now.to_rfc3339(), "started_at": null, "ended_at": null})
    };
    api.seed(json!({"streams": [
        seeded("10000000-0000-4000-8000-000000000001", "preparing"),
        seeded("10000000-0000-4000-8000-000000000002", "live"),
        seeded("10000000-0000-4000-8000-000000000003", "ended"),
    ]}))
    .await;
    api.start(&Keys::test_a(), json!({}))
        .await
        .assert_status(201);
    api.start(&Keys::test_a(), json!({}))
        .await
        .assert_error(429, "concurrency_limit");
    // Brand B is unaffected.
    for _ in 0..3 {
        api.start(&Keys::test_b(), json!({}))
            .await
            .assert_status(201);
    }
}

// ---- GET /streams --------------------------------------------------------------------------

#[tokio::test]
async fn list_newest_first_with_every_field() {
    let api = TestApi::new().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(api.start_test_stream(&Keys::test_a()).await);
        api.delete(
            &format!("/streams/{}", ids.last().unwrap()),
            &Keys::test_a(),
        )
        .await
        .assert_status(200);
        api.advance(Duration::seconds(1));
    }
    let r = api.get("/streams", &Keys::test_a()).await;
    r.assert_status(200);
    assert_eq!(
        field_names(&r.body),
        ["limit", "offset", "streams", "total"]
    );
    let listed: Vec<&str> = r.body["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    ids.reverse();
    assert_eq!(listed, ids);
    let item = &r.body["streams"][0];
    assert_eq!(
        field_names(item),
        [
            "created_at",
            "creator_id",
            "end_reason",
            "ended_at",
            "id",
            "platform",
            "product_name",
            "room_name",
            "source",
            "started_at",
            "status",
            "test",
            "vertical",
            "viewer_count"
        ]
    );
    assert_eq!(item["source"], "api");
    assert_eq!(item["vertical"], "live-commerce");
    assert_eq!(item["creator_id"], CREATOR_AVA);
    assert_eq!(item["status"], "ended");
    assert_eq!(item["end_reason"], "requested");
}

#[tokio::test]
async fn list_ties_on_created_at_break_by_id_descending() {
    let api = TestApi::new().await;
    let now = api.now();
    let ids = [
        "30000000-0000-4000-8000-000000000002",
        "30000000-0000-4000-8000-000000000003",
        "30000000-0000-4000-8000-000000000001",
    ];
    let streams: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"id": id, "brand_id": "brand_a", "status": "ended", "platform": "kick",
                   "vertical": "live-commerce", "creator_id": CREATOR_AVA, "product_name": "P",
                   "source": "dashboard", "room_name": null, "viewer_count": 0, "test": false,
                   "created_at": now.to_rfc3339(), "started_at": now.to_rfc3339(),
                   "ended_at": now.to_rfc3339()})
        })
        .collect();
    api.seed(json!({ "streams": streams })).await;
    let r = api.get("/streams", &Keys::test_a()).await;
    let listed: Vec<&str> = r.body["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[1], ids[0], ids[2]]);
}

/// Starts of one brand on one clock tick: each is placed after the one before, to the
/// millisecond shown, so the list shows them newest first by `created_at` and never a tie out
/// of id order.
#[tokio::test]
async fn starts_on_one_clock_tick_are_listed_newest_first_by_created_at() {
    let api = TestApi::new().await;
    let mut started = Vec::new();
    for _ in 0..4 {
        let r = api.start(&Keys::test_a(), json!({})).await;
        r.assert_status(201);
        let id = r.body["stream_id"].as_str().unwrap().to_owned();
        started.push((
            r.body["created_at"].as_str().unwrap().to_owned(),
            id.clone(),
        ));
        api.delete(&format!("/streams/{id}"), &Keys::test_a()).await;
    }
    let r = api.get("/streams", &Keys::test_a()).await;
    let listed: Vec<(String, String)> = r.body["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let field = |name: &str| s[name].as_str().unwrap().to_owned();
            (field("created_at"), field("id"))
        })
        .collect();
    let mut newest_first = started.clone();
    newest_first.reverse();
    assert_eq!(listed, newest_first, "listed in creation order");
    assert!(
        listed.windows(2).all(|pair| pair[0] > pair[1]),
        "newest first by (created_at, id): {listed:?}"
    );
    let detail = api
        .get(&format!("/streams/{}", started[0].1), &Keys::test_a())
        .await;
    assert_eq!(detail.body["created_at"], started[0].0.as_str());
}

/// A seeded history of `statuses` for brand A, oldest first, one minute apart except for a
/// few ties; returns the ids, newest first by (`created_at`, `id`).
async fn seed_history(
    api: &TestApi,
    statuses: &[&str],
    newest_at: chrono::DateTime<chrono::Utc>,
) -> Vec<(String, String)> {
    let count = statuses.len();
    let mut listed = Vec::with_capacity(count);
    let streams: Vec<Value> = statuses
        .iter()
        .enumerate()
        .map(|(i, status)| {
            // Every tenth stream ties with the one before it.
            let minutes = (count - i) as i64 - i64::from(i % 10 == 9);
            let at = newest_at - Duration::minutes(minutes);
            let id = format!("40000000-0000-4000-8000-{:012x}", (i * 7919) % 100_000);
            listed.push((at.to_rfc3339(), id.clone(), status.to_string()));
            let ended = matches!(*status, "ended" | "error").then(|| at.to_rfc3339());
            json!({"id": id, "brand_id": "brand_a", "status": status, "platform": "kick",
                   "vertical": "live-commerce", "creator_id": CREATOR_AVA, "product_name": "P",
                   "source": "dashboard", "room_name": null, "viewer_count": i % 5,
                   "test": false, "created_at": at.to_rfc3339(), "started_at": null,
                   "ended_at": ended})
        })
        .collect();
    api.seed(json!({ "streams": streams })).await;
    let mut listed: Vec<(chrono::DateTime<chrono::Utc>, String, String)> = listed
        .into_iter()
        .map(|(at, id, status)| {
            (
                chrono::DateTime::parse_from_rfc3339(&at).unwrap().to_utc(),
                id,
                status,
            )
        })
        .collect();
    listed.sort();
    listed.reverse();
    listed
        .into_iter()
        .map(|(_, id, status)| (id, status))
        .collect()
}

fn listed_ids(r: &Response) -> Vec<String> {
    r.body["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Pages of every status, at offsets deep into a history of several thousand streams, are
/// exactly the matching slice of the history filtered newest first.
#[tokio::test]
async fn status_pages_deep_in_a_long_history_match_the_history() {
    let api = TestApi::new().await;
    let statuses: Vec<&str> = (0..2_600)
        .map(|i| match i {
            700 => "live",
            2_590 => "preparing",
            i if i % 7 == 3 || (1_100..1_160).contains(&i) => "error",
            _ => "ended",
        })
        .collect();
    let history = seed_history(&api, &statuses, api.now() - Duration::days(2)).await;
    for status in [
        None,
        Some("ended"),
        Some("error"),
        Some("live"),
        Some("preparing"),
    ] {
        let matching: Vec<&String> = history
            .iter()
            .filter(|(_, s)| status.is_none_or(|wanted| s == wanted))
            .map(|(id, _)| id)
            .collect();
        for (offset, limit) in [
            (0, 20),
            (0, 100),
            (1_023, 7),
            (1_500, 100),
            (matching.len().saturating_sub(3), 20),
            (matching.len(), 20),
        ] {
            let filter = status.map(|s| format!("&status={s}")).unwrap_or_default();
            let r = api
                .get(
                    &format!("/streams?offset={offset}&limit={limit}{filter}"),
                    &Keys::test_a(),
                )
                .await;
            r.assert_status(200);
            assert_eq!(r.body["total"], matching.len(), "{status:?}");
            let expected: Vec<String> = matching
                .iter()
                .skip(offset)
                .take(limit)
                .map(|id| id.to_string())
                .collect();
            assert_eq!(
                listed_ids(&r),
                expected,
                "{status:?} offset {offset} limit {limit}"
            );
        }
    }
}

/// Seeding streams older than some of the brand's, or replacing one, places every stream
/// again; a stream started before still ends and is listed where it belongs, also when the
/// seeding ran elsewhere and the API's instance remembered the stream's old place.
#[tokio::test]
async fn seeding_into_a_history_keeps_it_newest_first() {
    let api = TestApi::new().await;
    let now = api.now();
    let first = seed_history(
        &api,
        &["ended", "error", "ended"],
        now - Duration::minutes(10),
    )
    .await;
    let started = api.start_test_stream(&Keys::test_a()).await;
    // Older than all of them, and a replacement of the error one as ended.
    let older = |id: &str, status: &str, minutes: i64| {
        let at = (now - Duration::days(1) - Duration::minutes(minutes)).to_rfc3339();
        json!({"id": id, "brand_id": "brand_a", "status": status, "platform": "kick",
               "vertical": "live-commerce", "creator_id": CREATOR_AVA, "product_name": "P",
               "source": "dashboard", "room_name": null, "viewer_count": 0, "test": false,
               "created_at": at, "started_at": null, "ended_at": at})
    };
    let replaced = first.iter().find(|(_, s)| s == "error").unwrap().0.clone();
    let replaced_at = (now - Duration::minutes(12)).to_rfc3339();
    api.seed_elsewhere(json!({"streams": [
        older("50000000-0000-4000-8000-000000000001", "error", 1),
        older("50000000-0000-4000-8000-000000000002", "ended", 2),
        {"id": replaced, "brand_id": "brand_a", "status": "ended", "platform": "kick",
         "vertical": "live-commerce", "creator_id": CREATOR_AVA, "product_name": "P",
         "source": "dashboard", "room_name": null, "viewer_count": 0, "test": false,
         "created_at": replaced_at, "started_at": null, "ended_at": replaced_at},
    ]}))
    .await;
    api.delete(&format!("/streams/{started}"), &Keys::test_a())
        .await
        .assert_status(200);
    let r = api.get("/streams", &Keys::test_a()).await;
    assert_eq!(r.body["total"], 6);
    let mut expected = vec![started.clone()];
    expected.extend(first.iter().map(|(id, _)| id.clone()));
    expected.extend([
        "50000000-0000-4000-8000-000000000001".to_owned(),
        "50000000-0000-4000-8000-000000000002".to_owned(),
    ]);
    assert_eq!(listed_ids(&r), expected);
    let r = api.get("/streams?status=error", &Keys::test_a()).await;
    assert_eq!(listed_ids(&r), ["50000000-0000-4000-8000-000000000001"]);
    let r = api.get("/streams?status=ended", &Keys::test_a()).await;
    assert_eq!(r.body["total"], 5);
    assert_eq!(r.body["streams"][0]["id"], started.as_str());
}

/// Waves of concurrent starts: each start that wins a slot gets its own place in the brand's
/// creation order, with none lost or shared, and the list stays newest first.
#[tokio::test]
async fn concurrent_starts_each_take_their_own_place_in_the_list() {
    let api = Arc::new(TestApi::new().await);
    let winners = Arc::new(std::sync::Mutex::new(Vec::new()));
    for _ in 0..4 {
        let statuses = concurrently(6, |_| {
            let (api, winners) = (api.clone(), winners.clone());
            async move {
                let r = api.start(&Keys::test_a(), json!({})).await;
                if r.status.as_u16() == 201 {
                    let id = r.body["stream_id"].as_str().unwrap().to_owned();
                    winners.lock().unwrap().push(id);
                }
                r.status.as_u16()
            }
        })
        .await;
        assert_eq!(statuses.get(&201), Some(&3), "{statuses:?}");
        let wave: Vec<String> = winners
            .lock()
            .unwrap()
            .iter()
            .rev()
            .take(3)
            .cloned()
            .collect();
        for id in wave {
            api.delete(&format!("/streams/{id}"), &Keys::test_a())
                .await
                .assert_status(200);
        }
    }
    let r = api.get("/streams?status=ended", &Keys::test_a()).await;
    assert_eq!(r.body["total"], 12);
    let listed: Vec<(String, String)> = r.body["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["created_at"].as_str().unwrap().to_owned(),
                s["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        listed.windows(2).all(|pair| pair[0] > pair[1]),
        "{listed:?}"
    );
    let mut ids: Vec<String> = listed.into_iter().map(|(_, id)| id).collect();
    ids.sort();
    let mut expected = winners.lock().unwrap().clone();
    expected.sort();
    assert_eq!(ids, expected);
}

#[tokio::test]
async fn list_paging_echoes_and_clamps() {
    let api = TestApi::new().await;
    for _ in 0..5 {
        let id = api.start_test_stream(&Keys::test_a()).await;
        api.delete(&format!("/streams/{id}"), &Keys::test_a()).await;
        api.advance(Duration::seconds(1));
    }
    let cases = [
        ("", 20, 0, 5),
        ("?limit=0", 1, 0, 1),
        ("?limit=1000", 100, 0, 5),
        ("?limit=101", 100, 0, 5),
        ("?limit=100", 100, 0, 5),
        ("?limit=1", 1, 0, 1),
        ("?offset=-5", 20, 0, 5),
        ("?limit=abc", 20, 0, 5),
        ("?limit=2.5&offset=x", 20, 0, 5),
        ("?limit=2&offset=4", 2, 4, 1),
        ("?offset=5", 20, 5, 0),
        ("?offset=99999999999999999999999", 20, i64::MAX as u64, 0),
        ("?limit=-3", 1, 0, 1),
        ("?limit=%zz&status", 20, 0, 0),
    ];
    for (query, limit, offset, count) in cases {
        let r = api.get(&format!("/streams{query}"), &Keys::test_a()).await;
        r.assert_status(200);
        assert_eq!(r.body["limit"], limit, "{query}");
        assert_eq!(r.body["offset"], offset, "{query}");
        assert_eq!(
            r.body["streams"].as_array().unwrap().len(),
            count,
            "{query}"
        );
        let expected_total = if query.contains("status") { 0 } else { 5 };
        assert_eq!(r.body["total"], expected_total, "{query}");
    }
}

#[tokio::test]
async fn list_status_filter() {
    let api = TestApi::new().await;
    let live = api.start_test_stream(&Keys::test_a()).await;
    let ended = api.start_test_stream(&Keys::test_a()).await;
    api.delete(&format!("/streams/{ended}"), &Keys::test_a())
        .await
        .assert_status(200);
    api.start(&Keys::live_a(), json!({}))
        .await
        .assert_error(502, "launch_failed");

    let ids = |r: &Response| -> Vec<String> {
        r.body["streams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let r = api.get("/streams?status=live", &Keys::test_a()).await;
    assert_eq!(
        (ids(&r), r.body["total"].clone()),
        (vec![live.clone()], json!(1))
    );
    let r = api.get("/streams?status=ended", &Keys::test_a()).await;
    assert_eq!(ids(&r), vec![ended]);
    let r = api.get("/streams?status=error", &Keys::test_a()).await;
    assert_eq!(r.body["total"], 1);
    let r = api.get("/streams?status=preparing", &Keys::test_a()).await;
    assert_eq!(r.body["total"], 0);
    for bogus in ["LIVE", "active", "", "live,ended"] {
        let r = api
            .get(&format!("/streams?status={bogus}"), &Keys::test_a())
            .await;
        r.assert_status(200);
        assert_eq!(
            (r.body["total"].clone(), ids(&r).len()),
            (json!(0), 0),
            "{bogus}"
        );
    }
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 3);
}

#[tokio::test]
async fn list_never_returns_400() {
    let api = TestApi::new().await;
    for query in [
        "?limit=",
        "?offset=",
        "?limit=1e3",
        "?a=%ff%fe",
        "?&&&=",
        "?limit=1&limit=2",
    ] {
        api.get(&format!("/streams{query}"), &Keys::test_a())
            .await
            .assert_status(200);
    }
}

#[tokio::test]
async fn brands_see_only_their_own_streams() {
    let api = TestApi::new().await;
    let a = api.start_test_stream(&Keys::test_a()).await;
    let b = api.start_test_stream(&Keys::test_b()).await;
    let list_b = api.get("/streams", &Keys::test_b()).await;
    assert_eq!(list_b.body["total"], 1);
    assert_eq!(list_b.body["streams"][0]["id"], b.as_str());
    api.get(&format!("/streams/{a}"), &Keys::test_b())
        .await
        .assert_error(404, "not_found");
    api.delete(&format!("/streams/{a}"), &Keys::test_b())
        .await
        .assert_error(404, "not_found");
    // Still live for its own brand, and every key of the brand sees it.
    let detail = api.get(&format!("/streams/{a}"), &Keys::live_a()).await;
    assert_eq!(detail.body["status"], "live");
}

#[tokio::test]
async fn dashboard_streams_and_vanished_creators() {
    let api = TestApi::new().await;
    let t = api.now() - Duration::hours(1);
    api.seed(json!({"streams": [{
        "id": "20000000-0000-4000-8000-000000000001", "brand_id": "brand_a", "status": "ended",
        "platform": null, "vertical": "live-commerce", "creator_id": "avt_gone00000000",
        "product_name": "Old", "source": "dashboard", "room_name": null, "viewer_count": 12,
        "test": false, "created_at": t.to_rfc3339(), "started_at": t.to_rfc3339(),
        "ended_at": (t + Duration::minutes(10)).to_rfc3339()}]}))
        .await;
    let r = api.get("/streams", &Keys::test_a()).await;
    let item = &r.body["streams"][0];
    assert_eq!(item["source"], "dashboard");
    assert_eq!(item["platform"], "unknown");
    assert_eq!(item["creator_id"], Value::Null);
    assert_eq!(item["room_name"], Value::Null);
    assert_eq!(item["viewer_count"], 12);
    assert!(item.get("test").is_none());
    assert!(item.get("end_reason").is_none(), "history records none");
    let detail = api
        .get(
            "/streams/20000000-0000-4000-8000-000000000001",
            &Keys::test_a(),
        )
        .await;
    assert_eq!(detail.body["creator_id"], Value::Null);
    assert_eq!(detail.body["platform"], "unknown");
    assert_eq!(detail.body["room_name"], "");
    assert!(detail.body.get("end_reason").is_none());

    // A creator removed after the stream started: null once the catalog cache (60 s, like
    // GET /creators) has turned over.
    let id = api.start_test_stream(&Keys::test_a()).await;
    api.runtime
        .app
        .store
        .delete_creator(CREATOR_AVA)
        .await
        .unwrap();
    let detail = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(detail.body["creator_id"], CREATOR_AVA);
    api.advance(Duration::seconds(60));
    let detail = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(detail.body["creator_id"], Value::Null);
    let r = api.get("/streams?status=live", &Keys::test_a()).await;
    assert_eq!(r.body["streams"][0]["creator_id"], Value::Null);
}

// ---- GET /streams/{id} ------------------------------------------------------------------------

#[tokio::test]
async fn detail_has_every_field() {
    let api = TestApi::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    let r = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    r.assert_status(200);
    assert_eq!(
        field_names(&r.body),
        [
            "created_at",
            "creator_id",
            "ended_at",
            "events",
            "platform",
            "product_name",
            "room_name",
            "started_at",
            "status",
            "stream_id",
            "test",
            "vertical",
            "viewer_count"
        ]
    );
    assert_eq!(r.body["events"], json!([]));
    assert_eq!(r.body["stream_id"], id.as_str());
    assert_eq!(r.body["ended_at"], Value::Null);
    assert_eq!(r.body["platform"], "tiktok");
    assert_eq!(r.body["product_name"], "Glow Serum");
}

#[tokio::test]
async fn detail_of_a_preparing_stream() {
    let api = TestApi::new().await;
    api.seed(json!({"streams": [{
        "id": "30000000-0000-4000-8000-000000000001", "brand_id": "brand_a", "status": "preparing",
        "platform": "kick", "creator_id": CREATOR_AVA, "product_name": "P", "source": "api",
        "room_name": "r-prep", "created_at": api.now().to_rfc3339()}]}))
        .await;
    let r = api
        .get(
            "/streams/30000000-0000-4000-8000-000000000001",
            &Keys::test_a(),
        )
        .await;
    assert_eq!(r.body["status"], "preparing");
    assert_eq!(r.body["started_at"], Value::Null);
    assert_eq!(r.body["ended_at"], Value::Null);
    assert_eq!(r.body["viewer_count"], 0);
    assert_eq!(r.body["room_name"], "r-prep");
    // DELETE of a stream that is not live is not found.
    api.delete(
        "/streams/30000000-0000-4000-8000-000000000001",
        &Keys::test_a(),
    )
    .await
    .assert_error(404, "not_found");
}

#[tokio::test]
async fn detail_not_found_cases() {
    let api = TestApi::new().await;
    for id in [
        "00000000-0000-4000-8000-000000000000",
        "not-a-uuid",
        "123",
        "%E2%82%AC",
        "%ff",
    ] {
        api.get(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .assert_error(404, "not_found");
        api.delete(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .assert_error(404, "not_found");
    }
}

#[tokio::test]
async fn lookup_failures_are_404_never_500() {
    let api = TestApi::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    // Authenticate first, then make the store fail for the lookup itself.
    let caller = hosting_http::pipeline::authorize(
        &api.runtime.app,
        &{
            let mut h = axum::http::HeaderMap::new();
            h.insert(
                "authorization",
                format!("Bearer {}", Keys::test_a()).parse().unwrap(),
            );
            h
        },
        hosting_domain::domain::Scope::StreamsRead,
    )
    .await
    .unwrap();
    api.set_failing().await;
    let err = hosting_app::service::streams::get(&api.runtime.app, &caller, &id)
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "not_found");
}

// ---- DELETE /streams/{id} ---------------------------------------------------------------------

#[tokio::test]
async fn delete_ends_a_live_stream_once() {
    let api = TestApi::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    api.advance(Duration::minutes(3));
    let r = api.delete(&format!("/streams/{id}"), &Keys::test_a()).await;
    r.assert_status(200);
    assert_eq!(field_names(&r.body), ["ended_at", "status", "stream_id"]);
    assert_eq!(r.body["status"], "ended");
    assert_eq!(r.body["stream_id"], id.as_str());
    assert_eq!(r.body["ended_at"], "2026-03-02T12:03:30.000Z");
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_error(404, "not_found");
    let detail = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(detail.body["status"], "ended");
    assert_eq!(detail.body["ended_at"], r.body["ended_at"]);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    // Its duration timer is gone: nothing fires later.
    assert_eq!(api.advance_and_fire(Duration::hours(9)).await, 0);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_deletes_end_it_exactly_once() {
    let api = Arc::new(TestApi::new().await);
    let id = api.start_test_stream(&Keys::test_a()).await;
    let deletes = (0..10).map(|_| {
        let (api, id) = (api.clone(), id.clone());
        tokio::spawn(async move {
            api.delete(&format!("/streams/{id}"), &Keys::test_a())
                .await
                .status
                .as_u16()
        })
    });
    let statuses: Vec<u16> = futures::future::join_all(deletes)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1);
    assert_eq!(statuses.iter().filter(|s| **s == 404).count(), 9);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
}

// ---- test-stream lifecycle ----------------------------------------------------------------

#[tokio::test]
async fn a_test_stream_ends_when_its_duration_elapses() {
    let api = TestApi::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await; // 30 minutes
    assert_eq!(
        api.advance_and_fire(Duration::minutes(30) - Duration::milliseconds(1))
            .await,
        0
    );
    assert_eq!(
        api.get(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .body["status"],
        "live"
    );
    assert_eq!(api.advance_and_fire(Duration::milliseconds(1)).await, 1);
    let detail = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(detail.body["status"], "ended");
    assert_eq!(detail.body["ended_at"], "2026-03-02T12:30:30.000Z");
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    assert_eq!(api.active_streams("brand_a").await, 0);
    // Nothing more happens later.
    assert_eq!(api.advance_and_fire(Duration::hours(10)).await, 0);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
}

#[tokio::test]
async fn a_test_stream_without_duration_ends_after_480_minutes() {
    let api = TestApi::new().await;
    let r = api
        .start(&Keys::test_a(), json!({"duration_minutes": null}))
        .await;
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    assert_eq!(api.advance_and_fire(Duration::minutes(479)).await, 0);
    api.assert_end_reason(&Keys::test_a(), &id, "live", None)
        .await;
    assert_eq!(api.advance_and_fire(Duration::minutes(1)).await, 1);
    api.assert_end_reason(&Keys::test_a(), &id, "ended", Some("duration_elapsed"))
        .await;
}

#[tokio::test]
async fn timer_and_delete_racing_yield_one_transition() {
    let api = TestApi::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    api.advance(Duration::minutes(30));
    // The timer is due; the DELETE lands first; the timer then finds nothing to do.
    let timers = api.timers().take_due(api.now());
    assert_eq!(timers.len(), 1);
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    let changed = hosting_app::service::timers::fire(&api.runtime.app, &timers[0])
        .await
        .unwrap();
    assert!(!changed);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
}

#[tokio::test]
async fn event_bodies_follow_the_documented_shape() {
    let api = TestApi::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    let events = api.emitted_events().await;
    let body: Value = serde_json::from_str(&events[0].body).unwrap();
    assert_eq!(
        field_names(&body),
        ["api_version", "created_at", "data", "id", "test", "type"]
    );
    assert_eq!(body["type"], "stream.started");
    assert_eq!(body["api_version"], "v1");
    assert_eq!(body["test"], true);
    assert_eq!(body["data"]["stream"]["stream_id"], id.as_str());
    assert_eq!(body["data"]["stream"]["status"], "live");
    let event_id = body["id"].as_str().unwrap();
    assert_eq!(event_id.len(), 36);
    assert!(event_id.starts_with("evt_"));
    assert!(
        event_id[4..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
}
