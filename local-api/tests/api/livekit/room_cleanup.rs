//! Nothing outlives its stream (docs/lifecycle.md, "Room cleanup"): on every path that finishes a
//! live stream its room is deleted until LiveKit confirms it gone, whatever LiveKit does meanwhile;
//! a room used again after its stream finished is deleted again; a launch that finishes after its
//! stream did cleans up after itself; and a stream ended at its deadline ends at that deadline,
//! however late the timer or the sweep runs. Against a fake LiveKit speaking the real Twirp
//! protocol, on both backends.

use chrono::Duration;
use serde_json::{Value, json};

use crate::common::fake_livekit::{
    CREATE_DISPATCH, CREATE_ROOM, DELETE_ROOM, FakeLiveKit, agent_joined, signed_webhook,
};
use crate::common::*;

/// The host agent joins: the stream is live.
async fn agent_joins(api: &TestApp, id: &str, room: &str, event_id: &str) {
    api.post_livekit(&signed_webhook(&agent_joined(room, event_id)))
        .await
        .assert_status(200);
    assert_eq!(live_detail(api, id).await["status"], "live");
}

/// Moves the clock on by `by` and runs the deadline sweep (with its room cleanups), as the
/// schedule does.
async fn sweep_after(api: &TestApp, by: Duration) {
    api.advance(by);
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
}

/// How a live stream is finished in each case.
#[derive(Debug, Clone, Copy)]
enum Path {
    /// `DELETE /streams/{id}` of a live stream.
    Delete,
    /// The duration end's timer.
    DurationEnd,
    /// The preparing timeout's timer (the agent never joined).
    PreparingTimeout,
    /// A launch whose room LiveKit made but whose answer was lost: `502 launch_failed`.
    LaunchFailure,
}

/// Finishes a new live stream along `path` while LiveKit refuses `DeleteRoom`; returns the
/// stream id and its room, which still exists.
async fn finish_while_deletion_fails(
    api: &TestApp,
    fake: &FakeLiveKit,
    path: Path,
) -> (String, String) {
    fake.fail(DELETE_ROOM);
    let (id, room) = match path {
        Path::LaunchFailure => {
            // LiveKit made the room, and its answer was lost.
            fake.lose_answers(CREATE_ROOM);
            api.start(&Keys::live_a(), json!({}))
                .await
                .assert_error(502, "launch_failed");
            fake.heal(CREATE_ROOM);
            let id = api.get("/streams", &Keys::live_a()).await.body["streams"][0]["id"]
                .as_str()
                .unwrap()
                .to_owned();
            let room = live_detail(api, &id).await["room_name"]
                .as_str()
                .unwrap()
                .to_owned();
            (id, room)
        }
        _ => {
            let (id, room, _) = start_live(api, 30).await;
            (id, room)
        }
    };
    match path {
        Path::Delete => {
            agent_joins(api, &id, &room, "EV_join").await;
            api.delete(&format!("/streams/{id}"), &Keys::live_a())
                .await
                .assert_status(200);
        }
        Path::DurationEnd => {
            agent_joins(api, &id, &room, "EV_join").await;
            assert_eq!(api.advance_and_fire(Duration::minutes(30)).await, 1);
        }
        Path::PreparingTimeout => {
            assert_eq!(api.advance_and_fire(Duration::minutes(5)).await, 1);
        }
        Path::LaunchFailure => {}
    }
    let status = live_detail(api, &id).await["status"].clone();
    assert!(status == "ended" || status == "error", "{path:?}: {status}");
    assert!(
        fake.rooms().contains(&room),
        "{path:?}: the room is still there"
    );
    (id, room)
}

#[tokio::test]
async fn a_room_whose_deletion_fails_once_is_deleted_by_the_retry_on_every_path() {
    for path in [
        Path::Delete,
        Path::DurationEnd,
        Path::PreparingTimeout,
        Path::LaunchFailure,
    ] {
        let fake = FakeLiveKit::start().await;
        let api = TestApp::builder().with_livekit(&fake).await;
        let (id, room) = finish_while_deletion_fails(&api, &fake, path).await;
        let events = api.events_of(&id).await;
        // LiveKit answers again; the next sweep after the retry's delay deletes the room.
        fake.heal(DELETE_ROOM);
        sweep_after(&api, Duration::seconds(10)).await;
        assert!(!fake.rooms().contains(&room), "{path:?}: deleted on retry");
        // Held until the launch's bound has passed, then done: no more calls after that.
        sweep_after(&api, Duration::minutes(1)).await;
        let calls = fake.count(DELETE_ROOM);
        sweep_after(&api, Duration::minutes(5)).await;
        assert_eq!(
            fake.count(DELETE_ROOM),
            calls,
            "{path:?}: the cleanup is done"
        );
        // The stream itself did not change.
        assert_eq!(api.events_of(&id).await, events, "{path:?}");
    }
}

