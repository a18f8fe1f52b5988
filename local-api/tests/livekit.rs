//! Live streams on LiveKit (docs/livekit.md) against a fake LiveKit server
//! that speaks the real Twirp protocol, and LiveKit webhooks signed the way LiveKit signs them.

mod common;

use std::sync::Arc;

use base64::Engine;
use chrono::Duration;
use common::fake_livekit::{
    API_KEY, API_SECRET, Call, FakeLiveKit, participant_event, sign_jwt, verify_jwt,
};
use common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

async fn live_api(fake: &FakeLiveKit, extra: &[(&str, &str)]) -> TestApi {
    let config = fake.config();
    let mut vars: Vec<(&str, &str)> = config.iter().map(|(k, v)| (*k, v.as_str())).collect();
    vars.extend_from_slice(extra);
    TestApi::with_config(&vars).await
}

/// Starts a live stream; returns (stream id, room name, response body).
async fn start_live(api: &TestApi, duration: u32) -> (String, String, Value) {
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": duration}))
        .await;
    r.assert_status(201);
    (
        r.body["stream_id"].as_str().unwrap().to_owned(),
        r.body["room_name"].as_str().unwrap().to_owned(),
        r.body.clone(),
    )
}

fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A LiveKit webhook request: (body, Authorization header), signed with `secret`.
fn livekit_webhook(event: Value, secret: &str, expires_in: i64) -> (String, String) {
    let body = event.to_string();
    let sha = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(body.as_bytes()));
    let now = unix_now();
    let claims = json!({"iss": API_KEY, "nbf": now - 10, "exp": now + expires_in, "sha256": sha});
    (body, sign_jwt(&claims, secret))
}

async fn post_webhook(api: &TestApi, body: &str, authorization: Option<&str>) -> Response {
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

async fn deliver(api: &TestApi, event: Value) -> Response {
    let (body, auth) = livekit_webhook(event, API_SECRET, 600);
    post_webhook(api, &body, Some(&auth)).await
}

async fn status_of(api: &TestApi, id: &str) -> Value {
    api.get(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .body
}

#[tokio::test]
async fn live_start_creates_room_dispatches_agent_and_issues_viewer_token() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[("LIVEKIT_AGENT_NAME", "host-agent")]).await;
    let (id, room, body) = start_live(&api, 60).await;

    let mut fields: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "agent_dispatched",
            "created_at",
            "dispatch_method",
            "room_name",
            "status",
            "stream_id",
            "viewer_token",
            "ws_url"
        ]
    );
    assert_eq!(body["status"], "preparing");
    assert_eq!(body["agent_dispatched"], true);
    assert_eq!(body["dispatch_method"], "explicit");
    assert_eq!(body["ws_url"], fake.url.replace("http://", "ws://"));

    // The viewer token: subscribe-only, for this room, valid past the stream's end.
    let claims = verify_jwt(body["viewer_token"].as_str().unwrap(), API_SECRET)
        .expect("signed with the secret");
    assert_eq!(claims["iss"], API_KEY);
    let video = &claims["video"];
    assert_eq!(video["room"], room.as_str());
    assert_eq!(video["roomJoin"], true);
    assert_eq!(video["canSubscribe"], true);
    assert_eq!(video["canPublish"], false, "written explicitly");
    assert_eq!(video["canPublishData"], false, "written explicitly");
    assert!(video.get("roomAdmin").is_none() && video.get("roomCreate").is_none());
    assert!(claims["exp"].as_i64().unwrap() >= unix_now() + 60 * 60 + 300);

    // The Twirp calls, in order, with the admin grants each needs.
    let calls = fake.calls();
    assert_eq!(
        fake.methods(),
        [
            "livekit.RoomService/CreateRoom",
            "livekit.AgentDispatchService/CreateDispatch"
        ]
    );
    let Call::CreateRoom(create) = &calls[0].call else {
        panic!()
    };
    assert_eq!(create.name, room);
    assert!(
        create.empty_timeout >= 300 + 60 * 60,
        "an agent-only room stays open: {}",
        create.empty_timeout
    );
    assert_eq!(calls[0].claims["video"]["roomCreate"], true);
    let Call::CreateDispatch(dispatch) = &calls[1].call else {
        panic!()
    };
    assert_eq!(dispatch.agent_name, "host-agent");
    assert_eq!(dispatch.room, room);
    let metadata: Value = serde_json::from_str(&dispatch.metadata).unwrap();
    assert_eq!(metadata["stream_id"], id.as_str());
    assert_eq!(metadata["product_name"], "Glow Serum");
    assert_eq!(calls[1].claims["video"]["roomAdmin"], true);
    assert_eq!(calls[1].claims["video"]["room"], room.as_str());

    let detail = status_of(&api, &id).await;
    assert_eq!(detail["status"], "preparing");
    assert_eq!(detail["viewer_count"], 0);
    assert!(detail.get("test").is_none());
    assert!(
        api.events_of(&id).await.is_empty(),
        "no event while preparing"
    );
    assert_eq!(api.active_streams("brand_a").await, 1);
}

