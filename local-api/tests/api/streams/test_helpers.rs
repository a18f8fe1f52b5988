//! Test helpers (docs/test-helpers.md): a test key drives its live test stream through
//! viewers, the host leaving and a provider failure, each one conditional transition that
//! races every other; and every refusal in the pipeline's order.

use chrono::Duration;
use serde_json::{Value, json};

use crate::common::*;

fn viewers(id: &str) -> String {
    format!("/test_helpers/streams/{id}/viewers")
}

fn finish(id: &str) -> String {
    format!("/test_helpers/streams/{id}/finish")
}

fn fail(id: &str) -> String {
    format!("/test_helpers/streams/{id}/fail")
}

#[tokio::test]
async fn viewers_set_the_count_that_detail_list_and_analytics_show_at_once() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    for count in [42, 0, 1_000_000, 7] {
        let r = api
            .post(&viewers(&id), &Keys::test_a(), json!({"count": count}))
            .await;
        r.assert_status(200);
        assert_eq!(r.body["stream_id"], id.as_str());
        assert_eq!(r.body["status"], "live");
        assert_eq!(r.body["viewer_count"], count);
        assert!(r.body.get("end_reason").is_none());
    }
    let detail = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(detail.body["viewer_count"], 7);
    let list = api.get("/streams", &Keys::test_a()).await;
    assert_eq!(list.body["streams"][0]["viewer_count"], 7);
    let analytics = api
        .get(&format!("/analytics?stream_id={id}"), &Keys::test_a())
        .await;
    analytics.assert_status(200);
    assert_eq!(analytics.body["total_viewers"], 7);
    assert_eq!(analytics.body["live_now"], 1);
    assert_eq!(analytics.body["streams"][0]["viewer_count"], 7);
    // Setting viewers is no transition: no event.
    assert_eq!(api.events_of(&id).await, ["stream.started"]);

    // The count a finished stream had stays its final figure.
    api.post(&finish(&id), &Keys::test_a(), json!({}))
        .await
        .assert_status(200);
    api.post(&viewers(&id), &Keys::test_a(), json!({"count": 9}))
        .await
        .assert_error(404, "not_found");
    let analytics = api.get("/analytics?period=24h", &Keys::test_a()).await;
    assert_eq!(analytics.body["total_viewers"], 7);
    assert_eq!(analytics.body["live_now"], 0);
}

#[tokio::test]
async fn finish_ends_the_stream_as_if_the_host_had_left() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    api.advance(Duration::minutes(3));
    let r = api.post(&finish(&id), &Keys::test_a(), json!({})).await;
    r.assert_status(200);
    assert_eq!(r.body["status"], "ended");
    assert_eq!(r.body["end_reason"], "host_left");
    assert_eq!(r.body["test"], true);
    assert_eq!(
        r.body["ended_at"],
        api.now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    );
    api.assert_end_reason(&Keys::test_a(), &id, "ended", Some("host_left"))
        .await;
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    assert_eq!(api.active_streams("brand_a").await, 0);
    assert!(
        api.timers().pending().is_empty(),
        "its duration timer is gone"
    );
    // Final: neither helper nor DELETE finds it live again.
    for path in [finish(&id), fail(&id)] {
        api.post(&path, &Keys::test_a(), json!({}))
            .await
            .assert_error(404, "not_found");
    }
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_error(404, "not_found");
    let analytics = api.get("/analytics?period=24h", &Keys::test_a()).await;
    assert_eq!(analytics.body["total_minutes"], 3);
}