#[tokio::test]
async fn a_room_whose_deletion_fails_for_minutes_is_retried_until_livekit_answers() {
    for path in [
        Path::Delete,
        Path::DurationEnd,
        Path::PreparingTimeout,
        Path::LaunchFailure,
    ] {
        let fake = FakeLiveKit::start().await;
        let api = TestApp::builder().with_livekit(&fake).await;
        let (_, room) = finish_while_deletion_fails(&api, &fake, path).await;
        // Ten minutes of refusals, swept each minute: every sweep retries it (the delay
        // between retries never exceeds 45 s).
        let before = fake.count(DELETE_ROOM);
        for _ in 0..10 {
            sweep_after(&api, Duration::minutes(1)).await;
        }
        assert!(
            fake.count(DELETE_ROOM) >= before + 10,
            "{path:?}: retried each minute, {} calls",
            fake.count(DELETE_ROOM) - before
        );
        assert!(fake.rooms().contains(&room));
        // Within a minute of LiveKit answering again, the room is gone.
        fake.heal(DELETE_ROOM);
        sweep_after(&api, Duration::minutes(1)).await;
        assert!(
            !fake.rooms().contains(&room),
            "{path:?}: deleted once LiveKit answers"
        );
    }
}

#[tokio::test]
async fn a_late_agent_join_into_a_finished_streams_room_deletes_it_again() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    agent_joins(&api, &id, &room, "EV_join").await;
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    assert!(!fake.rooms().contains(&room));
    let ended = live_detail(&api, &id).await;

    // An agent dispatched late joins: LiveKit creates the room again, and says so.
    fake.join(&room);
    api.post_livekit(&signed_webhook(&agent_joined(&room, "EV_late_join")))
        .await
        .assert_status(200);
    assert!(!fake.rooms().contains(&room), "deleted again at once");
    assert_eq!(
        live_detail(&api, &id).await,
        ended,
        "the stream did not change"
    );
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);

    // The same for a stream that timed out in `preparing`, with LiveKit refusing at first
    // (started on the same clock tick as the first, so placed a millisecond after it).
    let (id, room, _) = start_live(&api, 30).await;
    assert_eq!(api.advance_and_fire(Duration::minutes(6)).await, 1);
    assert_eq!(live_detail(&api, &id).await["status"], "error");
    fake.join(&room);
    fake.fail_next(DELETE_ROOM, 1);
    api.post_livekit(&signed_webhook(&agent_joined(&room, "EV_late_join_2")))
        .await
        .assert_status(200);
    assert!(
        fake.rooms().contains(&room),
        "the first attempt was refused"
    );
    sweep_after(&api, Duration::seconds(5)).await;
    assert!(!fake.rooms().contains(&room), "the retry deleted it");
    assert_eq!(live_detail(&api, &id).await["status"], "error");
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
}

