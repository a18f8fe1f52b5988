//! `GET /streams`: order, fields, paging, the status filter and what each brand sees.

use chrono::Duration;
use serde_json::{Value, json};

use super::listed_ids;
use crate::common::*;

// ---- GET /streams --------------------------------------------------------------------------

#[tokio::test]
async fn list_newest_first_with_every_field() {
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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

#[tokio::test]
async fn list_paging_echoes_and_clamps() {
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
    let live = api.start_test_stream(&Keys::test_a()).await;
    let ended = api.start_test_stream(&Keys::test_a()).await;
    api.delete(&format!("/streams/{ended}"), &Keys::test_a())
        .await
        .assert_status(200);
    api.start(&Keys::live_a(), json!({}))
        .await
        .assert_error(502, "launch_failed");

    let ids = listed_ids;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
