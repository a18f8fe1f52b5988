//! A show's start: by its timer at `starts_at`, by the sweep when the timer was lost; once
//! whatever duplicate firings and racing sweeps do; refused by a plan change or a failed
//! launch with the code and message `POST /streams` would have answered; a starter that died
//! after its claim taken over once; the reminder once, and never when its moment had passed.

use hosting_app::service::{shows, timers};
use hosting_domain::TimerKind;
use hosting_domain::ports::Timer;

use super::*;

fn start_timer(id: &str, due_at: chrono::DateTime<chrono::Utc>) -> Timer {
    Timer {
        stream_id: uuid_of(id),
        kind: TimerKind::ShowStart,
        due_at,
    }
}

#[tokio::test]
async fn a_show_starts_at_its_time_by_its_timer_with_its_event() {
    let api = TestApp::new().await;
    let id = scheduled(
        &api,
        &Keys::test_a(),
        json!({"starts_at": at(&api, 5), "script": "Open with the serum."}),
    )
    .await;
    api.advance_and_fire(TimeDelta::minutes(4)).await;
    assert_eq!(
        show(&api, &Keys::test_a(), &id).await["status"],
        "scheduled"
    );
    api.advance_and_fire(TimeDelta::minutes(1)).await;
    let started = show(&api, &Keys::test_a(), &id).await;
    assert_eq!(started["status"], "started");
    assert_eq!(started["error"], Value::Null);
    let stream_id = started["stream_id"].as_str().unwrap();
    let stream = api
        .get(&format!("/streams/{stream_id}"), &Keys::test_a())
        .await;
    stream.assert_status(200);
    assert_eq!(stream.body["test"], true);
    assert_eq!(stream.body["product_name"], "Glow Serum");
    let events = show_events(&api, "show.started", &id).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"]["show"], started);
    assert_eq!(events[0]["data"]["stream"]["stream_id"], stream_id);
    // The stream's own event as for POST /streams, then the show's, which names it.
    assert_eq!(
        api.events_of(stream_id).await,
        ["stream.started", "show.started"]
    );
}

#[tokio::test]
async fn a_lost_timer_is_covered_by_the_sweep() {
    let api = TestApp::new().await;
    let id = scheduled(&api, &Keys::test_a(), json!({"starts_at": at(&api, 5)})).await;
    let app = &api.runtime.app;
    app.timers
        .cancel(uuid_of(&id), TimerKind::ShowStart)
        .await
        .unwrap();
    assert_eq!(api.advance_and_fire(TimeDelta::minutes(5)).await, 0);
    assert_eq!(
        show(&api, &Keys::test_a(), &id).await["status"],
        "scheduled"
    );
    assert_eq!(shows::sweep(app).await.unwrap(), 1);
    assert_eq!(show(&api, &Keys::test_a(), &id).await["status"], "started");
    assert_eq!(shows::sweep(app).await.unwrap(), 0);
}

#[tokio::test]
async fn duplicate_firings_and_racing_sweeps_start_one_stream() {
    let api = TestApp::new().await;
    let id = scheduled(&api, &Keys::test_a(), json!({"starts_at": at(&api, 5)})).await;
    api.advance(TimeDelta::minutes(5));
    let app = &api.runtime.app;
    let timer = start_timer(&id, api.now());
    let firings = (0..4).map(|_| {
        let app = app.clone();
        tokio::spawn(async move { timers::fire(&app, &timer).await.unwrap() })
    });
    let sweeps = (0..4).map(|_| {
        let app = app.clone();
        tokio::spawn(async move { shows::sweep(&app).await.unwrap() > 0 })
    });
    let mut changed = 0;
    for handle in firings.chain(sweeps).collect::<Vec<_>>() {
        changed += usize::from(handle.await.unwrap());
    }
    assert_eq!(changed, 1, "one start");
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 1);
    assert_eq!(show_events(&api, "show.started", &id).await.len(), 1);
    // Fired again later: nothing more.
    assert!(!timers::fire(app, &timer).await.unwrap());
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 1);
}

