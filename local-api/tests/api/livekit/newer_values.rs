//! What a LiveKit newer than this build sends (docs/livekit.md, "LiveKit webhooks"): a
//! disconnect reason or a participant kind the SDK does not know is read, not refused; a signed
//! body that is no event is `400`, not `401`; and a request without a valid token is refused
//! before its body is read.

use std::time::Duration as StdDuration;

use chrono::Duration;
use serde_json::{Value, json};

use super::{deliver, live_show, post_webhook};
use crate::common::fake_livekit::{API_SECRET, FakeLiveKit, agent_event, signed_webhook_with};
use crate::common::*;

/// The agent leaves with `reason` as LiveKit writes it (a name or a number).
fn agent_left(room: &str, reason: Value, id: &str, at: chrono::DateTime<chrono::Utc>) -> Value {
    // `PA_agent`: the host `live_show` let in.
    let mut event = agent_event("participant_left", room, "PA_agent", None, id, at);
    event["participant"]["disconnectReason"] = reason;
    event
}

/// A reason newer than the SDK is "any other" reason: a drop. The stream stays `live` through
/// the reconnect window, then ends `host_lost` as of the drop.
#[tokio::test]
async fn a_disconnect_reason_newer_than_the_sdk_is_a_drop() {
    for reason in [json!("SOME_FUTURE_REASON"), json!(999)] {
        let fake = FakeLiveKit::start().await;
        let api = TestApp::builder().with_livekit(&fake).await;
        let (id, room) = live_show(&api, 30).await;
        api.advance(Duration::minutes(5));
        let dropped = api.now();
        deliver(&api, agent_left(&room, reason.clone(), "EV_drop", dropped))
            .await
            .assert_status(200);
        assert_eq!(live_detail(&api, &id).await["status"], "live", "{reason}");
        api.advance_and_fire(Duration::seconds(60)).await;
        api.assert_end_reason(&Keys::live_a(), &id, "error", Some("host_lost"))
            .await;
        let detail = live_detail(&api, &id).await;
        assert_eq!(at(&detail, "ended_at"), dropped, "{reason}");
    }
}

/// A participant kind newer than the SDK is neither the host nor a viewer: nothing changes.
#[tokio::test]
async fn a_participant_kind_newer_than_the_sdk_changes_nothing() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room) = live_show(&api, 30).await;
    for (n, kind) in [json!("SOME_FUTURE_KIND"), json!(99)]
        .into_iter()
        .enumerate()
    {
        for event in ["participant_joined", "participant_left"] {
            let mut body = agent_event(
                event,
                &room,
                &format!("PX_{n}"),
                None,
                &format!("EV_{event}_{n}"),
                api.now(),
            );
            body["participant"]["kind"] = kind.clone();
            deliver(&api, body).await.assert_status(200);
        }
    }
    let detail = live_detail(&api, &id).await;
    assert_eq!(
        (detail["status"].as_str(), detail["viewer_count"].as_u64()),
        (Some("live"), Some(0)),
        "{detail}"
    );
}

/// Signed but not an event: `400`, so it is not mistaken for a forgery; LiveKit's signature is
/// still required for it (unsigned, the same body is `401`).
#[tokio::test]
async fn a_signed_body_that_is_no_event_is_400() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room) = live_show(&api, 30).await;
    for body in [
        json!("not an object"),
        json!({"event": 5, "room": {"name": room}}),
        json!({"event": "participant_left", "room": {"name": room}, "participant": {"sid": 1}}),
    ] {
        let (text, token) = signed_webhook_with(&body, API_SECRET, 600);
        post_webhook(&api, &text, Some(&token))
            .await
            .assert_error(400, "invalid_fields");
        post_webhook(&api, &text, None)
            .await
            .assert_error(401, "unauthorized");
    }
    assert_eq!(live_detail(&api, &id).await["status"], "live");
}

/// A request without a valid token is answered before its body arrives: the answer comes while
/// the client is still holding the body back.
#[tokio::test]
async fn an_unsigned_request_is_refused_before_its_body_is_read() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    for authorization in [None, Some("not a jwt")] {
        let (sender, body) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(1);
        let mut request = axum::http::Request::builder()
            .method("POST")
            .uri("/livekit/webhook");
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let request = request
            .body(axum::body::Body::from_stream(tokio_stream_from(body)))
            .unwrap();
        let answer = tokio::time::timeout(StdDuration::from_secs(5), api.send(request))
            .await
            .expect("answered without the body");
        answer.assert_error(401, "unauthorized");
        drop(sender);
    }
}

/// The receiving half of a channel as a body stream that never ends while the sender lives.
fn tokio_stream_from(
    mut receiver: tokio::sync::mpsc::Receiver<Result<bytes::Bytes, std::io::Error>>,
) -> impl futures::Stream<Item = Result<bytes::Bytes, std::io::Error>> {
    futures::stream::poll_fn(move |cx| receiver.poll_recv(cx))
}
