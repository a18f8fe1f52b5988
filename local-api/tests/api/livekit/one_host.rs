//! One host on air (docs/livekit.md, "One host" and "The agent contract"): only the host's own
//! word or the room's end ends a show at once; any other leave is a drop; a second host is
//! removed. Against the fake LiveKit, on both backends.

use chrono::Duration;
use serde_json::json;

use super::show::Show;
use crate::common::fake_livekit::agent_event;
use crate::common::*;

#[tokio::test]
async fn only_the_hosts_word_or_the_room_ends_the_show_at_once_any_other_leave_is_a_drop() {
    // docs/lifecycle.md, "Disconnect reasons": a crash in the agent's code or a drained worker
    // leaves CLIENT_INITIATED, exactly as a finish does; only `lsh.finished` tells them apart.
    for (reason, finished, status) in [
        (None, true, Some("host_left")),
        (Some("CLIENT_INITIATED"), true, Some("host_left")),
        (Some("CONNECTION_TIMEOUT"), true, Some("host_left")),
        (Some("PARTICIPANT_REMOVED"), false, Some("host_left")),
        (Some("ROOM_DELETED"), false, Some("room_finished")),
        (Some("ROOM_CLOSED"), false, Some("room_finished")),
        (None, false, None),
        (Some("UNKNOWN_REASON"), false, None),
        (Some("CLIENT_INITIATED"), false, None),
        (Some("DUPLICATE_IDENTITY"), false, None),
    ] {
        let show = Show::live(30).await;
        show.api.advance(Duration::minutes(3));
        // The host's leave as LiveKit reports it, with `reason` or none at all.
        let host = show.host();
        let id = format!("EV_{}", uuid::Uuid::new_v4().simple());
        let mut event = agent_event(
            "participant_left",
            &show.room,
            &host.sid,
            reason,
            &id,
            show.api.now(),
        );
        event["participant"]["identity"] = json!(host.identity);
        if finished {
            event["participant"]["attributes"]["lsh.finished"] = json!("true");
        }
        show.send(&event).await;
        let case = format!("{reason:?}, finished {finished}");
        match status {
            Some(end_reason) => {
                show.api
                    .assert_end_reason(&Keys::live_a(), &show.id, "ended", Some(end_reason))
                    .await;
                assert_eq!(at(&show.detail().await, "ended_at"), show.api.now());
                assert_eq!(show.api.active_streams("brand_a").await, 0);
                assert_eq!(show.dispatches(), 1, "{case}: no dispatch again");
            }
            None => {
                assert_eq!(show.detail().await["status"], "live", "{case}");
                assert_eq!(
                    show.dispatches(),
                    2,
                    "{case}: the window's dispatch, at once"
                );
                show.host_joins().await;
                assert_eq!(show.api.advance_and_fire(Duration::minutes(5)).await, 0);
                assert_eq!(show.events().await, ["stream.started"], "{case}");
            }
        }
    }
}

#[tokio::test]
async fn a_second_host_is_removed_and_its_leave_changes_nothing() {
    let show = Show::live(30).await;
    // LiveKit does not order its webhooks: a replacement's join may come first, and is then a
    // second host (docs/livekit.md, "One host").
    show.agent("participant_joined", "PA_2", None).await;
    let removed: Vec<String> = show
        .fake
        .calls()
        .into_iter()
        .filter_map(|c| match c.call {
            crate::common::fake_livekit::Call::RemoveParticipant(r) => Some(r.identity),
            _ => None,
        })
        .collect();
    assert_eq!(removed, ["agent-AJ_PA_2"]);
    // LiveKit reports the removal itself.
    assert_eq!(show.api.livekit_sends().await, 1);
    assert_eq!(show.detail().await["status"], "live");
    assert_eq!(show.dispatches(), 1, "no window");
    // The host it kept: its drop opens the window.
    show.host_leaves("CONNECTION_TIMEOUT", false).await;
    assert_eq!(show.detail().await["status"], "live", "a drop: the window");
    assert_eq!(show.dispatches(), 2);
}
