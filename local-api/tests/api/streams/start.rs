//! `POST /streams`: a start's answer, every refusal in its order, and the concurrency limit.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::common::*;

// ---- POST /streams: success -------------------------------------------------------------

#[tokio::test]
async fn test_key_start_is_live_at_once() {
    let api = TestApp::new().await;
    let r = api.start(&Keys::test_a(), json!({})).await;
    r.assert_status(201);
    let b = &r.body;
    assert_eq!(
        field_names(b),
        [
            "created_at",
            "destinations",
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
    let api = TestApp::new().await;
    let a = api.start(&Keys::test_a(), json!({})).await;
    let b = api.start(&Keys::test_a(), json!({})).await;
    assert_ne!(a.body["room_name"], b.body["room_name"]);
}

#[tokio::test]
async fn live_key_without_room_provider_fails_launch_and_frees_the_slot() {
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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

async fn code_of(api: &TestApp, overrides: Value) -> String {
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
    api.set_failing().await;
    // The pipeline itself reads the store, so the failure surfaces there as db_error too.
    api.start(&Keys::test_a(), json!({}))
        .await
        .assert_error(500, "db_error");
}

// ---- concurrency limit -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_starts_give_exactly_three() {
    let api = Arc::new(TestApp::new().await);
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
    let api = TestApp::new().await;
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