#[tokio::test]
async fn fail_ends_the_stream_in_error_as_a_provider_failure() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    api.post(&viewers(&id), &Keys::test_a(), json!({"count": 5}))
        .await
        .assert_status(200);
    let r = api.post(&fail(&id), &Keys::test_a(), json!({})).await;
    r.assert_status(200);
    assert_eq!(r.body["status"], "error");
    assert_eq!(r.body["end_reason"], "provider_error");
    assert!(r.body["ended_at"].is_string());
    assert_eq!(r.body["viewer_count"], 5);
    api.assert_end_reason(&Keys::test_a(), &id, "error", Some("provider_error"))
        .await;
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.error"]);
    assert_eq!(api.active_streams("brand_a").await, 0);
    // The slot is free: three more starts fit.
    for _ in 0..3 {
        api.start_test_stream(&Keys::test_a()).await;
    }
}

#[tokio::test]
async fn finish_and_fail_ignore_any_body() {
    let api = TestApp::new().await;
    for (path, status) in [(finish as fn(&str) -> String, "ended"), (fail, "error")] {
        let id = api.start_test_stream(&Keys::test_a()).await;
        let r = api
            .call_raw("POST", &path(&id), Some(&Keys::test_a()), Some("{not json"))
            .await;
        r.assert_status(200);
        assert_eq!(r.body["status"], status);
    }
    let id = api.start_test_stream(&Keys::test_a()).await;
    api.call_raw("POST", &finish(&id), Some(&Keys::test_a()), None)
        .await
        .assert_status(200);
}

