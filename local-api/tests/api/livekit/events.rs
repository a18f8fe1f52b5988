//! LiveKit's webhooks moving a stream: the agent joining and leaving, viewers, and the room finishing.

use std::sync::Arc;

use chrono::Duration;
use serde_json::{Value, json};

use super::{deliver, live_show};
use crate::common::fake_livekit::{FakeLiveKit, participant_event};
use crate::common::*;

#[tokio::test]
async fn agent_joining_makes_the_stream_live_once() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 45).await;
    api.advance(Duration::seconds(20));

    let r = deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_agent1"),
    )
    .await;
    r.assert_status(200);
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["status"], "live");
    assert_eq!(detail["started_at"], "2026-03-02T12:00:50.000Z");
    assert_eq!(api.events_of(&id).await, ["stream.started"]);

    // The same event again, and another agent join, change nothing.
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_agent1"),
    )
    .await
    .assert_status(200);
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_agent2"),
    )
    .await
    .assert_status(200);
    assert_eq!(api.events_of(&id).await, ["stream.started"]);

    // The preparing timeout no longer applies; the duration end does.
    assert_eq!(api.advance_and_fire(Duration::minutes(10)).await, 0);
    assert_eq!(live_detail(&api, &id).await["status"], "live");
    assert_eq!(api.advance_and_fire(Duration::minutes(35)).await, 1);
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["status"], "ended");
    assert_eq!(detail["ended_at"], "2026-03-02T12:45:50.000Z");
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    assert_eq!(
        fake.methods().last().unwrap(),
        "livekit.RoomService/DeleteRoom"
    );
}

#[tokio::test]
async fn viewers_move_the_count_never_below_zero() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    // Before the agent joins, viewers are not counted.
    deliver(
        &api,
        participant_event("participant_joined", &room, None, "EV_early"),
    )
    .await
    .assert_status(200);
    assert_eq!(live_detail(&api, &id).await["viewer_count"], 0);
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_a"),
    )
    .await;

    for (i, kind) in [Some("STANDARD"), None, Some("INGRESS")]
        .into_iter()
        .enumerate()
    {
        deliver(
            &api,
            participant_event("participant_joined", &room, kind, &format!("EV_j{i}")),
        )
        .await
        .assert_status(200);
    }
    assert_eq!(live_detail(&api, &id).await["viewer_count"], 3);
    // A replayed join is not counted twice.
    deliver(
        &api,
        participant_event("participant_joined", &room, None, "EV_j1"),
    )
    .await;
    assert_eq!(live_detail(&api, &id).await["viewer_count"], 3);
    for i in 0..5 {
        deliver(
            &api,
            participant_event(
                "participant_left",
                &room,
                Some("STANDARD"),
                &format!("EV_l{i}"),
            ),
        )
        .await
        .assert_status(200);
    }
    assert_eq!(live_detail(&api, &id).await["viewer_count"], 0);
    deliver(
        &api,
        participant_event("participant_joined", &room, None, "EV_j9"),
    )
    .await;
    assert_eq!(live_detail(&api, &id).await["viewer_count"], 1);
    assert_eq!(live_detail(&api, &id).await["status"], "live");
    assert_eq!(listed_viewer_count(&api, &id).await, 1);
}

/// The viewer count of stream `id` as `GET /streams` lists it.
async fn listed_viewer_count(api: &TestApp, id: &str) -> Value {
    let list = api.get("/streams", &Keys::live_a()).await.body;
    list["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .map(|s| s["viewer_count"].clone())
        .unwrap()
}

/// A burst of viewers joining at once: every join counts, and the list shows the same count
/// as the detail.
#[tokio::test]
async fn a_burst_of_joins_counts_every_viewer_in_detail_and_list() {
    let fake = FakeLiveKit::start().await;
    let api = Arc::new(TestApp::builder().with_livekit(&fake).await);
    let (id, room) = live_show(&api, 30).await;
    let statuses = concurrently(12, |i| {
        let (api, room) = (api.clone(), room.clone());
        async move {
            deliver(
                &api,
                participant_event("participant_joined", &room, None, &format!("EV_burst{i}")),
            )
            .await
            .status
            .as_u16()
        }
    })
    .await;
    assert_eq!(statuses.get(&200), Some(&12), "{statuses:?}");
    assert_eq!(live_detail(&api, &id).await["viewer_count"], 12);
    assert_eq!(listed_viewer_count(&api, &id).await, 12);
}

#[tokio::test]
async fn the_agent_leaving_ends_the_stream() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_a"),
    )
    .await;
    deliver(
        &api,
        participant_event("participant_joined", &room, None, "EV_v"),
    )
    .await;
    api.assert_end_reason(&Keys::live_a(), &id, "live", None)
        .await;
    deliver(
        &api,
        participant_event("participant_left", &room, Some("AGENT"), "EV_al"),
    )
    .await
    .assert_status(200);
    api.assert_end_reason(&Keys::live_a(), &id, "ended", Some("host_left"))
        .await;
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["status"], "ended");
    assert_eq!(detail["viewer_count"], 1, "the final viewer count stays");
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    assert_eq!(api.active_streams("brand_a").await, 0);
    assert!(api.timers().pending().is_empty());
}

#[tokio::test]
async fn room_finished_ends_a_live_stream_and_races_delete_once() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    // room_finished while preparing changes nothing (the preparing timeout handles it).
    deliver(
        &api,
        json!({"event": "room_finished", "room": {"name": room}, "id": "EV_rf0"}),
    )
    .await
    .assert_status(200);
    assert_eq!(live_detail(&api, &id).await["status"], "preparing");

    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_a"),
    )
    .await;
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    assert_eq!(
        fake.methods().last().unwrap(),
        "livekit.RoomService/DeleteRoom"
    );
    deliver(
        &api,
        json!({"event": "room_finished", "room": {"name": room}, "id": "EV_rf1"}),
    )
    .await
    .assert_status(200);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    api.assert_end_reason(&Keys::live_a(), &id, "ended", Some("requested"))
        .await;

    // And the other way round: the provider first, then the DELETE finds nothing live.
    let (id2, room2, _) = start_live(&api, 30).await;
    deliver(
        &api,
        participant_event("participant_joined", &room2, Some("AGENT"), "EV_b"),
    )
    .await;
    deliver(
        &api,
        json!({"event": "room_finished", "room": {"name": room2}, "id": "EV_rf2"}),
    )
    .await;
    api.assert_end_reason(&Keys::live_a(), &id2, "ended", Some("room_finished"))
        .await;
    api.delete(&format!("/streams/{id2}"), &Keys::live_a())
        .await
        .assert_error(404, "not_found");
    assert_eq!(
        api.events_of(&id2).await,
        ["stream.started", "stream.ended"]
    );
}
