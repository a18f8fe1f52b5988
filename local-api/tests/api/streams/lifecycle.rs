//! No stream stays active past its deadline, whatever is lost on the way (ARCHITECTURE.md,
//! "Reliability on AWS"): timers that fire early are armed again, the sweep ends streams whose timer was
//! lost, a room provider that hangs is cut off, and a provider event whose handling failed is
//! applied when it is sent again. On both backends.

use chrono::Duration;
use hosting_domain::TimerKind;
use hosting_domain::ports::Timer;
use serde_json::{Value, json};

use crate::common::fake_livekit::{FakeLiveKit, agent_joined, signed_webhook};
use crate::common::*;

async fn status(api: &TestApp, id: &str) -> Value {
    api.get(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .body["status"]
        .clone()
}

fn stream_id(id: &str) -> uuid::Uuid {
    id.parse().unwrap()
}

#[tokio::test]
async fn a_timer_fired_early_changes_nothing_and_fires_again_at_its_due_time() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    let due_at = api.now() + Duration::minutes(30);
    let timer = Timer {
        stream_id: stream_id(&id),
        kind: TimerKind::DurationEnd,
        due_at,
    };
    assert_eq!(api.timers().pending(), [timer]);

    // EventBridge Scheduler runs an `at()` schedule anywhere in its minute: 40 s early here.
    api.advance(Duration::minutes(29) + Duration::seconds(20));
    let fired = timers::handle(&api.runtime.app, timers::Invocation::Timer(timer))
        .await
        .unwrap();
    assert_eq!(fired.changed, 0);
    assert_eq!(status(&api, &id).await, "live");
    assert_eq!(api.events_of(&id).await, ["stream.started"]);
    assert_eq!(
        api.timers().pending(),
        [timer],
        "armed again for its due time"
    );

    // At its due time it ends the stream.
    assert_eq!(api.advance_and_fire(Duration::seconds(39)).await, 0);
    assert_eq!(api.advance_and_fire(Duration::seconds(1)).await, 1);
    assert_eq!(status(&api, &id).await, "ended");
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    api.assert_end_reason(&Keys::test_a(), &id, "ended", Some("duration_elapsed"))
        .await;
}

#[tokio::test]
async fn the_sweep_ends_a_test_stream_whose_timer_was_lost_at_its_deadline() {
    let api = TestApp::new().await;
    let r = api
        .start(&Keys::test_a(), json!({"duration_minutes": 1}))
        .await;
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    // The timer dies with the process that held it.
    api.timers().take_due(api.now() + Duration::days(1));
    let app = &api.runtime.app;

    api.advance(Duration::seconds(59));
    assert_eq!(
        hosting_app::service::timers::sweep(app).await.unwrap(),
        0,
        "not yet due"
    );
    assert_eq!(status(&api, &id).await, "live");

    api.advance(Duration::seconds(2));
    assert_eq!(hosting_app::service::timers::sweep(app).await.unwrap(), 1);
    let detail = api
        .get(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .body;
    assert_eq!(detail["status"], "ended");
    assert!(detail["ended_at"].is_string());
    api.assert_end_reason(&Keys::test_a(), &id, "ended", Some("duration_elapsed"))
        .await;
    assert_eq!(api.active_streams("brand_a").await, 0);
    // Once: a second sweep, or the timer turning up after all, changes nothing.
    assert_eq!(hosting_app::service::timers::sweep(app).await.unwrap(), 0);
    let late = Timer {
        stream_id: stream_id(&id),
        kind: TimerKind::DurationEnd,
        due_at: api.now(),
    };
    assert!(
        !hosting_app::service::timers::fire(app, &late)
            .await
            .unwrap()
    );
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
}

#[tokio::test]
async fn the_sweep_ends_a_preparing_stream_whose_timeout_was_lost() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let r = api.start(&Keys::live_a(), json!({})).await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    api.timers().take_due(api.now() + Duration::days(1));
    let app = &api.runtime.app;

    api.advance(Duration::minutes(5) - Duration::seconds(1));
    // Its dispatch retry is due too: one, whose next would fall after the timeout.
    assert_eq!(hosting_app::service::timers::sweep(app).await.unwrap(), 1);
    assert_eq!(hosting_app::service::timers::sweep(app).await.unwrap(), 0);
    api.advance(Duration::seconds(2));
    assert_eq!(hosting_app::service::timers::sweep(app).await.unwrap(), 1);
    assert_eq!(status(&api, &id).await, "error");
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
    api.assert_end_reason(&Keys::live_a(), &id, "error", Some("preparing_timeout"))
        .await;
    assert_eq!(api.active_streams("brand_a").await, 0);
    assert_eq!(
        fake.methods().last().map(String::as_str),
        Some("livekit.RoomService/DeleteRoom"),
        "its room is deleted"
    );
    // The slots are free again: three new starts fit, a fourth does not.
    for _ in 0..3 {
        api.start_test_stream(&Keys::test_a()).await;
    }
    api.start(&Keys::test_a(), json!({}))
        .await
        .assert_error(429, "concurrency_limit");
}

#[tokio::test]
async fn a_room_provider_that_hangs_is_cut_off_and_the_start_is_launch_failed() {
    let fake = FakeLiveKit::start().await;
    fake.hang("livekit.RoomService/CreateRoom");
    let api = TestApp::builder()
        .with_livekit(&fake)
        .with_launch_timeout_secs(0.5)
        .await;
    let started = std::time::Instant::now();
    api.start(&Keys::live_a(), json!({}))
        .await
        .assert_error(502, "launch_failed");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let id = api.get("/streams", &Keys::live_a()).await.body["streams"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(status(&api, &id).await, "error");
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
    assert_eq!(api.active_streams("brand_a").await, 0);
    assert!(api.timers().pending().is_empty(), "its timer is cancelled");
}

#[tokio::test]
async fn a_provider_event_whose_handling_failed_on_the_store_is_applied_when_resent() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": 30}))
        .await;
    let (id, room) = (
        r.body["stream_id"].as_str().unwrap().to_owned(),
        r.body["room_name"].as_str().unwrap().to_owned(),
    );
    let joined = signed_webhook(&agent_joined(&room, "EV_agent_joined"));

    api.store_outage(true).await;
    api.post_livekit(&joined)
        .await
        .assert_error(500, "db_error");
    api.store_outage(false).await;
    assert_eq!(status(&api, &id).await, "preparing");

    // LiveKit sends it again.
    api.post_livekit(&joined).await.assert_status(200);
    assert_eq!(status(&api, &id).await, "live");
    // Sent once more, it is a duplicate: nothing changes twice.
    api.post_livekit(&joined).await.assert_status(200);
    assert_eq!(api.events_of(&id).await, ["stream.started"]);
    // Live: its duration's end and its host's next read-back, nothing of preparing.
    let mut kinds: Vec<TimerKind> = api.timers().pending().iter().map(|t| t.kind).collect();
    kinds.sort();
    assert_eq!(kinds, [TimerKind::DurationEnd, TimerKind::HostReadback]);
}