#[tokio::test]
async fn the_default_agent_name_is_stream_host() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    start_live(&api, 5).await;
    let Call::CreateDispatch(dispatch) = &fake.calls()[1].call else {
        panic!()
    };
    assert_eq!(dispatch.agent_name, "stream-host");
}

#[tokio::test]
async fn room_failure_is_launch_failed_with_the_stream_in_error() {
    let fake = FakeLiveKit::start().await;
    fake.fail("livekit.RoomService/CreateRoom");
    let api = live_api(&fake, &[]).await;
    let r = api.start(&Keys::live_a(), json!({})).await;
    r.assert_error(502, "launch_failed");
    assert!(!r.body.to_string().contains(API_SECRET));
    assert!(
        !fake
            .methods()
            .contains(&"livekit.AgentDispatchService/CreateDispatch".to_owned())
    );
    let list = api.get("/streams", &Keys::live_a()).await;
    let id = list.body["streams"][0]["id"].as_str().unwrap().to_owned();
    let detail = status_of(&api, &id).await;
    assert_eq!(detail["status"], "error");
    assert!(detail["ended_at"].is_string());
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
    api.assert_end_reason(&Keys::live_a(), &id, "error", Some("launch_failed"))
        .await;
    assert_eq!(api.active_streams("brand_a").await, 0);
}

#[tokio::test]
async fn dispatch_failure_is_launch_failed_and_the_room_is_deleted() {
    let fake = FakeLiveKit::start().await;
    fake.fail("livekit.AgentDispatchService/CreateDispatch");
    let api = live_api(&fake, &[]).await;
    api.start(&Keys::live_a(), json!({}))
        .await
        .assert_error(502, "launch_failed");
    let calls = fake.calls();
    assert_eq!(calls.len(), 3);
    let (Call::CreateRoom(created), Call::DeleteRoom(deleted)) = (&calls[0].call, &calls[2].call)
    else {
        panic!()
    };
    assert_eq!(created.name, deleted.room);
    assert_eq!(api.active_streams("brand_a").await, 0);
    assert!(
        api.timers().pending().is_empty(),
        "no preparing timeout for a failed launch"
    );
}

#[tokio::test]
async fn an_unreachable_livekit_is_launch_failed() {
    let api = TestApi::with_config(&[
        ("LIVEKIT_URL", "http://127.0.0.1:9"),
        ("LIVEKIT_API_KEY", API_KEY),
        ("LIVEKIT_API_SECRET", API_SECRET),
    ])
    .await;
    api.start(&Keys::live_a(), json!({}))
        .await
        .assert_error(502, "launch_failed");
    assert_eq!(api.active_streams("brand_a").await, 0);
}

#[tokio::test]
async fn agent_joining_makes_the_stream_live_once() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    let (id, room, _) = start_live(&api, 45).await;
    api.advance(Duration::seconds(20));

    let r = deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_agent1"),
    )
    .await;
    r.assert_status(200);
    let detail = status_of(&api, &id).await;
    assert_eq!(detail["status"], "live");
    assert_eq!(detail["started_at"], "2026-03-02T12:00:50.000Z");
    assert_eq!(api.events_of(&id).await, ["stream.started"]);

    // The same event again, and another agent join, change nothing.
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_agent1"),
    )
    .await
    .assert_status(200);
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_agent2"),
    )
    .await
    .assert_status(200);
    assert_eq!(api.events_of(&id).await, ["stream.started"]);

    // The preparing timeout no longer applies; the duration end does.
    assert_eq!(api.advance_and_fire(Duration::minutes(10)).await, 0);
    assert_eq!(status_of(&api, &id).await["status"], "live");
    assert_eq!(api.advance_and_fire(Duration::minutes(35)).await, 1);
    let detail = status_of(&api, &id).await;
    assert_eq!(detail["status"], "ended");
    assert_eq!(detail["ended_at"], "2026-03-02T12:45:50.000Z");
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    assert_eq!(
        fake.methods().last().unwrap(),
        "livekit.RoomService/DeleteRoom"
    );
}

