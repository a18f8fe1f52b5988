//! Live streams on LiveKit (docs/livekit.md) against a fake
//! LiveKit server that speaks the real Twirp protocol, and LiveKit webhooks signed the way
//! LiveKit signs them; the show going on when the host drops, and room cleanup.

mod events;
mod host_read_back;
mod launch;
mod newer_values;
mod one_host;
mod opening_surge;
mod popular_show;
mod preparing_timeout;
mod read_back_budget;
mod read_back_timers;
mod reconnect;
mod room_cleanup;
mod self_joining;
mod show;
mod verification;
mod viewer_read_back;
mod webhook_keys;

use serde_json::Value;

use crate::common::fake_livekit::{API_SECRET, signed_webhook_with};
use crate::common::*;

async fn post_webhook(api: &TestApp, body: &str, authorization: Option<&str>) -> Response {
    let mut request = axum::http::Request::builder()
        .method("POST")
        .uri("/livekit/webhook")
        .header("content-type", "application/webhook+json");
    if let Some(auth) = authorization {
        request = request.header("authorization", auth);
    }
    api.send(
        request
            .body(axum::body::Body::from(body.to_owned()))
            .unwrap(),
    )
    .await
}

/// Posts `event`, signed, as LiveKit would; the fake LiveKit's rooms made to agree with it, so
/// that a read-back finds what the event reported.
async fn deliver(api: &TestApp, event: Value) -> Response {
    let (body, auth) = signed_webhook_with(&event, API_SECRET, 600);
    api.mirror_livekit(&event);
    post_webhook(api, &body, Some(&auth)).await
}

/// A live key's stream whose AI host has joined: `live`, with its id and room.
async fn live_show(api: &TestApp, duration: u32) -> (String, String) {
    let (id, room, _) = start_live(api, duration).await;
    deliver(
        api,
        crate::common::fake_livekit::participant_event(
            "participant_joined",
            &room,
            Some("AGENT"),
            "EV_agent",
        ),
    )
    .await
    .assert_status(200);
    (id, room)
}