#[tokio::test]
async fn livekit_hanging_on_every_call_answers_launch_failed_in_time_and_the_room_goes_later() {
    // The default launch bound, as in Lambda: the answer must come well inside the streams
    // function's 29 s timeout.
    let fake = FakeLiveKit::start().await;
    for method in [CREATE_ROOM, CREATE_DISPATCH, DELETE_ROOM] {
        fake.hang(method);
    }
    let api = TestApp::builder().with_livekit(&fake).await;
    let started = std::time::Instant::now();
    let r = api.start(&Keys::live_a(), json!({})).await;
    let took = started.elapsed();
    r.assert_error(502, "launch_failed");
    assert!(
        took < std::time::Duration::from_secs(25),
        "answered after {took:?}"
    );
    let id = api.get("/streams", &Keys::live_a()).await.body["streams"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let stream = live_detail(&api, &id).await;
    assert_eq!(stream["status"], "error");
    let room = stream["room_name"].as_str().unwrap().to_owned();
    assert!(
        fake.rooms().contains(&room),
        "LiveKit made the room without answering"
    );
    assert_eq!(api.active_streams("brand_a").await, 0);

    // LiveKit recovers: the pending cleanup deletes the room.
    for method in [CREATE_ROOM, CREATE_DISPATCH, DELETE_ROOM] {
        fake.heal(method);
    }
    sweep_after(&api, Duration::seconds(30)).await;
    assert!(
        !fake.rooms().contains(&room),
        "deleted once LiveKit answers"
    );
}

#[tokio::test]
async fn a_preparing_timeout_while_create_room_is_slow_deletes_the_room_made_afterwards() {
    let fake = FakeLiveKit::start().await;
    // LiveKit makes the room (and takes the dispatch) only after the stream timed out.
    fake.delay(CREATE_ROOM, std::time::Duration::from_millis(1500));
    let api = TestApp::builder().with_livekit(&fake).await;
    let key = Keys::live_a();
    let (start, ()) = tokio::join!(api.start(&key, json!({})), async {
        while fake.count(CREATE_ROOM) == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        // The preparing timeout fires while CreateRoom is still in flight.
        assert_eq!(api.advance_and_fire(Duration::minutes(5)).await, 1);
    });
    start.assert_error(502, "launch_failed");
    let id = api.get("/streams", &Keys::live_a()).await.body["streams"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let stream = live_detail(&api, &id).await;
    assert_eq!(stream["status"], "error");
    let room = stream["room_name"].as_str().unwrap().to_owned();
    assert!(fake.dispatches_made() <= 1);
    assert!(
        !fake.rooms().contains(&room),
        "the room made afterwards is deleted"
    );
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
    assert_eq!(api.active_streams("brand_a").await, 0);

    // Its agent, dispatched into that room, joins late: deleted again.
    fake.join(&room);
    api.post_livekit(&signed_webhook(&agent_joined(&room, "EV_agent_late")))
        .await
        .assert_status(200);
    assert!(!fake.rooms().contains(&room));
    assert_eq!(live_detail(&api, &id).await["status"], "error");
}

#[tokio::test]
async fn a_stream_ends_at_its_deadline_however_late_the_sweep_runs() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;

    // Live for its 30 minutes; its timer is lost and the sweep runs 7 minutes late.
    let (id, room, _) = start_live(&api, 30).await;
    agent_joins(&api, &id, &room, "EV_join").await;
    let started = at(&live_detail(&api, &id).await, "started_at");
    api.timers().take_due(api.now() + Duration::days(1));
    sweep_after(&api, Duration::minutes(37)).await;
    let ended = live_detail(&api, &id).await;
    assert_eq!(ended["status"], "ended");
    assert_eq!(at(&ended, "ended_at"), started + Duration::minutes(30));

    // A preparing timeout the sweep finds 3 minutes late.
    let (id, _, _) = start_live(&api, 30).await;
    let created = at(&live_detail(&api, &id).await, "created_at");
    api.timers().take_due(api.now() + Duration::days(1));
    sweep_after(&api, Duration::minutes(8)).await;
    let failed = live_detail(&api, &id).await;
    assert_eq!(failed["status"], "error");
    assert_eq!(at(&failed, "ended_at"), created + Duration::minutes(5));

    // A test stream's duration end whose timer fires late: the same.
    let r = api
        .start(&Keys::test_a(), json!({"duration_minutes": 15}))
        .await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let started = at(&detail_test(&api, &id).await, "started_at");
    let minutes = || async {
        let analytics = api.get("/analytics?period=7d", &Keys::test_a()).await;
        analytics.assert_status(200);
        analytics.body["total_minutes"].as_u64().unwrap()
    };
    let before = minutes().await;
    assert_eq!(api.advance_and_fire(Duration::minutes(20)).await, 1);
    let ended = detail_test(&api, &id).await;
    assert_eq!(at(&ended, "ended_at"), started + Duration::minutes(15));
    // Analytics count its 15 minutes, not the 20 until the timer ran.
    assert_eq!(minutes().await - before, 15);
}

async fn detail_test(api: &TestApp, id: &str) -> Value {
    api.get(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .body
}
