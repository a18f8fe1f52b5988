//! A show on the fake LiveKit, driven by the webhooks LiveKit signs: the fixture of the host's
//! lifecycle tests (reconnect.rs, one_host.rs); and one whose host came by itself, for the
//! read-backs' tests (host_read_back.rs, viewer_read_back.rs).

use chrono::Duration;
use serde_json::{Value, json};

use crate::common::fake_livekit::{
    Agents, FakeLiveKit, FakeParticipant, agent_event, signed_webhook,
};
use crate::common::*;

pub(super) struct Show {
    pub api: TestApp,
    pub fake: FakeLiveKit,
    pub id: String,
    pub room: String,
}

impl Show {
    /// A live-key stream of `duration` minutes whose host joined by itself: live.
    pub async fn live(duration: u32) -> Show {
        Show::live_configured(std::convert::identity, duration).await
    }

    /// [`Show::live`] on an app that `configure` configured further.
    pub async fn live_configured(
        configure: impl FnOnce(TestAppBuilder) -> TestAppBuilder,
        duration: u32,
    ) -> Show {
        let show = Show::preparing_configured(configure, duration).await;
        show.host_joins().await;
        assert_eq!(show.detail().await["status"], "live");
        show
    }

    pub async fn preparing(duration: u32) -> Show {
        Show::preparing_configured(std::convert::identity, duration).await
    }

    pub async fn preparing_configured(
        configure: impl FnOnce(TestAppBuilder) -> TestAppBuilder,
        duration: u32,
    ) -> Show {
        let fake = FakeLiveKit::start().await;
        // Each dispatch's agent starts when the test says (`host_joins`), as a cold worker's
        // does: a dispatch deleted before that never brings its agent.
        fake.agents(Agents::Slow);
        let api = configure(TestApp::builder().with_livekit(&fake)).await;
        let r = api
            .start(&Keys::live_a(), json!({"duration_minutes": duration}))
            .await;
        r.assert_status(201);
        let id = r.body["stream_id"].as_str().unwrap().to_owned();
        let room = r.body["room_name"].as_str().unwrap().to_owned();
        Show {
            api,
            fake,
            id,
            room,
        }
    }

    /// The agent of the room's live dispatch joins, and LiveKit sends what it sends.
    pub async fn host_joins(&self) {
        self.fake.start_pending_agents();
        self.api.livekit_sends().await;
    }

    /// The host in the room leaves with `reason` (`finished`: it set `lsh.finished` first),
    /// and LiveKit sends what it sends.
    pub async fn host_leaves(&self, reason: &str, finished: bool) {
        let host = self.host();
        self.fake
            .host_leaves(&self.room, &host.identity, reason, finished);
        self.api.livekit_sends().await;
    }

    /// The host in the room now.
    pub fn host(&self) -> FakeParticipant {
        let hosts = self.fake.hosts(&self.room);
        assert_eq!(hosts.len(), 1, "one host in {}: {hosts:?}", self.room);
        hosts[0].clone()
    }

    /// Agent `sid` joins or leaves (with `reason`) now, as LiveKit signs it: an agent other
    /// than the dispatches' (a test's own).
    pub async fn agent(&self, event: &str, sid: &str, reason: Option<&str>) {
        let id = format!("EV_{}", uuid::Uuid::new_v4().simple());
        let event = agent_event(event, &self.room, sid, reason, &id, self.api.now());
        self.send(&event).await;
    }

    pub async fn send(&self, event: &Value) {
        self.api
            .post_livekit(&signed_webhook(event))
            .await
            .assert_status(200);
    }

    pub async fn detail(&self) -> Value {
        self.api
            .get(&format!("/streams/{}", self.id), &Keys::live_a())
            .await
            .body
    }

    pub fn dispatches(&self) -> usize {
        self.fake.dispatches_made()
    }

    pub async fn events(&self) -> Vec<String> {
        self.api.events_of(&self.id).await
    }
}

/// A live show whose host came by itself: app, fake, stream id, room.
pub(super) async fn on_air() -> (TestApp, FakeLiveKit, String, String) {
    let fake = FakeLiveKit::start().await;
    fake.agents(Agents::JoinAtOnce);
    let api = TestApp::builder().with_livekit(&fake).await;
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": 30}))
        .await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let room = r.body["room_name"].as_str().unwrap().to_owned();
    api.livekit_sends().await;
    assert_eq!(detail(&api, &id).await["status"], "live");
    // Later agents never come: what follows is read back, not reported.
    fake.agents(Agents::Manual);
    (api, fake, id, room)
}

pub(super) async fn detail(api: &TestApp, id: &str) -> Value {
    api.get(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .body
}

/// The read-back interval (`HOST_READBACK_INTERVAL_SECS`, default 120) passes, and a sweep.
pub(super) async fn after_the_interval(api: &TestApp) {
    api.advance(Duration::seconds(121));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
}
