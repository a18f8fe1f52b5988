//! A live start: the room, the agent's dispatch and the viewer token, and every way the launch fails.

use serde_json::{Value, json};

use super::deliver;
use crate::common::fake_livekit::{
    API_KEY, API_SECRET, Call, FakeLiveKit, participant_event, verify_jwt,
};
use crate::common::*;

fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

#[tokio::test]
async fn live_start_creates_room_dispatches_agent_and_issues_viewer_token() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder()
        .with_livekit(&fake)
        .with_agent_name("host-agent")
        .await;
    let (id, room, body) = start_live(&api, 60).await;

    let fields = field_names(&body);
    assert_eq!(
        fields,
        [
            "agent_dispatched",
            "created_at",
            "destinations",
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

    // One Twirp call: the room, with the host's dispatch as its own, so that LiveKit makes
    // no automatic dispatch (docs/livekit.md, "One host").
    let calls = fake.calls();
    assert_eq!(fake.methods(), ["livekit.RoomService/CreateRoom"]);
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
    let [dispatch] = create.agents.as_slice() else {
        panic!("one dispatch: {:?}", create.agents)
    };
    assert_eq!(dispatch.agent_name, "host-agent");
    assert_eq!(
        dispatch.restart_policy,
        livekit_protocol::JobRestartPolicy::JrpNever as i32,
        "the service owns every re-dispatch"
    );
    let metadata: Value = serde_json::from_str(&dispatch.metadata).unwrap();
    assert_eq!(metadata["stream_id"], id.as_str());
    assert_eq!(metadata["product_name"], "Glow Serum");
    assert_eq!(fake.dispatches(&room).len(), 1, "LiveKit's only dispatch");

    let detail = live_detail(&api, &id).await;
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
    let api = TestApp::builder().with_livekit(&fake).await;
    start_live(&api, 5).await;
    let Call::CreateRoom(create) = &fake.calls()[0].call else {
        panic!()
    };
    assert_eq!(create.agents[0].agent_name, "stream-host");
}

#[tokio::test]
async fn room_failure_is_launch_failed_with_the_stream_in_error() {
    let fake = FakeLiveKit::start().await;
    fake.fail("livekit.RoomService/CreateRoom");
    let api = TestApp::builder().with_livekit(&fake).await;
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
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["status"], "error");
    assert!(detail["ended_at"].is_string());
    assert_eq!(api.events_of(&id).await, ["stream.error"]);
    api.assert_end_reason(&Keys::live_a(), &id, "error", Some("launch_failed"))
        .await;
    assert_eq!(api.active_streams("brand_a").await, 0);
}

#[tokio::test]
async fn an_unreachable_livekit_is_launch_failed() {
    let api = TestApp::builder()
        .with_livekit_at("http://127.0.0.1:9")
        .await;
    api.skip_outbox_check(
        "LiveKit is never reachable: the failed stream's room deletion stays pending",
    );
    api.start(&Keys::live_a(), json!({}))
        .await
        .assert_error(502, "launch_failed");
    assert_eq!(api.active_streams("brand_a").await, 0);
}

/// A 50,000-character script reaches the AI host, and rides on no item that lists, analytics,
/// viewer counts or transitions read or write: it is kept once, apart (ARCHITECTURE.md, "Where each rule
/// lives").
#[tokio::test]
async fn a_long_script_is_dispatched_and_kept_off_the_streams_items() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
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
            Call::CreateRoom(room) => room.agents.first().map(|d| d.metadata.clone()),
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
