//! The egress while the show is live: one start outside the join's request, its request's
//! fields and grant, each result state and event once, a late `ACTIVE`, retries and giving up,
//! an egress ending mid-show, additions and removals, and the egress's own participant.

use chrono::Duration;

use super::*;
use crate::common::fake_livekit::{START_EGRESS, participant_event};

#[tokio::test]
async fn going_live_starts_one_egress_for_every_destination_outside_the_join() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(&api, two_destinations()).await;
    assert_eq!(statuses(&api, &id).await, ["pending", "pending"]);
    agent_joins(&api, &room, "EV_join").await;
    // Live, its destinations `starting`, and no egress requested by the join itself.
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["status"], "live");
    assert_eq!(statuses(&api, &id).await, ["starting", "starting"]);
    assert_eq!(fake.count(START_EGRESS), 0);
    // The owed start is due at once.
    api.runtime.fire_due_timers().await;
    let made = starts(&fake);
    assert_eq!(made.len(), 1);
    let (request, claims) = &made[0];
    assert_eq!(request.room_name, room);
    assert_eq!(request.layout, "speaker");
    assert_eq!(request.stream_outputs.len(), 1);
    assert_eq!(
        request.stream_outputs[0].protocol,
        livekit_protocol::StreamProtocol::Rtmp as i32
    );
    assert_eq!(request.stream_outputs[0].urls, [yt(), tt()]);
    assert!(request.file_outputs.is_empty() && request.segment_outputs.is_empty());
    assert_eq!(claims["video"]["roomRecord"], true, "{claims}");
    // Nothing starts it twice: timers, the sweep and a resent join.
    api.advance_and_fire(Duration::seconds(30)).await;
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(START_EGRESS), 1);
    assert_eq!(statuses(&api, &id).await, ["starting", "starting"]);
    assert!(
        api.events_of(&id)
            .await
            .iter()
            .all(|e| e == "stream.started")
    );
}

#[tokio::test]
async fn each_result_moves_its_destination_forward_once_with_one_event() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, egress) = airing(&api, &fake).await;
    egress_says(
        &api,
        "egress_started",
        &room,
        &egress,
        "EGRESS_STARTING",
        &[],
        "EV_e1",
    )
    .await;
    assert_eq!(statuses(&api, &id).await, ["starting", "starting"]);
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", ""), (&tt(), "ACTIVE", "")],
        "EV_e2",
    )
    .await;
    let shown = destinations_of(&api, &id).await;
    assert_eq!(statuses(&api, &id).await, ["active", "active"]);
    assert!(shown.iter().all(|d| d["started_at"].is_string()));
    // The same event again, and the same state again under another id: nothing new.
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", "")],
        "EV_e2",
    )
    .await;
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", "")],
        "EV_e3",
    )
    .await;
    // TikTok's output fails; LiveKit's text names the URL, which no one is shown.
    let error = format!("rtmp output failed: {} refused the connection", tt());
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&tt(), "FAILED", &error)],
        "EV_e4",
    )
    .await;
    // A late ACTIVE never moves a failed destination back.
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&tt(), "ACTIVE", "")],
        "EV_e5",
    )
    .await;
    let shown = destinations_of(&api, &id).await;
    assert_eq!(statuses(&api, &id).await, ["active", "failed"]);
    let shown_error = shown[1]["error"].as_str().unwrap();
    assert!(
        shown_error.contains("refused the connection"),
        "{shown_error}"
    );
    assert!(!shown_error.contains(TT_KEY), "{shown_error}");
    assert!(shown[1]["ended_at"].is_string());
    assert_eq!(live_detail(&api, &id).await["status"], "live");
    assert_eq!(
        event_types(&api, &id).await,
        [
            "stream.destination_active",
            "stream.destination_active",
            "stream.destination_failed",
            "stream.started"
        ]
    );
    let failed = api
        .emitted_events()
        .await
        .into_iter()
        .find(|e| e.event_type.as_str() == "stream.destination_failed")
        .unwrap();
    let body: Value = serde_json::from_str(&failed.body).unwrap();
    assert_eq!(
        body["data"]["destination"]["destination_id"],
        shown[1]["destination_id"]
    );
    assert_eq!(body["data"]["destination"]["status"], "failed");
    assert_eq!(
        body["data"]["stream"]["destinations"][1]["status"],
        "failed"
    );
    // FINISHED ends YouTube's.
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&yt(), "FINISHED", "")],
        "EV_e6",
    )
    .await;
    assert_eq!(statuses(&api, &id).await, ["ended", "failed"]);
    // An egress no stream knows is acknowledged and changes nothing.
    egress_says(
        &api,
        "egress_ended",
        "stream-unknown",
        "EG_x",
        "EGRESS_COMPLETE",
        &[],
        "EV_e7",
    )
    .await;
}