#[tokio::test]
async fn viewers_move_the_count_never_below_zero() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    let (id, room, _) = start_live(&api, 30).await;
    // Before the agent joins, viewers are not counted.
    deliver(
        &api,
        participant_event("participant_joined", &room, None, "EV_early"),
    )
    .await
    .assert_status(200);
    assert_eq!(status_of(&api, &id).await["viewer_count"], 0);
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_a"),
    )
    .await;

    for (i, kind) in [Some("STANDARD"), None, Some("INGRESS")]
        .into_iter()
        .enumerate()
    {
        deliver(
            &api,
            participant_event("participant_joined", &room, kind, &format!("EV_j{i}")),
        )
        .await
        .assert_status(200);
    }
    assert_eq!(status_of(&api, &id).await["viewer_count"], 3);
    // A replayed join is not counted twice.
    deliver(
        &api,
        participant_event("participant_joined", &room, None, "EV_j1"),
    )
    .await;
    assert_eq!(status_of(&api, &id).await["viewer_count"], 3);
    for i in 0..5 {
        deliver(
            &api,
            participant_event(
                "participant_left",
                &room,
                Some("STANDARD"),
                &format!("EV_l{i}"),
            ),
        )
        .await
        .assert_status(200);
    }
    assert_eq!(status_of(&api, &id).await["viewer_count"], 0);
    deliver(
        &api,
        participant_event("participant_joined", &room, None, "EV_j9"),
    )
    .await;
    assert_eq!(status_of(&api, &id).await["viewer_count"], 1);
    assert_eq!(status_of(&api, &id).await["status"], "live");
    assert_eq!(listed_viewer_count(&api, &id).await, 1);
}

/// The viewer count of stream `id` as `GET /streams` lists it.
async fn listed_viewer_count(api: &TestApi, id: &str) -> Value {
    let list = api.get("/streams", &Keys::live_a()).await.body;
    list["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .map(|s| s["viewer_count"].clone())
        .unwrap()
}

/// A burst of viewers joining at once: every join counts, and the list shows the same count
/// as the detail.
#[tokio::test]
async fn a_burst_of_joins_counts_every_viewer_in_detail_and_list() {
    let fake = FakeLiveKit::start().await;
    let api = Arc::new(live_api(&fake, &[]).await);
    let (id, room, _) = start_live(&api, 30).await;
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_agent"),
    )
    .await
    .assert_status(200);
    let statuses = concurrently(12, |i| {
        let (api, room) = (api.clone(), room.clone());
        async move {
            deliver(
                &api,
                participant_event("participant_joined", &room, None, &format!("EV_burst{i}")),
            )
            .await
            .status
            .as_u16()
        }
    })
    .await;
    assert_eq!(statuses.get(&200), Some(&12), "{statuses:?}");
    assert_eq!(status_of(&api, &id).await["viewer_count"], 12);
    assert_eq!(listed_viewer_count(&api, &id).await, 12);
}

#[tokio::test]
async fn the_agent_leaving_ends_the_stream() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    let (id, room, _) = start_live(&api, 30).await;
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_a"),
    )
    .await;
    deliver(
        &api,
        participant_event("participant_joined", &room, None, "EV_v"),
    )
    .await;
    api.assert_end_reason(&Keys::live_a(), &id, "live", None)
        .await;
    deliver(
        &api,
        participant_event("participant_left", &room, Some("AGENT"), "EV_al"),
    )
    .await
    .assert_status(200);
    api.assert_end_reason(&Keys::live_a(), &id, "ended", Some("host_left"))
        .await;
    let detail = status_of(&api, &id).await;
    assert_eq!(detail["status"], "ended");
    assert_eq!(detail["viewer_count"], 1, "the final viewer count stays");
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    assert_eq!(api.active_streams("brand_a").await, 0);
    assert!(api.timers().pending().is_empty());
}

