//! `DELETE /streams/{id}` and a test stream's own end: once, whatever races it.

use std::sync::Arc;

use chrono::Duration;
use serde_json::{Value, json};

use crate::common::*;

// ---- DELETE /streams/{id} ---------------------------------------------------------------------

#[tokio::test]
async fn delete_ends_a_live_stream_once() {
    let api = TestApp::new().await;
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
    let api = Arc::new(TestApp::new().await);
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
    let api = TestApp::new().await;
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
