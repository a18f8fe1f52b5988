//! Nothing outlives its stream, its egress included: on every way a stream ends, its egress is
//! stopped before its room is deleted, durably (a stop LiveKit refuses is retried by the sweep),
//! its destinations are final and its stream keys erased; and an egress start owed when the
//! process that made the stream live died is made by the sweep from the store.

use chrono::Duration;

use super::*;
use crate::common::fake_livekit::{
    Call, DELETE_ROOM, START_EGRESS, STOP_EGRESS, agent_event, finished,
};

/// How the stream ends.
#[derive(Debug, Clone, Copy)]
enum End {
    Delete,
    Duration,
    HostLeft,
    HostLost,
    RoomFinished,
}

async fn end(api: &TestApp, id: &str, room: &str, end: End) {
    let now = api.now();
    match end {
        End::Delete => {
            api.delete(&format!("/streams/{id}"), &Keys::live_a())
                .await
                .assert_status(200);
        }
        End::Duration => {
            api.advance_and_fire(Duration::minutes(30)).await;
        }
        End::HostLeft => {
            // The host's word: `lsh.finished` (E16), whatever the reason.
            let left = finished(agent_event(
                "participant_left",
                room,
                "PA_agent",
                Some("CLIENT_INITIATED"),
                "EV_left",
                now,
            ));
            api.post_livekit(&signed_webhook(&left))
                .await
                .assert_status(200);
        }
        End::HostLost => {
            let left = agent_event(
                "participant_left",
                room,
                "PA_agent",
                Some("CONNECTION_TIMEOUT"),
                "EV_drop",
                now,
            );
            api.post_livekit(&signed_webhook(&left))
                .await
                .assert_status(200);
            api.advance_and_fire(Duration::seconds(61)).await;
        }
        End::RoomFinished => {
            let finished = json!({"event": "room_finished", "room": {"sid": "RM_fake", "name": room},
                "id": "EV_finished", "createdAt": now.timestamp().to_string()});
            api.post_livekit(&signed_webhook(&finished))
                .await
                .assert_status(200);
        }
    }
}

#[tokio::test]
async fn every_end_stops_the_egress_before_the_room_is_deleted() {
    for (how, status, reason) in [
        (End::Delete, "ended", "requested"),
        (End::Duration, "ended", "duration_elapsed"),
        (End::HostLeft, "ended", "host_left"),
        (End::HostLost, "error", "host_lost"),
        (End::RoomFinished, "ended", "room_finished"),
    ] {
        let (api, fake) = app_with_livekit().await;
        let (id, room, egress) = airing(&api, &fake).await;
        let unrecorded = fake.unrecorded_egress(&room);
        end(&api, &id, &room, how).await;
        // The room cleanup's own attempt, or the sweep's; past the launch's hold, it is done.
        hosting_app::service::timers::sweep(&api.runtime.app)
            .await
            .unwrap();
        api.advance(Duration::minutes(1));
        hosting_app::service::timers::sweep(&api.runtime.app)
            .await
            .unwrap();
        let detail = live_detail(&api, &id).await;
        assert_eq!(
            (detail["status"].as_str(), detail["end_reason"].as_str()),
            (Some(status), Some(reason)),
            "{how:?}"
        );
        let methods = fake.methods();
        let stop = methods
            .iter()
            .position(|m| m == STOP_EGRESS)
            .unwrap_or_else(|| panic!("{how:?}: no StopEgress in {methods:?}"));
        let delete = methods
            .iter()
            .rposition(|m| m == DELETE_ROOM)
            .unwrap_or_else(|| panic!("{how:?}: no DeleteRoom"));
        assert!(stop < delete, "{how:?}: {methods:?}");
        assert!(!fake.egresses()[&egress].running, "{how:?}");
        assert!(
            !fake.egresses()[&unrecorded].running,
            "{how:?}: every egress of the room"
        );
        let listed = fake.calls().into_iter().find_map(|c| match c.call {
            Call::ListEgress(req) => Some(req),
            _ => None,
        });
        let listed = listed.unwrap_or_else(|| panic!("{how:?}: no ListEgress"));
        assert_eq!(
            (listed.room_name.as_str(), listed.active),
            (room.as_str(), true)
        );
        assert!(!fake.rooms().contains(&room), "{how:?}");
        assert_eq!(statuses(&api, &id).await, ["ended", "ended"], "{how:?}");
        let keys = api
            .runtime
            .app
            .store
            .stream_keys(id.parse().unwrap())
            .await
            .unwrap();
        assert!(keys.is_empty(), "{how:?}: keys erased");
    }
}

