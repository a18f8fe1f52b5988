//! Lost and early reports of the host (docs/livekit.md, "Read-backs"): a leave or a room's end
//! whose webhook LiveKit never sent is read back from the room's participants, applied as the
//! webhook would be, once; a read that fails changes nothing. On both backends.

use chrono::Duration;

use super::show::{after_the_interval, detail, on_air};
use crate::common::fake_livekit::{LIST_PARTICIPANTS, LIST_ROOMS};
use crate::common::*;

#[tokio::test]
async fn a_lost_leave_is_read_back_and_opens_the_window_as_of_the_read() {
    let (api, fake, id, room) = on_air().await;
    let host = fake.hosts(&room)[0].identity.clone();
    fake.lose_next_webhooks(1);
    fake.host_leaves(&room, &host, "CONNECTION_TIMEOUT", false);
    assert_eq!(api.livekit_sends().await, 0);
    after_the_interval(&api).await;
    let read = api.now();
    assert_eq!(fake.dispatches_made(), 2, "the window's dispatch");
    // No host came back within the window: in error as of the read.
    api.advance_and_fire(Duration::seconds(61)).await;
    api.assert_end_reason(&Keys::live_a(), &id, "error", Some("host_lost"))
        .await;
    assert_eq!(at(&detail(&api, &id).await, "ended_at"), read);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.error"]);
}

#[tokio::test]
async fn a_room_livekit_closed_silently_ends_the_show_as_of_the_read() {
    let (api, fake, id, room) = on_air().await;
    // The host, then room_finished: every webhook of the close lost.
    fake.lose_next_webhooks(2);
    fake.close_room(&room);
    assert_eq!(api.livekit_sends().await, 0);
    after_the_interval(&api).await;
    api.assert_end_reason(&Keys::live_a(), &id, "ended", Some("room_finished"))
        .await;
    assert_eq!(at(&detail(&api, &id).await, "ended_at"), api.now());
    assert_eq!(api.active_streams("brand_a").await, 0);
    // Once: the next read-back finds nothing to do.
    after_the_interval(&api).await;
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
}

#[tokio::test]
async fn a_read_back_that_fails_changes_nothing_and_the_next_one_applies() {
    for method in [LIST_PARTICIPANTS, LIST_ROOMS] {
        let (api, fake, id, room) = on_air().await;
        let host = fake.hosts(&room)[0].identity.clone();
        fake.lose_next_webhooks(1);
        fake.host_leaves(&room, &host, "CONNECTION_TIMEOUT", false);
        api.livekit_sends().await;
        fake.fail(method);
        after_the_interval(&api).await;
        assert_eq!(detail(&api, &id).await["status"], "live", "{method}");
        assert_eq!(
            fake.dispatches_made(),
            1,
            "{method}: no window from a failed read"
        );
        fake.heal(method);
        after_the_interval(&api).await;
        assert_eq!(
            fake.dispatches_made(),
            2,
            "{method}: the window, at the next read"
        );
    }
}

#[tokio::test]
async fn a_live_show_is_read_back_once_per_interval_and_a_present_host_changes_nothing() {
    let (api, fake, id, _room) = on_air().await;
    let reads = || fake.count(LIST_PARTICIPANTS);
    let before = reads();
    for _ in 0..3 {
        after_the_interval(&api).await;
    }
    assert_eq!(reads() - before, 3);
    assert_eq!(fake.dispatches_made(), 1);
    assert_eq!(api.events_of(&id).await, ["stream.started"]);
}
