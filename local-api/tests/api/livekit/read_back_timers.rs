//! Read-backs on time (docs/livekit.md, "Read-backs"): each has a timer of its own, so a
//! preparing stream is read back `HOST_READBACK_SECS` after its dispatch and a live one every
//! `HOST_READBACK_INTERVAL_SECS`, with no sweep; a sweep at the same moment reads nothing more.
//! On both backends.

use chrono::Duration;

use super::show::{Show, detail, on_air};
use crate::common::fake_livekit::LIST_PARTICIPANTS;
use crate::common::*;

async fn sweep(api: &TestApp) {
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
}

/// The slow host of `show`'s live dispatch joins now, and LiveKit loses its join.
async fn host_joins_unreported(show: &Show) {
    show.fake.lose_next_webhooks(1);
    show.fake.start_pending_agents();
    assert_eq!(show.api.livekit_sends().await, 0, "the join was lost");
}

#[tokio::test]
async fn a_lost_join_is_read_back_by_its_timer_at_the_read_back_time() {
    let show = Show::preparing(30).await;
    host_joins_unreported(&show).await;
    let joined = show.api.now();
    show.api.advance_and_fire(Duration::seconds(19)).await;
    assert_eq!(show.fake.count(LIST_PARTICIPANTS), 0, "not before its time");
    assert_eq!(show.detail().await["status"], "preparing");
    show.api.advance_and_fire(Duration::seconds(1)).await;
    assert_eq!(show.fake.count(LIST_PARTICIPANTS), 1);
    let shown = show.detail().await;
    assert_eq!(
        shown["status"], "live",
        "no sweep ran: the timer read it back"
    );
    assert_eq!(at(&shown, "started_at"), joined);
    assert_eq!(show.events().await, ["stream.started"]);
    assert_eq!(show.dispatches(), 1);
}

#[tokio::test]
async fn a_retried_dispatch_is_read_back_by_its_timer_after_the_retry() {
    let show = Show::preparing(30).await;
    // The launch's read-back finds no host; the retry's dispatch at 60 s replaces the first.
    show.api.advance_and_fire(Duration::seconds(20)).await;
    assert_eq!(show.fake.count(LIST_PARTICIPANTS), 1);
    show.api.advance_and_fire(Duration::seconds(40)).await;
    assert_eq!(show.dispatches(), 2);
    let reads = show.fake.count(LIST_PARTICIPANTS);
    host_joins_unreported(&show).await;
    let joined = show.api.now();
    show.api.advance_and_fire(Duration::seconds(20)).await;
    assert!(show.fake.count(LIST_PARTICIPANTS) > reads);
    let shown = show.detail().await;
    assert_eq!(shown["status"], "live");
    assert_eq!(at(&shown, "started_at"), joined);
    show.host();
}

#[tokio::test]
async fn a_live_show_is_read_back_by_its_timer_every_interval_and_a_sweep_adds_no_read() {
    let (api, fake, id, room) = on_air().await;
    let reads = || fake.count(LIST_PARTICIPANTS);
    let before = reads();
    for interval in 1..=3 {
        api.advance_and_fire(Duration::seconds(119)).await;
        assert_eq!(reads() - before, interval - 1, "not before the interval");
        api.advance_and_fire(Duration::seconds(1)).await;
        assert_eq!(reads() - before, interval, "read at the interval");
        sweep(&api).await;
        assert_eq!(reads() - before, interval, "the sweep finds it read");
    }
    // A leave whose webhook is lost opens the window at the next read, by the timer alone.
    let host = fake.hosts(&room)[0].identity.clone();
    fake.lose_next_webhooks(1);
    fake.host_leaves(&room, &host, "CONNECTION_TIMEOUT", false);
    assert_eq!(api.livekit_sends().await, 0);
    api.advance_and_fire(Duration::seconds(120)).await;
    assert_eq!(fake.dispatches_made(), 2, "the window's dispatch");
    assert_eq!(detail(&api, &id).await["status"], "live");
}
