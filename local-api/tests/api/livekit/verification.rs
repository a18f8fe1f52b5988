//! LiveKit webhook verification: unverified requests get `401`; unknown rooms and events are acknowledged.

use serde_json::json;

use super::{deliver, post_webhook};
use crate::common::fake_livekit::{
    API_SECRET, FakeLiveKit, participant_event, signed_webhook_with,
};
use crate::common::*;

#[tokio::test]
async fn unverified_webhooks_get_401_and_change_nothing() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    let event = participant_event("participant_joined", &room, Some("AGENT"), "EV_x");

    let (body, _) = signed_webhook_with(&event, API_SECRET, 600);
    let (_, wrong_secret) = signed_webhook_with(&event, "another-secret-entirely-0123456789", 600);
    let (_, expired) = signed_webhook_with(&event, API_SECRET, -3600);
    let (_, valid) = signed_webhook_with(&event, API_SECRET, 600);
    let tampered = body.replace("AGENT", "STANDARD");
    let cases: Vec<(&str, Option<&str>)> = vec![
        (&body, Some(&wrong_secret)),
        (&tampered, Some(&valid)),
        (&body, Some(&expired)),
        (&body, None),
        (&body, Some("not a jwt")),
    ];
    for (body, auth) in cases {
        let r = post_webhook(&api, body, auth).await;
        r.assert_error(401, "unauthorized");
    }
    assert_eq!(live_detail(&api, &id).await["status"], "preparing");
    // The untampered, validly signed event still applies: its id was never recorded.
    post_webhook(&api, &body, Some(&valid))
        .await
        .assert_status(200);
    assert_eq!(live_detail(&api, &id).await["status"], "live");
}

#[tokio::test]
async fn unknown_rooms_and_events_are_acknowledged() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    for event in [
        participant_event("participant_joined", "no-such-room", Some("AGENT"), "EV_u1"),
        json!({"event": "track_published", "room": {"name": room}, "id": "EV_u2"}),
        json!({"event": "room_started", "room": {"name": room}, "id": "EV_u3"}),
        json!({"event": "egress_ended", "id": "EV_u4"}),
    ] {
        deliver(&api, event).await.assert_status(200);
    }
    assert_eq!(live_detail(&api, &id).await["status"], "preparing");
}

#[tokio::test]
async fn without_livekit_configured_webhooks_are_refused() {
    let api = TestApp::new().await;
    let (body, auth) = signed_webhook_with(
        &json!({"event": "room_finished", "id": "EV"}),
        API_SECRET,
        600,
    );
    post_webhook(&api, &body, Some(&auth))
        .await
        .assert_error(401, "unauthorized");
}
