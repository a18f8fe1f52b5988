//! Replays (docs/recordings.md): `record` and its checks, the egress's file output against the
//! fake LiveKit, each state of a recording from `pending` to `ready`, `failed` or `expired`, its
//! events, download URLs that download the file (and expired or altered ones that do not), and
//! the test keys' path end to end. On both backends: S3 (moto behind the fault proxy) on
//! DynamoDB/SQS, the local server's folder on the embedded one.

mod checks;
mod downloads;
mod egress;
mod secrecy;

use serde_json::{Value, json};

use crate::common::fake_livekit::{Call, FakeLiveKit, signed_webhook};
use crate::common::*;

/// The brand of `Keys::test_a()` and `Keys::live_a()`.
const BRAND: &str = "brand_a";

/// The MP4 a test stream's recording is.
const SHIPPED_MP4: &[u8] = hosting_domain::recording::TEST_RECORDING_MP4;

/// An app with the fake LiveKit.
async fn app_with_livekit() -> (TestApp, FakeLiveKit) {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    (api, fake)
}

/// A stream started with `record: true` and `overrides`; its id and room.
async fn start_recorded(api: &TestApp, key: &str, overrides: Value) -> (String, String) {
    let mut body = json!({"record": true});
    for (k, v) in overrides.as_object().unwrap() {
        body[k] = v.clone();
    }
    let r = api.start(key, body).await;
    r.assert_status(201);
    (
        r.body["stream_id"].as_str().unwrap().to_owned(),
        r.body["room_name"].as_str().unwrap().to_owned(),
    )
}

/// The stream's detail as its brand reads it.
async fn detail(api: &TestApp, key: &str, id: &str) -> Value {
    let r = api.get(&format!("/streams/{id}"), key).await;
    r.assert_status(200);
    r.body
}

/// The host agent joins `room` (answered `200`).
async fn agent_joins(api: &TestApp, room: &str) {
    api.post_livekit(&signed_webhook(&crate::common::fake_livekit::agent_joined(
        room,
        &format!("EV_join_{room}"),
    )))
    .await
    .assert_status(200);
}

/// LiveKit's `egress_ended` of `egress_id` with `status`, its error, and a file result of
/// (size in bytes, duration in nanoseconds) when given, as LiveKit's protojson writes them.
async fn egress_ended(
    api: &TestApp,
    room: &str,
    egress_id: &str,
    status: &str,
    error: &str,
    file: Option<(u64, u64)>,
    event_id: &str,
) {
    let mut body = crate::common::fake_livekit::egress_event(
        "egress_ended",
        room,
        egress_id,
        status,
        &[],
        event_id,
    );
    if !error.is_empty() {
        body["egressInfo"]["error"] = json!(error);
    }
    if let Some((size, nanos)) = file {
        body["egressInfo"]["fileResults"] = json!([{
            "filename": format!("recordings/{BRAND}/x.mp4"), "startedAt": "1700000000000000000",
            "endedAt": "1700001800000000000", "duration": nanos.to_string(),
            "size": size.to_string(), "location": "s3://bucket/x.mp4"}]);
    }
    api.post_livekit(&signed_webhook(&body))
        .await
        .assert_status(200);
}

/// The `StartRoomCompositeEgress` requests made, in order.
fn starts(fake: &FakeLiveKit) -> Vec<livekit_protocol::RoomCompositeEgressRequest> {
    fake.calls()
        .into_iter()
        .filter_map(|call| match call.call {
            Call::StartEgress(req) => Some(*req),
            _ => None,
        })
        .collect()
}

/// The object key of a stream's n-th file.
fn key_of(id: &str, n: usize) -> String {
    if n == 1 {
        format!("recordings/{BRAND}/{id}.mp4")
    } else {
        format!("recordings/{BRAND}/{id}-{n}.mp4")
    }
}

/// Relays every pending event, as the relay's loop or function does.
async fn relay(api: &TestApp) {
    hosting_app::delivery::relay::sweep(&api.runtime.app, std::time::Duration::ZERO)
        .await
        .unwrap();
}

/// The bytes a download URL answers, and its status: through the local server's own router for
/// its signed URLs, over HTTP for S3's.
pub(crate) async fn download(api: &TestApp, url: &str) -> (u16, Vec<u8>) {
    let parsed = reqwest::Url::parse(url).unwrap();
    if !backend::is_dynamodb() {
        let path = match parsed.query() {
            Some(query) => format!("{}?{query}", parsed.path()),
            None => parsed.path().to_owned(),
        };
        let r = api
            .send(
                axum::http::Request::builder()
                    .uri(path)
                    .body(axum::body::Body::empty())
                    .unwrap(),
            )
            .await;
        return (r.status.as_u16(), r.bytes);
    }
    let answer = reqwest::get(url).await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.bytes().await.unwrap().to_vec())
}
