//! Destinations (docs/destinations.md): every check of a destination with its code, at start and
//! while live; the egress that pushes a live stream to them against the fake LiveKit's Egress
//! service (its requests decoded with LiveKit's own message types) and LiveKit's egress
//! webhooks; stream keys that never travel; and test keys. On both backends.

mod as_livekit_runs;
mod budgets;
mod checks;
mod egress;
mod endings;
mod faults;
mod read_back;
mod replaced_egresses;
mod secrecy;
mod test_keys;
mod while_live;

use serde_json::{Value, json};

use crate::common::fake_livekit::{Call, FakeLiveKit, signed_webhook};
use crate::common::*;

const YOUTUBE_INGEST: &str = "rtmp://a.rtmp.youtube.com/live2";
const TIKTOK_INGEST: &str = "rtmps://push-rtmp.tiktokcdn.com/live";

/// A destination item as a brand sends it.
fn destination(platform: &str, ingest_url: &str, stream_key: &str) -> Value {
    json!({"platform": platform, "ingest_url": ingest_url, "stream_key": stream_key})
}

/// Two destinations with long, recognisable keys.
fn two_destinations() -> Value {
    json!([
        destination("youtube", YOUTUBE_INGEST, "yt-key-SECRET-0001-abcd"),
        destination("tiktok", TIKTOK_INGEST, "tt-key-SECRET-0002-wxyz"),
    ])
}

/// The output URL LiveKit is given for a destination.
fn output(ingest_url: &str, stream_key: &str) -> String {
    format!("{ingest_url}/{stream_key}")
}

/// An app with the fake LiveKit.
async fn app_with_livekit() -> (TestApp, FakeLiveKit) {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    (api, fake)
}

/// A live-key stream started with `destinations`; its id and room.
async fn start_with(api: &TestApp, destinations: Value) -> (String, String) {
    let r = api
        .start(&Keys::live_a(), json!({"destinations": destinations}))
        .await;
    r.assert_status(201);
    (
        r.body["stream_id"].as_str().unwrap().to_owned(),
        r.body["room_name"].as_str().unwrap().to_owned(),
    )
}

/// A live-key stream started with `body`, its agent joined and its owed egresses started; its
/// id and room.
async fn live_with(api: &TestApp, body: Value) -> (String, String) {
    let r = api.start(&Keys::live_a(), body).await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let room = r.body["room_name"].as_str().unwrap().to_owned();
    agent_joins(api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    (id, room)
}

/// The host agent joins `room` (answered `200`).
async fn agent_joins(api: &TestApp, room: &str, event_id: &str) {
    api.post_livekit(&signed_webhook(&crate::common::fake_livekit::agent_joined(
        room, event_id,
    )))
    .await
    .assert_status(200);
}

/// A live-key stream with two destinations whose agent joined and whose egress started.
async fn airing(api: &TestApp, fake: &FakeLiveKit) -> (String, String, String) {
    let (id, room) = start_with(api, two_destinations()).await;
    agent_joins(api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    let egress_id = only_egress(fake);
    (id, room, egress_id)
}

/// The id of the one egress the fake started.
fn only_egress(fake: &FakeLiveKit) -> String {
    let egresses = fake.egresses();
    assert_eq!(egresses.len(), 1, "{egresses:?}");
    egresses.into_keys().next().unwrap()
}

/// The stream's destinations as its detail shows them.
async fn destinations_of(api: &TestApp, id: &str) -> Vec<Value> {
    live_detail(api, id).await["destinations"]
        .as_array()
        .unwrap()
        .clone()
}

/// Each destination's status, in order.
async fn statuses(api: &TestApp, id: &str) -> Vec<String> {
    destinations_of(api, id)
        .await
        .iter()
        .map(|d| d["status"].as_str().unwrap().to_owned())
        .collect()
}

/// LiveKit's webhook about `egress_id` in `room`, sent and answered `200`.
async fn egress_says(
    api: &TestApp,
    event: &str,
    room: &str,
    egress_id: &str,
    status: &str,
    results: &[(&str, &str, &str)],
    id: &str,
) {
    let body =
        crate::common::fake_livekit::egress_event(event, room, egress_id, status, results, id);
    api.post_livekit(&signed_webhook(&body))
        .await
        .assert_status(200);
}

/// The types of the stream's events, sorted: events written in one atomic step share their time,
/// and the store gives no order among them.
async fn event_types(api: &TestApp, id: &str) -> Vec<String> {
    let mut events = api.events_of(id).await;
    events.sort();
    events
}

pub(super) const YT_KEY: &str = "yt-key-SECRET-0001-abcd";
pub(super) const TT_KEY: &str = "tt-key-SECRET-0002-wxyz";

pub(super) fn yt() -> String {
    output(YOUTUBE_INGEST, YT_KEY)
}

pub(super) fn tt() -> String {
    output(TIKTOK_INGEST, TT_KEY)
}

/// The `StartRoomCompositeEgress` requests made, in order.
pub(super) fn starts(
    fake: &FakeLiveKit,
) -> Vec<(livekit_protocol::RoomCompositeEgressRequest, Value)> {
    fake.calls()
        .into_iter()
        .filter_map(|call| match call.call {
            Call::StartEgress(req) => Some((*req, call.claims)),
            _ => None,
        })
        .collect()
}
