//! `GET /streams/{id}`: every field, a preparing stream, and every way of not being found.

use serde_json::{Value, json};

use crate::common::*;

// ---- GET /streams/{id} ------------------------------------------------------------------------

#[tokio::test]
async fn detail_has_every_field() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    let r = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    r.assert_status(200);
    assert_eq!(
        field_names(&r.body),
        [
            "created_at",
            "creator_id",
            "destinations",
            "ended_at",
            "events",
            "platform",
            "product_name",
            "room_name",
            "started_at",
            "status",
            "stream_id",
            "test",
            "usage",
            "vertical",
            "viewer_count"
        ]
    );
    assert_eq!(r.body["usage"], json!({"live_ms": 0, "in_progress": true}));
    assert_eq!(r.body["events"], json!([]));
    assert_eq!(r.body["destinations"], json!([]));
    assert_eq!(r.body["stream_id"], id.as_str());
    assert_eq!(r.body["ended_at"], Value::Null);
    assert_eq!(r.body["platform"], "tiktok");
    assert_eq!(r.body["product_name"], "Glow Serum");
}

/// `usage` (docs/usage.md): live time to the millisecond, running while live, fixed at the end.
#[tokio::test]
async fn usage_counts_live_time_to_the_millisecond() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    let started = api.now();
    api.advance(chrono::Duration::milliseconds(90_250));
    let r = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(
        r.body["usage"],
        json!({"live_ms": 90_250, "in_progress": true})
    );
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    api.advance(chrono::Duration::minutes(30));
    let r = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(
        r.body["usage"],
        json!({"live_ms": 90_250, "in_progress": false})
    );
    let ended = chrono::DateTime::parse_from_rfc3339(r.body["ended_at"].as_str().unwrap()).unwrap();
    assert_eq!((ended.to_utc() - started).num_milliseconds(), 90_250);

    // Ended by its duration with the timer fired late: usage is the duration, exactly.
    let r = api
        .start(&Keys::test_a(), json!({"duration_minutes": 1}))
        .await;
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    api.advance_and_fire(chrono::Duration::minutes(7)).await;
    let r = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(r.body["end_reason"], "duration_elapsed");
    assert_eq!(
        r.body["usage"],
        json!({"live_ms": 60_000, "in_progress": false})
    );
    // The test helpers' answers carry it too.
    let r = api.start_test_stream(&Keys::test_a()).await;
    api.advance(chrono::Duration::seconds(5));
    let done = api
        .post(
            &format!("/test_helpers/streams/{r}/finish"),
            &Keys::test_a(),
            json!({}),
        )
        .await;
    assert_eq!(
        done.body["usage"],
        json!({"live_ms": 5_000, "in_progress": false})
    );
}

#[tokio::test]
async fn detail_of_a_preparing_stream() {
    let api = TestApp::new().await;
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
    assert_eq!(r.body["usage"], json!({"live_ms": 0, "in_progress": false}));
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
        hosting_domain::Scope::StreamsRead,
    )
    .await
    .unwrap();
    api.set_failing().await;
    let err = hosting_app::service::streams::get(&api.runtime.app, &caller, id.parse().unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "not_found");
}