#[tokio::test]
async fn a_preparing_timeout_fails_pending_destinations_and_stops_no_egress() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(&api, two_destinations()).await;
    api.advance_and_fire(Duration::minutes(5)).await;
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["end_reason"], "preparing_timeout");
    assert_eq!(statuses(&api, &id).await, ["failed", "failed"]);
    assert!(
        destinations_of(&api, &id)
            .await
            .iter()
            .all(|d| d["error"].is_null())
    );
    assert_eq!(fake.count(START_EGRESS) + fake.count(STOP_EGRESS), 0);
    assert!(!fake.rooms().contains(&room));
    assert_eq!(
        event_types(&api, &id).await,
        [
            "stream.destination_failed",
            "stream.destination_failed",
            "stream.error"
        ]
    );
    let keys = api
        .runtime
        .app
        .store
        .stream_keys(id.parse().unwrap())
        .await
        .unwrap();
    assert!(keys.is_empty());
}

#[tokio::test]
async fn a_stop_livekit_refuses_is_retried_and_the_room_waits_for_it() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, egress) = airing(&api, &fake).await;
    fake.fail(STOP_EGRESS);
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    // The room is not deleted while the egress runs.
    for _ in 0..3 {
        api.advance(Duration::minutes(1));
        hosting_app::service::timers::sweep(&api.runtime.app)
            .await
            .unwrap();
    }
    assert!(fake.rooms().contains(&room));
    assert!(fake.egresses()[&egress].running);
    assert!(
        !api.runtime
            .app
            .store
            .stream_keys(id.parse().unwrap())
            .await
            .unwrap()
            .is_empty()
    );
    fake.heal(STOP_EGRESS);
    api.advance(Duration::minutes(1));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    assert!(!fake.egresses()[&egress].running);
    assert!(!fake.rooms().contains(&room));
    // An egress LiveKit already forgot, or one already ended, counts as stopped.
    let (api, fake) = app_with_livekit().await;
    let (id, _, egress) = airing(&api, &fake).await;
    fake.end_egress(&egress);
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    api.advance(Duration::minutes(1));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    assert!(
        api.runtime
            .app
            .store
            .stream_keys(id.parse().unwrap())
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_start_owed_when_its_process_died_is_made_by_the_sweep_from_the_store() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(&api, two_destinations()).await;
    agent_joins(&api, &room, "EV_join").await;
    // The process that made it live dies with its timers: another instance's sweep, reading
    // only the store, starts the egress.
    let lost = api.timers().take_due(api.now() + Duration::days(1));
    assert!(!lost.is_empty());
    api.advance(Duration::seconds(1));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    assert_eq!(fake.count(START_EGRESS), 1);
    assert_eq!(statuses(&api, &id).await, ["starting", "starting"]);
    // An attempt claimed by a process that died mid-call is made again once its claim lapses.
    let (id, room) = start_with(
        &api,
        json!([destination(
            "kick",
            "rtmps://ingest.kick.example.com/app",
            "kick-key-0004"
        )]),
    )
    .await;
    fake.hang(START_EGRESS);
    agent_joins(&api, &room, "EV_join2").await;
    let claimed = tokio::time::timeout(
        std::time::Duration::from_millis(300),
        api.runtime.fire_due_timers(),
    )
    .await;
    assert!(
        claimed.is_err(),
        "the attempt hangs, as a process that died in it"
    );
    fake.heal(START_EGRESS);
    api.advance(Duration::seconds(21));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    assert_eq!(
        fake.egresses().values().filter(|e| e.room == room).count(),
        1
    );
    assert_eq!(statuses(&api, &id).await, ["starting"]);
}

#[tokio::test]
async fn the_table_streams_record_of_an_owed_start_starts_it_through_the_timers_function() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(&api, two_destinations()).await;
    agent_joins(&api, &room, "EV_join").await;
    api.timers().take_due(api.now() + Duration::days(1));
    // The record the table's stream carries (on AWS, filtered to items with `egress_due`).
    let record = |due: chrono::DateTime<chrono::Utc>| {
        serde_json::from_value::<timers::Invocation>(json!({"Records": [{"eventName": "MODIFY",
            "dynamodb": {"Keys": {"pk": {"S": format!("STREAM#{id}")}, "sk": {"S": "STREAM"}},
            "NewImage": {"id": {"S": id}, "status": {"S": "live"},
                "egress_due": {"S": due.to_rfc3339()}}}}]}))
        .unwrap()
    };
    // One due long after is left to its timer and the sweep.
    let later = timers::handle(&api.runtime.app, record(api.now() + Duration::minutes(5))).await;
    assert_eq!(later.unwrap(), timers::Fired { changed: 0 });
    assert_eq!(fake.count(START_EGRESS), 0);
    let now = timers::handle(&api.runtime.app, record(api.now())).await;
    assert_eq!(now.unwrap(), timers::Fired { changed: 1 });
    assert_eq!(fake.count(START_EGRESS), 1);
    // The same record again (the stream delivers at least once): started once.
    timers::handle(&api.runtime.app, record(api.now()))
        .await
        .unwrap();
    assert_eq!(fake.count(START_EGRESS), 1);
}
