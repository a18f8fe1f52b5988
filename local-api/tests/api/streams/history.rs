//! `GET /streams` over a long history: status pages deep in it, seeding into it, and concurrent starts each taking their own place.

use std::sync::Arc;

use chrono::Duration;
use serde_json::{Value, json};

use super::listed_ids;
use crate::common::*;

/// A seeded history of `statuses` for brand A, oldest first, one minute apart except for a
/// few ties; returns the ids, newest first by (`created_at`, `id`).
async fn seed_history(
    api: &TestApp,
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

/// Pages of every status, at offsets deep into a history of several thousand streams, are
/// exactly the matching slice of the history filtered newest first.
#[tokio::test]
async fn status_pages_deep_in_a_long_history_match_the_history() {
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = Arc::new(TestApp::new().await);
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