#[tokio::test]
async fn a_show_starts_though_the_key_that_made_it_was_revoked_since() {
    let api = TestApp::new().await;
    let id = scheduled(&api, &Keys::test_a2(), json!({"starts_at": at(&api, 5)})).await;
    api.seed(
        json!({"api_keys": [{"key": Keys::test_a2(), "brand_id": "brand_a",
                                  "scopes": ALL_SCOPES, "revoked": true}]}),
    )
    .await;
    api.advance_and_fire(TimeDelta::minutes(5)).await;
    let started = show(&api, &Keys::test_a(), &id).await;
    assert_eq!(started["status"], "started");
    assert_eq!(started["test"], true);
}

#[tokio::test]
async fn a_plan_change_fails_the_show_with_plan_required() {
    let api = TestApp::new().await;
    let id = scheduled(&api, &Keys::live_a(), json!({"starts_at": at(&api, 5)})).await;
    assert_eq!(show(&api, &Keys::live_a(), &id).await["test"], false);
    // The brand moves to the free plan before the show's time.
    api.seed(
        json!({"brands": [{"id": "brand_a", "name": "brand_a", "plan": "free",
                                "vertical": "live-commerce"}]}),
    )
    .await;
    api.advance_and_fire(TimeDelta::minutes(5)).await;
    let failed = show(&api, &Keys::test_a(), &id).await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["stream_id"], Value::Null);
    let expected = api.start(&Keys::live_free(), json!({})).await;
    expected.assert_error(402, "plan_required");
    assert_eq!(failed["error"]["code"], "plan_required");
    assert_eq!(
        failed["error"]["message"],
        expected.body["error"]["message"]
    );
    let events = show_events(&api, "show.failed", &id).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"]["show"], failed);
    assert!(events[0]["data"].get("stream").is_none());
}

#[tokio::test]
async fn a_failed_launch_fails_the_show_with_launch_failed() {
    // No room provider: a live start records the stream, then its launch fails.
    let api = TestApp::new().await;
    let id = scheduled(&api, &Keys::live_a(), json!({"starts_at": at(&api, 5)})).await;
    api.advance_and_fire(TimeDelta::minutes(5)).await;
    let failed = show(&api, &Keys::live_a(), &id).await;
    assert_eq!(failed["status"], "failed");
    let expected = api.start(&Keys::live_a(), json!({})).await;
    expected.assert_error(502, "launch_failed");
    assert_eq!(failed["error"]["code"], "launch_failed");
    assert_eq!(
        failed["error"]["message"],
        expected.body["error"]["message"]
    );
    // Its stream, in error, is in the history as POST /streams would have left it; the show
    // names no stream, since none started.
    assert_eq!(failed["stream_id"], Value::Null);
    let errors = api.get("/streams?status=error", &Keys::live_a()).await;
    assert_eq!(errors.body["total"], 2);
    assert_eq!(show_events(&api, "show.failed", &id).await.len(), 1);
}

#[tokio::test]
async fn a_starter_that_died_after_its_claim_is_taken_over_once_by_the_sweep() {
    let api = TestApp::new().await;
    let id = scheduled(&api, &Keys::test_a(), json!({"starts_at": at(&api, 5)})).await;
    api.advance(TimeDelta::minutes(5));
    let app = &api.runtime.app;
    // A starter claims the show, then dies before making its stream.
    let claimed = app
        .store
        .claim_show(
            "brand_a",
            uuid_of(&id),
            api.now(),
            api.now() + TimeDelta::minutes(2),
        )
        .await
        .unwrap()
        .expect("claimed");
    assert_eq!(claimed.stream_id, None);
    assert_eq!(show(&api, &Keys::test_a(), &id).await["status"], "starting");
    // While its claim holds, neither the timer nor the sweep starts it.
    assert!(
        !timers::fire(app, &start_timer(&id, api.now()))
            .await
            .unwrap()
    );
    assert_eq!(shows::sweep(app).await.unwrap(), 0);
    // Once the claim ran out, the sweep takes it over: one stream.
    api.advance(TimeDelta::minutes(2));
    assert_eq!(shows::sweep(app).await.unwrap(), 1);
    let started = show(&api, &Keys::test_a(), &id).await;
    assert_eq!(started["status"], "started");
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 1);
    assert_eq!(shows::sweep(app).await.unwrap(), 0);
    assert_eq!(show_events(&api, "show.started", &id).await.len(), 1);
}