#[tokio::test]
async fn room_finished_ends_a_live_stream_and_races_delete_once() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    let (id, room, _) = start_live(&api, 30).await;
    // room_finished while preparing changes nothing (the preparing timeout handles it).
    deliver(
        &api,
        json!({"event": "room_finished", "room": {"name": room}, "id": "EV_rf0"}),
    )
    .await
    .assert_status(200);
    assert_eq!(status_of(&api, &id).await["status"], "preparing");

    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_a"),
    )
    .await;
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    assert_eq!(
        fake.methods().last().unwrap(),
        "livekit.RoomService/DeleteRoom"
    );
    deliver(
        &api,
        json!({"event": "room_finished", "room": {"name": room}, "id": "EV_rf1"}),
    )
    .await
    .assert_status(200);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);
    api.assert_end_reason(&Keys::live_a(), &id, "ended", Some("requested"))
        .await;

    // And the other way round: the provider first, then the DELETE finds nothing live.
    let (id2, room2, _) = start_live(&api, 30).await;
    deliver(
        &api,
        participant_event("participant_joined", &room2, Some("AGENT"), "EV_b"),
    )
    .await;
    deliver(
        &api,
        json!({"event": "room_finished", "room": {"name": room2}, "id": "EV_rf2"}),
    )
    .await;
    api.assert_end_reason(&Keys::live_a(), &id2, "ended", Some("room_finished"))
        .await;
    api.delete(&format!("/streams/{id2}"), &Keys::live_a())
        .await
        .assert_error(404, "not_found");
    assert_eq!(
        api.events_of(&id2).await,
        ["stream.started", "stream.ended"]
    );
}

#[tokio::test]
async fn preparing_timeout_moves_to_error_and_beats_a_late_agent() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    let (id, room, _) = start_live(&api, 30).await;
    // No agent: dispatched again at 60 s and 120 s (3 dispatches in all), then nothing until
    // the timeout.
    assert_eq!(api.advance_and_fire(Duration::seconds(60)).await, 1);
    assert_eq!(api.advance_and_fire(Duration::seconds(60)).await, 1);
    assert_eq!(api.advance_and_fire(Duration::seconds(179)).await, 0);
    assert_eq!(fake.count("livekit.AgentDispatchService/CreateDispatch"), 3);
    api.assert_end_reason(&Keys::live_a(), &id, "preparing", None)
        .await;
    assert_eq!(api.advance_and_fire(Duration::seconds(1)).await, 1);
    api.assert_end_reason(&Keys::live_a(), &id, "error", Some("preparing_timeout"))
        .await;
    let detail = status_of(&api, &id).await;
    assert_eq!(detail["status"], "error");
    assert_eq!(detail["ended_at"], "2026-03-02T12:05:30.000Z");
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
    assert_eq!(
        fake.methods().last().unwrap(),
        "livekit.RoomService/DeleteRoom"
    );
    assert_eq!(api.active_streams("brand_a").await, 0);
    // The agent arriving afterwards changes nothing.
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "EV_late"),
    )
    .await
    .assert_status(200);
    assert_eq!(status_of(&api, &id).await["status"], "error");
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
}

#[tokio::test]
async fn the_preparing_timeout_is_configurable() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[("PREPARING_TIMEOUT_SECS", "60")]).await;
    let (id, _, _) = start_live(&api, 30).await;
    assert_eq!(api.advance_and_fire(Duration::seconds(60)).await, 1);
    assert_eq!(status_of(&api, &id).await["status"], "error");
}

#[tokio::test]
async fn unverified_webhooks_get_401_and_change_nothing() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    let (id, room, _) = start_live(&api, 30).await;
    let event = participant_event("participant_joined", &room, Some("AGENT"), "EV_x");

    let (body, _) = livekit_webhook(event.clone(), API_SECRET, 600);
    let (_, wrong_secret) =
        livekit_webhook(event.clone(), "another-secret-entirely-0123456789", 600);
    let (_, expired) = livekit_webhook(event.clone(), API_SECRET, -3600);
    let (_, valid) = livekit_webhook(event.clone(), API_SECRET, 600);
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
    assert_eq!(status_of(&api, &id).await["status"], "preparing");
    // The untampered, validly signed event still applies: its id was never recorded.
    post_webhook(&api, &body, Some(&valid))
        .await
        .assert_status(200);
    assert_eq!(status_of(&api, &id).await["status"], "live");
}

#[tokio::test]
async fn unknown_rooms_and_events_are_acknowledged() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    let (id, room, _) = start_live(&api, 30).await;
    for event in [
        participant_event("participant_joined", "no-such-room", Some("AGENT"), "EV_u1"),
        json!({"event": "track_published", "room": {"name": room}, "id": "EV_u2"}),
        json!({"event": "room_started", "room": {"name": room}, "id": "EV_u3"}),
        json!({"event": "egress_ended", "id": "EV_u4"}),
    ] {
        deliver(&api, event).await.assert_status(200);
    }
    assert_eq!(status_of(&api, &id).await["status"], "preparing");
}

