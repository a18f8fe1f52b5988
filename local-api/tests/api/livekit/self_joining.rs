//! The host as LiveKit runs it (docs/livekit.md, "One host" and "The agent contract"): agents
//! that come by themselves after a dispatch, each dispatch a new job, crashes reported as
//! LiveKit reports them. Nothing here sends a host's webhook by hand: the fake LiveKit's rooms
//! send what LiveKit would, on both backends.

use chrono::Duration;
use serde_json::{Value, json};

use crate::common::fake_livekit::{Agents, FakeLiveKit};
use crate::common::*;

/// A live-key stream of 30 minutes on a fake LiveKit whose agents behave as `agents`; its id
/// and room, LiveKit's webhooks of the launch sent.
async fn started(agents: Agents) -> (TestApp, FakeLiveKit, String, String) {
    let fake = FakeLiveKit::start().await;
    fake.agents(agents);
    let api = TestApp::builder().with_livekit(&fake).await;
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": 30}))
        .await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let room = r.body["room_name"].as_str().unwrap().to_owned();
    api.livekit_sends().await;
    (api, fake, id, room)
}

async fn detail(api: &TestApp, id: &str) -> Value {
    api.get(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .body
}

async fn sweep(api: &TestApp) {
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
}

/// The one host in `room`, as LiveKit lists it.
fn only_host(fake: &FakeLiveKit, room: &str) -> String {
    let hosts = fake.hosts(room);
    assert_eq!(hosts.len(), 1, "{hosts:?}");
    hosts[0].identity.clone()
}

#[tokio::test]
async fn the_host_comes_by_itself_after_the_rooms_own_dispatch() {
    let (api, fake, id, room) = started(Agents::JoinAtOnce).await;
    let shown = detail(&api, &id).await;
    assert_eq!(shown["status"], "live");
    // The room's one dispatch, asked JRP_NEVER: LiveKit adds no automatic one.
    let dispatches = fake.dispatches(&room);
    assert_eq!(dispatches.len(), 1, "{dispatches:?}");
    assert_eq!(dispatches[0].agent_name, "stream-host");
    assert_eq!(
        dispatches[0].restart_policy,
        livekit_protocol::JobRestartPolicy::JrpNever as i32
    );
    only_host(&fake, &room);
}

#[tokio::test]
async fn a_slow_agent_is_never_joined_by_a_second_host() {
    let (api, fake, id, room) = started(Agents::Slow).await;
    // The read-back after 20 s finds no host; the retry after 60 s reads the room again,
    // deletes the slow job's dispatch and dispatches once more.
    api.advance(Duration::seconds(21));
    sweep(&api).await;
    api.advance_and_fire(Duration::seconds(40)).await;
    assert_eq!(fake.dispatches_made(), 2);
    assert_eq!(fake.dispatches(&room).len(), 1, "the first one deleted");
    // The slow worker gets there at last: only the job that still exists joins.
    fake.start_pending_agents();
    api.livekit_sends().await;
    assert_eq!(detail(&api, &id).await["status"], "live");
    only_host(&fake, &room);
    // Later retries and read-backs find the host and dispatch no one.
    for _ in 0..4 {
        api.advance_and_fire(Duration::seconds(61)).await;
        sweep(&api).await;
    }
    api.livekit_sends().await;
    assert_eq!(fake.dispatches_made(), 2);
    only_host(&fake, &room);
}

#[tokio::test]
async fn a_lost_join_is_read_back_and_the_show_is_live_as_of_the_hosts_join() {
    let fake = FakeLiveKit::start().await;
    fake.agents(Agents::JoinAtOnce);
    fake.lose_next_webhooks(1);
    let api = TestApp::builder().with_livekit(&fake).await;
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": 30}))
        .await;
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let joined = api.now();
    assert_eq!(api.livekit_sends().await, 0, "the join was lost");
    assert_eq!(detail(&api, &id).await["status"], "preparing");
    api.advance(Duration::seconds(21));
    sweep(&api).await;
    let shown = detail(&api, &id).await;
    assert_eq!(shown["status"], "live");
    assert_eq!(at(&shown, "started_at"), joined);
    assert_eq!(api.events_of(&id).await, ["stream.started"]);
    // No second host, and no preparing timeout for a show that is on air.
    api.advance_and_fire(Duration::minutes(6)).await;
    sweep(&api).await;
    assert_eq!(detail(&api, &id).await["status"], "live");
    assert_eq!(fake.dispatches_made(), 1);
}

#[tokio::test]
async fn a_crash_as_livekit_reports_it_opens_the_window_and_the_show_goes_on() {
    let (api, fake, id, room) = started(Agents::JoinAtOnce).await;
    api.advance(Duration::minutes(3));
    // The agent's code raised: LiveKit reports CLIENT_INITIATED, without `lsh.finished`.
    let host = only_host(&fake, &room);
    fake.host_leaves(&room, &host, "CLIENT_INITIATED", false);
    api.livekit_sends().await;
    // The window's dispatch brought a new host at once, into the same show.
    assert_eq!(detail(&api, &id).await["status"], "live");
    assert_ne!(only_host(&fake, &room), host);
    assert_eq!(fake.dispatches_made(), 2);
    assert_eq!(fake.dispatches(&room).len(), 1, "the crashed job's deleted");
    assert_eq!(api.advance_and_fire(Duration::minutes(2)).await, 0);
    assert_eq!(api.events_of(&id).await, ["stream.started"]);
}

#[tokio::test]
async fn a_host_that_finishes_on_purpose_ends_the_show_and_leaves_nothing() {
    let (api, fake, id, room) = started(Agents::JoinAtOnce).await;
    api.advance(Duration::minutes(3));
    let host = only_host(&fake, &room);
    fake.host_leaves(&room, &host, "CLIENT_INITIATED", true);
    api.livekit_sends().await;
    api.assert_end_reason(&Keys::live_a(), &id, "ended", Some("host_left"))
        .await;
    assert_eq!(at(&detail(&api, &id).await, "ended_at"), api.now());
    assert_eq!(fake.dispatches_made(), 1);
    assert!(!fake.rooms().contains(&room), "its room deleted");
    assert!(fake.dispatches(&room).is_empty());
}

#[tokio::test]
async fn an_avatar_or_a_stray_agent_neither_starts_a_show_nor_holds_it() {
    let (api, fake, id, room) = started(Agents::Manual).await;
    // A stray automatic agent, and an avatar publishing for the host: both kind AGENT.
    let stray = fake.agent_joins_with(&room, &[("lk.agent_name", "")]);
    fake.agent_joins_with(
        &room,
        &[
            ("lk.agent_name", "stream-host"),
            ("lk.publish_on_behalf", "agent-AJ_host"),
        ],
    );
    api.livekit_sends().await;
    assert_eq!(detail(&api, &id).await["status"], "preparing");
    let host = fake.agent_joins_with(&room, &[("lk.agent_name", "stream-host")]);
    api.livekit_sends().await;
    assert_eq!(detail(&api, &id).await["status"], "live");
    // The stray's leave changes nothing.
    fake.leaves(&room, &stray.identity, "CLIENT_INITIATED");
    api.livekit_sends().await;
    assert_eq!(fake.dispatches_made(), 1);
    // The host's drop opens the window although the avatar is still there.
    fake.host_leaves(&room, &host.identity, "CONNECTION_TIMEOUT", false);
    api.livekit_sends().await;
    assert_eq!(fake.dispatches_made(), 2, "the window's dispatch");
    api.advance_and_fire(Duration::seconds(61)).await;
    api.assert_end_reason(&Keys::live_a(), &id, "error", Some("host_lost"))
        .await;
}

#[tokio::test]
async fn a_second_host_that_comes_by_itself_is_removed() {
    let (api, fake, id, room) = started(Agents::JoinAtOnce).await;
    let host = only_host(&fake, &room);
    // A job LiveKit restarted, or a worker of another deploy: a second host.
    fake.agent_joins_with(&room, &[("lk.agent_name", "stream-host")]);
    api.livekit_sends().await;
    assert_eq!(only_host(&fake, &room), host);
    assert_eq!(detail(&api, &id).await["status"], "live");
    assert_eq!(fake.dispatches_made(), 1, "its removal opened no window");
    assert_eq!(api.events_of(&id).await, ["stream.started"]);
}