#[tokio::test]
async fn the_reminder_is_sent_once_at_its_moment_and_never_when_that_had_passed() {
    let api = TestApp::new().await;
    let reminded = scheduled(
        &api,
        &Keys::test_a(),
        json!({"starts_at": at(&api, 30), "remind_minutes_before": 10}),
    )
    .await;
    // Its moment (5 minutes before) is before now + 2 minutes: already passed at scheduling.
    let too_late = scheduled(
        &api,
        &Keys::test_a(),
        json!({"starts_at": at(&api, 2), "remind_minutes_before": 5}),
    )
    .await;
    api.advance_and_fire(TimeDelta::minutes(19)).await;
    assert!(
        show_events(&api, "show.reminder", &reminded)
            .await
            .is_empty()
    );
    api.advance_and_fire(TimeDelta::minutes(1)).await;
    shows::sweep(&api.runtime.app).await.unwrap();
    api.advance_and_fire(TimeDelta::minutes(1)).await;
    shows::sweep(&api.runtime.app).await.unwrap();
    let events = show_events(&api, "show.reminder", &reminded).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"]["show"]["status"], "scheduled");
    assert_eq!(events[0]["data"]["show"]["show_id"], reminded.as_str());
    assert!(
        show_events(&api, "show.reminder", &too_late)
            .await
            .is_empty()
    );
    assert_eq!(
        show(&api, &Keys::test_a(), &too_late).await["status"],
        "started"
    );
}

#[tokio::test]
async fn the_shows_events_reach_the_webhooks_that_select_them_at_registration_or_by_patch() {
    use crate::common::receiver::{Behaviour, Receiver};
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    register_webhook(
        &api,
        &Keys::test_a(),
        &format!("{}/registered", receiver.base),
        json!(["show.started", "show.failed", "show.reminder"]),
    )
    .await;
    let (patched, _) = register_webhook(
        &api,
        &Keys::test_a(),
        &format!("{}/patched", receiver.base),
        json!(["stream.ended"]),
    )
    .await;
    let r = api
        .call(
            "PATCH",
            &format!("/webhooks/{patched}"),
            Some(&Keys::test_a()),
            Some(json!({"events": ["show.started"]})),
        )
        .await;
    r.assert_status(200);
    assert_eq!(r.body["events"], json!(["show.started"]));
    let id = scheduled(&api, &Keys::test_a(), json!({})).await;
    api.call(
        "POST",
        &format!("/test_helpers/shows/{id}/start"),
        Some(&Keys::test_a()),
        None,
    )
    .await
    .assert_status(200);
    let hits = receiver
        .wait_for(2, std::time::Duration::from_secs(10))
        .await;
    let mut paths: Vec<&str> = hits.iter().map(|hit| hit.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, ["/patched", "/registered"]);
    for hit in &hits {
        assert_eq!(hit.header("x-service-event-type"), "show.started");
        let body: Value = serde_json::from_str(&hit.body).unwrap();
        assert_eq!(body["data"]["show"]["show_id"], id.as_str());
        assert_eq!(body["test"], true);
    }
    // The stream's own stream.started went to neither.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(receiver.hits().len(), 2);
}