#[tokio::test]
async fn viewer_bodies_are_checked_before_the_stream() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    let missing = [
        "",
        "{not json",
        "[]",
        "3",
        "\"count\"",
        "{}",
        r#"{"count": null}"#,
    ];
    let invalid = [
        "-1",
        "1.5",
        "1e3",
        "1.0",
        "\"3\"",
        "true",
        "1000001",
        "[1]",
        "{}",
        "18446744073709551616",
    ];
    let cases = missing
        .iter()
        .map(|body| (body.to_string(), "missing_fields"))
        .chain(
            invalid
                .iter()
                .map(|count| (format!(r#"{{"count": {count}}}"#), "invalid_fields")),
        );
    for (body, code) in cases {
        // On its own stream, an absent one and a malformed id alike: the body decides first.
        for target in [id.as_str(), ABSENT_ID, "not-a-uuid"] {
            let r = api
                .call_raw("POST", &viewers(target), Some(&Keys::test_a()), Some(&body))
                .await;
            assert_eq!(
                (r.status.as_u16(), r.code()),
                (400, code),
                "{body} on {target}"
            );
        }
        // A live key's body is checked before the live key is turned away.
        let r = api
            .call_raw("POST", &viewers(&id), Some(&Keys::live_a()), Some(&body))
            .await;
        assert_eq!(
            (r.status.as_u16(), r.code()),
            (400, code),
            "{body} with a live key"
        );
    }
    assert_eq!(
        api.get(&format!("/streams/{id}"), &Keys::test_a())
            .await
            .body["viewer_count"],
        0
    );
}

/// Every helper with a body it accepts.
fn helpers(id: &str) -> [(String, Value); 3] {
    [
        (viewers(id), json!({"count": 3})),
        (finish(id), json!({})),
        (fail(id), json!({})),
    ]
}

#[tokio::test]
async fn anything_but_a_live_test_stream_of_a_test_key_is_not_found() {
    let api = TestApp::new().await;
    let now = api.now();
    let live_key_stream = "40000000-0000-4000-8000-000000000001";
    api.seed(json!({"streams": [{
        "id": live_key_stream, "brand_id": "brand_a", "status": "live", "platform": "kick",
        "creator_id": CREATOR_AVA, "product_name": "P", "source": "api", "room_name": "r-live",
        "test": false, "created_at": now.to_rfc3339(), "started_at": now.to_rfc3339()}]}))
        .await;
    let own = api.start_test_stream(&Keys::test_a()).await;
    let foreign = api.start_test_stream(&Keys::test_b()).await;
    let ended = api.start_test_stream(&Keys::test_a()).await;
    api.delete(&format!("/streams/{ended}"), &Keys::test_a())
        .await
        .assert_status(200);

    let cases = [
        (
            Keys::live_a(),
            own.as_str(),
            "a live key, even on a test stream",
        ),
        (
            Keys::test_a(),
            live_key_stream,
            "a stream started with a live key",
        ),
        (
            Keys::test_a(),
            foreign.as_str(),
            "another brand's test stream",
        ),
        (Keys::test_a(), ABSENT_ID, "no such stream"),
        (Keys::test_a(), "not-a-uuid", "a malformed id"),
        (
            Keys::test_a(),
            ended.as_str(),
            "a test stream that is not live",
        ),
    ];
    for (key, id, case) in cases {
        for (path, body) in helpers(id) {
            let r = api.post(&path, &key, body).await;
            assert_eq!(
                (r.status.as_u16(), r.code()),
                (404, "not_found"),
                "{case}: {path}"
            );
        }
    }
    // Nothing changed.
    assert_eq!(api.events_of(&own).await, ["stream.started"]);
    assert_eq!(api.events_of(&foreign).await, ["stream.started"]);
    let seeded = api
        .get(&format!("/streams/{live_key_stream}"), &Keys::live_a())
        .await;
    assert_eq!(seeded.body["status"], "live");
    // A test key of the same brand other than the one that started it may drive it.
    api.post(&finish(&own), &Keys::test_a2(), json!({}))
        .await
        .assert_status(200);
}

#[tokio::test]
async fn the_pipeline_comes_first_a_free_live_key_is_payment_required() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_free()).await;
    for (path, body) in helpers(&id) {
        api.post(&path, &Keys::live_free(), body.clone())
            .await
            .assert_error(402, "plan_required");
        // Unauthenticated and unscoped before the body or the stream.
        api.call_raw("POST", &path, None, Some("{not json"))
            .await
            .assert_error(401, "unauthorized");
        api.call_raw(
            "POST",
            &path,
            Some(&Keys::only("streams:read")),
            Some("{not json"),
        )
        .await
        .assert_error(403, "insufficient_scope");
    }
    // The free plan's test key may use them.
    api.post(&finish(&id), &Keys::test_free(), json!({}))
        .await
        .assert_status(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn finish_fail_and_delete_racing_make_one_transition_and_one_event() {
    let api = std::sync::Arc::new(TestApp::new().await);
    for _ in 0..8 {
        let id = api.start_test_stream(&Keys::test_a()).await;
        let racers = [
            ("POST", finish(&id)),
            ("POST", fail(&id)),
            ("DELETE", format!("/streams/{id}")),
            ("POST", viewers(&id)),
        ];
        let tasks: Vec<_> = racers
            .into_iter()
            .map(|(method, path)| {
                let api = api.clone();
                tokio::spawn(async move {
                    let body = path.ends_with("/viewers").then(|| json!({"count": 11}));
                    let r = api.call(method, &path, Some(&Keys::test_a()), body).await;
                    (path, r.status.as_u16(), r.body)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for task in tasks {
            let (path, status, body) = task.await.unwrap();
            assert!(matches!(status, 200 | 404), "{path}: {status} {body}");
            if status == 200 && !path.ends_with("/viewers") {
                winners.push(path);
            }
        }
        assert_eq!(winners.len(), 1, "exactly one ending wins: {winners:?}");
        // Both events carry the test clock's one instant, so their order is not asserted.
        let mut events = api.events_of(&id).await;
        events.sort();
        let (status, reason) = match winners[0].rsplit('/').next() {
            Some("finish") => ("ended", "host_left"),
            Some("fail") => ("error", "provider_error"),
            _ => ("ended", "requested"),
        };
        assert_eq!(
            events,
            [format!("stream.{status}"), "stream.started".to_owned()]
        );
        api.assert_end_reason(&Keys::test_a(), &id, status, Some(reason))
            .await;
        assert_eq!(api.active_streams("brand_a").await, 0);
    }
}
