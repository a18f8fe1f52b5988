//! The shows service driven directly: scheduling, the reminder once, a start refused by the
//! concurrency limit, the order of checks, a cancelled show never starting.

use std::sync::Arc;

use chrono::TimeDelta;
use hosting_app::service::shows;
use hosting_domain::account::{self, KeyEnvironment};
use hosting_domain::show::ShowStatus;
use hosting_domain::{Caller, EventType};
use serde_json::{Map, Value, json};

use crate::common::*;

pub(super) async fn caller(api: &TestApp, raw: &str) -> Caller {
    let app = &api.runtime.app;
    let hash = account::key_hash_text(&account::key_digest(raw));
    let key = app.accounts().find_api_key(&hash).await.unwrap().unwrap();
    let brand = app
        .accounts()
        .get_brand(&key.brand_id)
        .await
        .unwrap()
        .unwrap();
    Caller {
        environment: account::parse_key(raw).unwrap_or(KeyEnvironment::Test),
        brand: Arc::new(brand),
        key: Arc::new(key),
    }
}

fn body(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn show_body(api: &TestApp, minutes_ahead: i64) -> Map<String, Value> {
    body(json!({
        "creator_id": "avt_ava000000001", "product_name": "Glow Serum", "platform": "tiktok",
        "duration_minutes": 30,
        "starts_at": (api.now() + TimeDelta::minutes(minutes_ahead)).to_rfc3339(),
        "remind_minutes_before": 10,
    }))
}

const LEAD: TimeDelta = TimeDelta::seconds(60);

#[tokio::test]
async fn a_test_show_is_scheduled_reminded_and_started_once() {
    let api = TestApp::new().await;
    let app = &api.runtime.app;
    let caller = caller(&api, &Keys::test_a()).await;
    let answer = shows::schedule(app, &caller, &show_body(&api, 60), None, LEAD)
        .await
        .unwrap();
    assert_eq!(answer.stored.status, 201);
    let created: Value = serde_json::from_str(&answer.stored.body).unwrap();
    let id = created["show_id"].as_str().unwrap().to_owned();
    assert_eq!(created["status"], "scheduled");
    assert_eq!(created["test"], true);
    assert_eq!(
        answer.stored.location.as_deref(),
        Some(format!("/api/v1/shows/{id}").as_str())
    );

    // The reminder, once, at its moment.
    api.advance(TimeDelta::minutes(50));
    shows::sweep(app).await.unwrap();
    shows::sweep(app).await.unwrap();
    let reminders = api
        .emitted_events()
        .await
        .into_iter()
        .filter(|e| e.event_type == EventType::ShowReminder)
        .count();
    assert_eq!(reminders, 1);

    // The start: two sweeps racing start one stream.
    api.advance(TimeDelta::minutes(10));
    let (a, b) = tokio::join!(shows::sweep(app), shows::sweep(app));
    assert_eq!(a.unwrap() + b.unwrap(), 1);
    let started = shows::get(app, &caller, &id).await.unwrap();
    assert_eq!(started.status, ShowStatus::Started);
    let stream_id = started.stream_id.unwrap();
    let stream = app.streams().get_stream(stream_id).await.unwrap().unwrap();
    assert!(stream.test);
    let events = api.emitted_events().await;
    let show_started: Vec<_> = events
        .iter()
        .filter(|e| e.event_type == EventType::ShowStarted)
        .collect();
    assert_eq!(show_started.len(), 1);
    let body: Value = serde_json::from_str(&show_started[0].body).unwrap();
    assert_eq!(body["data"]["stream"]["stream_id"], stream_id.to_string());
    // Not cancellable once started.
    assert!(shows::cancel(app, &caller, &id).await.is_err());
}

#[tokio::test]
async fn a_start_refused_by_the_concurrency_limit_fails_the_show_with_that_error() {
    let api = TestApp::new().await;
    let app = &api.runtime.app;
    let caller = caller(&api, &Keys::test_a()).await;
    let answer = shows::schedule(app, &caller, &show_body(&api, 5), None, LEAD)
        .await
        .unwrap();
    let id = serde_json::from_str::<Value>(&answer.stored.body).unwrap()["show_id"]
        .as_str()
        .unwrap()
        .to_owned();
    for _ in 0..3 {
        api.start_test_stream(&Keys::test_a()).await;
    }
    api.advance(TimeDelta::minutes(5));
    shows::sweep(app).await.unwrap();
    let failed = shows::get(app, &caller, &id).await.unwrap();
    assert_eq!(failed.status, ShowStatus::Failed);
    assert_eq!(failed.error.unwrap().code, "concurrency_limit");
    assert_eq!(failed.stream_id, None);
}

#[tokio::test]
async fn checks_come_in_order_and_a_cancelled_show_never_starts() {
    let api = TestApp::new().await;
    let app = &api.runtime.app;
    let caller = caller(&api, &Keys::test_a()).await;
    let missing = shows::schedule(
        app,
        &caller,
        &body(json!({"platform": "tiktok"})),
        None,
        LEAD,
    )
    .await
    .unwrap_err();
    assert_eq!(
        missing.message(),
        "Missing required fields: creator_id, product_name, starts_at."
    );
    let mut soon = show_body(&api, 0);
    soon.insert("starts_at".into(), api.now().to_rfc3339().into());
    let err = shows::schedule(app, &caller, &soon, None, LEAD)
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "invalid_fields");
    let answer = shows::schedule(app, &caller, &show_body(&api, 5), None, LEAD)
        .await
        .unwrap();
    let id = serde_json::from_str::<Value>(&answer.stored.body).unwrap()["show_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let cancelled = shows::cancel(app, &caller, &id).await.unwrap();
    assert_eq!(cancelled.status, ShowStatus::Cancelled);
    api.advance(TimeDelta::minutes(10));
    assert_eq!(shows::sweep(app).await.unwrap(), 0);
    assert_eq!(
        shows::get(app, &caller, &id).await.unwrap().status,
        ShowStatus::Cancelled
    );
}

#[tokio::test]
async fn the_endpoints_schedule_read_change_and_cancel_a_show() {
    let api = TestApp::new().await;
    let r = api
        .post(
            "/shows",
            &Keys::test_a(),
            Value::Object(show_body(&api, 60)),
        )
        .await;
    r.assert_status(201);
    let id = r.body["show_id"].as_str().unwrap().to_owned();
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/shows/{id}").as_str())
    );
    let got = api.get(&format!("/shows/{id}"), &Keys::test_a()).await;
    got.assert_status(200);
    assert_eq!(got.body, r.body);
    // Another brand's is absent, as is an id not in form.
    api.get(&format!("/shows/{id}"), &Keys::test_b())
        .await
        .assert_error(404, "not_found");
    api.get("/shows/nope", &Keys::test_a())
        .await
        .assert_error(404, "not_found");
    let list = api.get("/shows?limit=5", &Keys::test_a()).await;
    list.assert_status(200);
    assert_eq!(list.body["total"], 1);
    assert_eq!(list.body["shows"][0]["show_id"], id.as_str());
    let changed = api
        .call(
            "PATCH",
            &format!("/shows/{id}"),
            Some(&Keys::test_a()),
            Some(json!({"product_name": "Night Cream", "remind_minutes_before": null})),
        )
        .await;
    changed.assert_status(200);
    assert_eq!(changed.body["stream"]["product_name"], "Night Cream");
    assert_eq!(changed.body["remind_minutes_before"], 10);
    let cancelled = api.delete(&format!("/shows/{id}"), &Keys::test_a()).await;
    cancelled.assert_status(200);
    assert_eq!(cancelled.body["status"], "cancelled");
    api.delete(&format!("/shows/{id}"), &Keys::test_a())
        .await
        .assert_error(404, "not_found");
}