#[tokio::test]
async fn without_livekit_configured_webhooks_are_refused() {
    let api = TestApi::new().await;
    let (body, auth) = livekit_webhook(
        json!({"event": "room_finished", "id": "EV"}),
        API_SECRET,
        600,
    );
    post_webhook(&api, &body, Some(&auth))
        .await
        .assert_error(401, "unauthorized");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_agent_join_and_timeout_give_one_transition() {
    let fake = FakeLiveKit::start().await;
    let api = Arc::new(live_api(&fake, &[]).await);
    for round in 0..5 {
        let (id, room, _) = start_live(&api, 30).await;
        api.advance(Duration::seconds(300));
        let timers = api.timers().take_due(api.now());
        let join = {
            let api = api.clone();
            let event = participant_event(
                "participant_joined",
                &room,
                Some("AGENT"),
                &format!("EV_race{round}"),
            );
            tokio::spawn(async move { deliver(&api, event).await.status.as_u16() })
        };
        let fire = {
            let api = api.clone();
            tokio::spawn(async move {
                for timer in timers {
                    hosting_app::service::timers::fire(&api.runtime.app, &timer)
                        .await
                        .unwrap();
                }
            })
        };
        assert_eq!(join.await.unwrap(), 200);
        fire.await.unwrap();
        let events = api.events_of(&id).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let status = status_of(&api, &id).await["status"].clone();
        assert_eq!(
            status,
            if events[0] == "stream.started" {
                "live"
            } else {
                "error"
            }
        );
        if status == "live" {
            api.delete(&format!("/streams/{id}"), &Keys::live_a())
                .await
                .assert_status(200);
        }
    }
}

/// A 50,000-character script reaches the AI host, and rides on no item that lists, analytics,
/// viewer counts or transitions read or write: it is kept once, apart (README, "How the parts
/// fit").
#[tokio::test]
async fn a_long_script_is_dispatched_and_kept_off_the_streams_items() {
    let fake = FakeLiveKit::start().await;
    let api = live_api(&fake, &[]).await;
    let script = "Say hello. ".repeat(5_000)[..50_000].to_owned();
    let r = api
        .start(
            &Keys::live_a(),
            json!({"duration_minutes": 30, "script": script}),
        )
        .await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let room = r.body["room_name"].as_str().unwrap().to_owned();
    let dispatched = fake
        .calls()
        .into_iter()
        .find_map(|call| match call.call {
            Call::CreateDispatch(dispatch) => Some(dispatch.metadata),
            _ => None,
        })
        .expect("the agent was dispatched");
    let metadata: Value = serde_json::from_str(&dispatched).unwrap();
    assert_eq!(metadata["script"], script.as_str());

    let uuid = uuid::Uuid::parse_str(&id).unwrap();
    let store = api.runtime.app.store.clone();
    assert_eq!(
        store.stream_script(uuid).await.unwrap().as_deref(),
        Some(script.as_str())
    );
    assert_eq!(store.get_stream(uuid).await.unwrap().unwrap().script, None);
    // Viewers come and go, and the stream ends: still nothing of the script on its items.
    deliver(
        &api,
        participant_event("participant_joined", &room, Some("AGENT"), "agent-1"),
    )
    .await;
    api.call(
        "DELETE",
        &format!("/streams/{id}"),
        Some(&Keys::live_a()),
        None,
    )
    .await
    .assert_status(200);
    if let Some(dynamo) = api.dynamo() {
        let items = dynamo
            .client()
            .scan()
            .table_name(api.table().unwrap())
            .send()
            .await
            .unwrap()
            .items
            .unwrap_or_default();
        let with_script: Vec<String> = items
            .iter()
            .filter(|item| item.contains_key("script"))
            .map(|item| format!("{:?}/{:?}", item["pk"], item["sk"]))
            .collect();
        assert_eq!(with_script.len(), 1, "{with_script:?}");
        assert!(
            with_script[0].contains(&format!("STREAM#{id}")) && with_script[0].contains("SCRIPT")
        );
        for item in items.iter().filter(|item| !item.contains_key("script")) {
            let bytes: usize = item
                .iter()
                .map(|(name, value)| name.len() + format!("{value:?}").len())
                .sum();
            assert!(bytes < 4_096, "{bytes} bytes: {:?}", item.get("pk"));
        }
    }
}