#[tokio::test]
async fn an_egress_participant_is_neither_a_viewer_nor_a_host() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, _) = airing(&api, &fake).await;
    for (event, n) in [("participant_joined", 1), ("participant_left", 2)] {
        let body = participant_event(event, &room, Some("EGRESS"), &format!("EV_eg{n}"));
        api.post_livekit(&signed_webhook(&body))
            .await
            .assert_status(200);
        let detail = live_detail(&api, &id).await;
        assert_eq!(
            (detail["status"].as_str(), detail["viewer_count"].as_u64()),
            (Some("live"), Some(0))
        );
    }
    // A numeric kind reads the same (EGRESS is 2).
    let mut body = participant_event("participant_joined", &room, Some("EGRESS"), "EV_eg3");
    body["participant"]["kind"] = json!(2);
    api.post_livekit(&signed_webhook(&body))
        .await
        .assert_status(200);
    assert_eq!(live_detail(&api, &id).await["viewer_count"], 0);
}

#[tokio::test]
async fn a_start_failing_past_the_retry_time_fails_its_destinations_and_the_show_goes_on() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder()
        .with_livekit(&fake)
        .with_var("EGRESS_START_RETRY_SECS", "5")
        .await;
    fake.fail(START_EGRESS);
    let (id, room) = start_with(&api, two_destinations()).await;
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(START_EGRESS), 1);
    // Retried after 1 s, then 2 s, then at the retry time's end, where it gives up.
    for (wait, calls) in [(1, 2), (2, 3), (2, 4)] {
        api.advance_and_fire(Duration::seconds(wait)).await;
        assert_eq!(fake.count(START_EGRESS), calls, "after {wait} s more");
    }
    let shown = destinations_of(&api, &id).await;
    assert_eq!(statuses(&api, &id).await, ["failed", "failed"]);
    assert!(shown.iter().all(|d| d["error"] == "egress_unavailable"));
    assert_eq!(live_detail(&api, &id).await["status"], "live");
    assert_eq!(
        event_types(&api, &id).await,
        [
            "stream.destination_failed",
            "stream.destination_failed",
            "stream.started"
        ]
    );
    // Nothing is owed any more.
    fake.heal(START_EGRESS);
    api.advance_and_fire(Duration::seconds(60)).await;
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    assert_eq!(fake.count(START_EGRESS), 4);
}

#[tokio::test]
async fn a_start_that_fails_twice_starts_on_its_third_attempt() {
    let (api, fake) = app_with_livekit().await;
    fake.fail_next(START_EGRESS, 2);
    let (id, room) = start_with(&api, two_destinations()).await;
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    api.advance_and_fire(Duration::seconds(1)).await;
    api.advance_and_fire(Duration::seconds(2)).await;
    assert_eq!(fake.count(START_EGRESS), 3);
    assert_eq!(fake.egresses().len(), 1);
    assert_eq!(statuses(&api, &id).await, ["starting", "starting"]);
}

#[tokio::test]
async fn a_hanging_egress_api_never_holds_up_the_join() {
    let (api, fake) = app_with_livekit().await;
    fake.hang(START_EGRESS);
    let (id, room) = start_with(&api, two_destinations()).await;
    let started = std::time::Instant::now();
    agent_joins(&api, &room, "EV_join").await;
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(live_detail(&api, &id).await["status"], "live");
    assert_eq!(fake.count(START_EGRESS), 0);
}

#[tokio::test]
async fn an_egress_that_ends_mid_show_is_started_again_three_times_at_most() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, first) = airing(&api, &fake).await;
    egress_says(
        &api,
        "egress_updated",
        &room,
        &first,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", ""), (&tt(), "ACTIVE", "")],
        "EV_a",
    )
    .await;
    let mut current = first;
    for restart in 1..=3 {
        fake.end_egress(&current);
        egress_says(
            &api,
            "egress_ended",
            &room,
            &current,
            "EGRESS_ABORTED",
            &[],
            &format!("EV_end{restart}"),
        )
        .await;
        api.runtime.fire_due_timers().await;
        assert_eq!(fake.count(START_EGRESS), 1 + restart);
        let made = starts(&fake);
        assert_eq!(made.last().unwrap().0.stream_outputs[0].urls, [yt(), tt()]);
        current = fake
            .egresses()
            .into_iter()
            .find(|(_, e)| e.running)
            .map(|(id, _)| id)
            .unwrap();
        assert_eq!(statuses(&api, &id).await, ["active", "active"]);
    }
    // An end reported late for an egress already replaced changes nothing.
    egress_says(
        &api,
        "egress_ended",
        &room,
        "EG_1",
        "EGRESS_ABORTED",
        &[],
        "EV_stale",
    )
    .await;
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(START_EGRESS), 4);
    // The fourth end fails what is left, with the egress's error.
    fake.end_egress(&current);
    egress_says(
        &api,
        "egress_ended",
        &room,
        &current,
        "EGRESS_FAILED",
        &[],
        "EV_end4",
    )
    .await;
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(START_EGRESS), 4);
    assert_eq!(statuses(&api, &id).await, ["failed", "failed"]);
    assert_eq!(live_detail(&api, &id).await["status"], "live");
}

#[tokio::test]
async fn an_egress_that_completes_with_finished_outputs_is_not_started_again() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, egress) = airing(&api, &fake).await;
    fake.end_egress(&egress);
    egress_says(
        &api,
        "egress_ended",
        &room,
        &egress,
        "EGRESS_COMPLETE",
        &[(&yt(), "FINISHED", ""), (&tt(), "FINISHED", "")],
        "EV_done",
    )
    .await;
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(START_EGRESS), 1);
    assert_eq!(statuses(&api, &id).await, ["ended", "ended"]);
}
