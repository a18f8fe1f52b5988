//! The preparing timeout: it moves a stream to `error`, is configurable, and races a late agent.

use std::sync::Arc;

use chrono::Duration;

use super::deliver;
use crate::common::fake_livekit::{FakeLiveKit, participant_event};
use crate::common::*;

#[tokio::test]
async fn preparing_timeout_moves_to_error_and_beats_a_late_agent() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    // No agent: dispatched again at 60 s and 120 s (3 dispatches in all), then nothing until
    // the timeout.
    assert_eq!(api.advance_and_fire(Duration::seconds(60)).await, 1);
    assert_eq!(api.advance_and_fire(Duration::seconds(60)).await, 1);
    assert_eq!(api.advance_and_fire(Duration::seconds(179)).await, 0);
    assert_eq!(fake.dispatches_made(), 3);
    api.assert_end_reason(&Keys::live_a(), &id, "preparing", None)
        .await;
    assert_eq!(api.advance_and_fire(Duration::seconds(1)).await, 1);
    api.assert_end_reason(&Keys::live_a(), &id, "error", Some("preparing_timeout"))
        .await;
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["status"], "error");
    assert_eq!(detail["ended_at"], "2026-03-02T12:05:30.000Z");
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
    assert_eq!(
        fake.methods().last().unwrap(),
        "livekit.RoomService/DeleteRoom"
    );
    assert_eq!(api.active_streams("brand_a").await, 0);
    // The agent arriving afterwards changes nothing.
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_late"),
    )
    .await
    .assert_status(200);
    assert_eq!(live_detail(&api, &id).await["status"], "error");
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
}

#[tokio::test]
async fn the_preparing_timeout_is_configurable() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder()
        .with_livekit(&fake)
        .with_preparing_timeout_secs(60)
        .await;
    let (id, _, _) = start_live(&api, 30).await;
    assert_eq!(api.advance_and_fire(Duration::seconds(60)).await, 1);
    assert_eq!(live_detail(&api, &id).await["status"], "error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_agent_join_and_timeout_give_one_transition() {
    let fake = FakeLiveKit::start().await;
    let api = Arc::new(TestApp::builder().with_livekit(&fake).await);
    for round in 0..5 {
        let (id, room, _) = start_live(&api, 30).await;
        api.advance(Duration::seconds(300));
        let timers = api.timers().take_due(api.now());
        let join = {
            let api = api.clone();
            let event = participant_event(
                "participant_joined",
                &room,
                Some("AGENT"),
                &format!("EV_race{round}"),
            );
            tokio::spawn(async move { deliver(&api, event).await.status.as_u16() })
        };
        let fire = {
            let api = api.clone();
            tokio::spawn(async move {
                for timer in timers {
                    hosting_app::service::timers::fire(&api.runtime.app, &timer)
                        .await
                        .unwrap();
                }
            })
        };
        assert_eq!(join.await.unwrap(), 200);
        fire.await.unwrap();
        let events = api.events_of(&id).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let status = live_detail(&api, &id).await["status"].clone();
        assert_eq!(
            status,
            if events[0] == "stream.started" {
                "live"
            } else {
                "error"
            }
        );
        if status == "live" {
            api.delete(&format!("/streams/{id}"), &Keys::live_a())
                .await
                .assert_status(200);
        }
    }
}
