//! Viewer counts as LiveKit reports them (docs/lifecycle.md, "Viewer counts"): joins and leaves
//! whose webhooks were lost are corrected at the next live read-back from the room's count, as
//! is a leave delivered before its join. Viewers join and leave the fake LiveKit's
//! room, which sends (or loses) their webhooks as LiveKit does. On both backends.

use super::show::{after_the_interval, detail, on_air};
use crate::common::fake_livekit::signed_webhook;
use crate::common::*;

async fn viewers(api: &TestApp, id: &str) -> u64 {
    detail(api, id).await["viewer_count"].as_u64().unwrap()
}

#[tokio::test]
async fn a_lost_viewer_leave_is_corrected_by_the_next_read_back_and_the_end_keeps_it() {
    let (api, fake, id, room) = on_air().await;
    let joined: Vec<_> = (0..3).map(|_| fake.viewer_joins(&room)).collect();
    assert_eq!(api.livekit_sends().await, 3);
    assert_eq!(viewers(&api, &id).await, 3);
    fake.lose_next_webhooks(1);
    fake.leaves(&room, &joined[0].identity, "CLIENT_INITIATED");
    assert_eq!(api.livekit_sends().await, 0);
    assert_eq!(viewers(&api, &id).await, 3, "the leave never came");
    after_the_interval(&api).await;
    assert_eq!(viewers(&api, &id).await, 2, "LiveKit counts 2");
    // The corrected count is what later events move.
    fake.viewer_joins(&room);
    api.livekit_sends().await;
    assert_eq!(viewers(&api, &id).await, 3);
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    assert_eq!(viewers(&api, &id).await, 3, "final");
    let figures = api.get("/analytics", &Keys::live_a()).await;
    assert_eq!(figures.body["total_viewers"], 3);
}

#[tokio::test]
async fn a_lost_viewer_join_is_corrected_by_the_next_read_back() {
    let (api, fake, id, room) = on_air().await;
    fake.lose_next_webhooks(2);
    fake.viewer_joins(&room);
    fake.viewer_joins(&room);
    fake.viewer_joins(&room);
    assert_eq!(api.livekit_sends().await, 1);
    assert_eq!(viewers(&api, &id).await, 1);
    after_the_interval(&api).await;
    assert_eq!(viewers(&api, &id).await, 3);
    // A count LiveKit agrees with stays as it is.
    after_the_interval(&api).await;
    assert_eq!(viewers(&api, &id).await, 3);
}

#[tokio::test]
async fn a_leave_delivered_before_its_join_never_reads_below_zero_and_the_read_back_settles_it() {
    let (api, fake, id, room) = on_air().await;
    let gone = fake.viewer_joins(&room);
    fake.leaves(&room, &gone.identity, "CLIENT_INITIATED");
    let [join, leave]: [serde_json::Value; 2] = fake.take_webhooks().try_into().unwrap();
    assert_eq!(leave["event"], "participant_left");
    api.post_livekit_as_sent(&signed_webhook(&leave))
        .await
        .assert_status(200);
    assert_eq!(viewers(&api, &id).await, 0, "never below zero");
    api.post_livekit_as_sent(&signed_webhook(&join))
        .await
        .assert_status(200);
    assert_eq!(viewers(&api, &id).await, 1, "counted from zero");
    after_the_interval(&api).await;
    assert_eq!(viewers(&api, &id).await, 0, "LiveKit counts no one");
}