#[tokio::test]
async fn the_test_helper_starts_a_scheduled_test_show_now_and_refuses_the_rest() {
    let api = TestApp::new().await;
    let r = api
        .post(
            "/shows",
            &Keys::test_a(),
            Value::Object(show_body(&api, 60)),
        )
        .await;
    let id = r.body["show_id"].as_str().unwrap().to_owned();
    let path = format!("/test_helpers/shows/{id}/start");
    // A live key, another brand's key, an id not in form: not found.
    api.call("POST", &path, Some(&Keys::live_a()), None)
        .await
        .assert_error(404, "not_found");
    api.call("POST", &path, Some(&Keys::test_b()), None)
        .await
        .assert_error(404, "not_found");
    api.call(
        "POST",
        "/test_helpers/shows/nope/start",
        Some(&Keys::test_a()),
        None,
    )
    .await
    .assert_error(404, "not_found");
    let started = api.call("POST", &path, Some(&Keys::test_a()), None).await;
    started.assert_status(200);
    assert_eq!(started.body["status"], "started");
    let stream_id = started.body["stream_id"].as_str().unwrap().to_owned();
    let stream = api
        .get(&format!("/streams/{stream_id}"), &Keys::test_a())
        .await;
    stream.assert_status(200);
    assert_eq!(stream.body["status"], "live");
    // Once: no longer scheduled.
    api.call("POST", &path, Some(&Keys::test_a()), None)
        .await
        .assert_error(404, "not_found");
}
