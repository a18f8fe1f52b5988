//! A fake LiveKit server speaking the real Twirp protocol (protobuf bodies, JSON errors,
//! HS256 admin tokens): it records every call with its verified token claims, keeps the rooms
//! that exist (`DeleteRoom` of an absent room answers `not_found`, as LiveKit does), and fails
//! or hangs chosen methods on demand.
//!
//! Its Egress service is as strict as LiveKit's (livekit/egress `pkg/config/urls.go`,
//! `pkg/pipeline/controller.go`; livekit/protocol `utils/redact.go`): an output URL it cannot
//! split as `rtmp(s)://{host}(/{path})/{app}/{key}` fails the whole start with `invalid url`, a
//! Twitch ingest is swapped for another Twitch host, `UpdateStream` is refused on an egress
//! started without stream outputs, and every URL it reports has its key redacted.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use livekit_protocol as proto;
use serde_json::Value;

pub const API_KEY: &str = "APIfakekey";
pub const API_SECRET: &str = "fake-secret-0123456789abcdefghijklmnop";

pub const CREATE_ROOM: &str = "livekit.RoomService/CreateRoom";
pub const DELETE_ROOM: &str = "livekit.RoomService/DeleteRoom";
pub const LIST_ROOMS: &str = "livekit.RoomService/ListRooms";
pub const LIST_PARTICIPANTS: &str = "livekit.RoomService/ListParticipants";
pub const REMOVE_PARTICIPANT: &str = "livekit.RoomService/RemoveParticipant";
pub const CREATE_DISPATCH: &str = "livekit.AgentDispatchService/CreateDispatch";
pub const LIST_DISPATCH: &str = "livekit.AgentDispatchService/ListDispatch";
pub const DELETE_DISPATCH: &str = "livekit.AgentDispatchService/DeleteDispatch";
pub const START_EGRESS: &str = "livekit.Egress/StartRoomCompositeEgress";
pub const UPDATE_STREAM: &str = "livekit.Egress/UpdateStream";
pub const STOP_EGRESS: &str = "livekit.Egress/StopEgress";
pub const LIST_EGRESS: &str = "livekit.Egress/ListEgress";

#[derive(Debug, Clone)]
pub enum Call {
    CreateRoom(Box<proto::CreateRoomRequest>),
    DeleteRoom(proto::DeleteRoomRequest),
    ListRooms(proto::ListRoomsRequest),
    ListParticipants(proto::ListParticipantsRequest),
    RemoveParticipant(proto::RoomParticipantIdentity),
    CreateDispatch(proto::CreateAgentDispatchRequest),
    ListDispatch(proto::ListAgentDispatchRequest),
    DeleteDispatch(proto::DeleteAgentDispatchRequest),
    StartEgress(Box<proto::RoomCompositeEgressRequest>),
    UpdateStream(proto::UpdateStreamRequest),
    StopEgress(proto::StopEgressRequest),
    ListEgress(proto::ListEgressRequest),
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub claims: Value,
    pub call: Call,
}

#[derive(Clone, Default)]
pub(super) struct Shared {
    calls: Arc<Mutex<Vec<Recorded>>>,
    failing: Arc<Mutex<HashSet<String>>>,
    /// Methods failing only their next few calls.
    failing_next: Arc<Mutex<HashMap<String, usize>>>,
    hanging: Arc<Mutex<HashSet<String>>>,
    /// Methods that act, then answer a failure: the answer lost on its way back.
    losing_answers: Arc<Mutex<HashSet<String>>>,
    /// Methods that answer (and act) only after a while.
    delays: Arc<Mutex<HashMap<String, std::time::Duration>>>,
    rooms: Arc<Mutex<RoomState>>,
    pub(super) egresses: Arc<Mutex<HashMap<String, FakeEgress>>>,
    /// The test's clock, when it has one: the times of joins and events.
    pub(super) clock: Arc<Mutex<Option<hosting_domain::clock::ManualClock>>>,
}

impl Shared {
    /// The room state with the fake's clock read.
    pub(super) fn rooms(&self) -> std::sync::MutexGuard<'_, RoomState> {
        let now = self
            .clock
            .lock()
            .unwrap()
            .as_ref()
            .map_or_else(chrono::Utc::now, |clock| {
                hosting_domain::clock::Clock::now(clock)
            });
        let mut rooms = self.rooms.lock().unwrap();
        rooms.now_ms = now.timestamp_millis();
        rooms
    }
}

/// A handle on the server; clones share it, and the server stops when the last is dropped.
#[derive(Clone)]
pub struct FakeLiveKit {
    pub url: String,
    pub(super) shared: Shared,
    _server: Arc<Server>,
}

/// The server runs on a thread and runtime of its own, so that it still answers while the
/// test's runtime is blocked (the drop check deletes rooms while the test app is dropped).
struct Server {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The URLs Egress pushes to for `urls`, or its `invalid url` refusal of the whole request.
pub(super) fn egress_parsed_urls<'a>(
    urls: impl Iterator<Item = &'a String>,
) -> Result<Vec<String>, Box<Response>> {
    urls.map(|url| egress_parsed_url(url))
        .collect::<Result<_, _>>()
        .map_err(|refusal| {
            Box::new(twirp_error(
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                &refusal,
            ))
        })
}

pub(super) fn twirp_error(status: StatusCode, code: &str, msg: &str) -> Response {
    (
        status,
        [("content-type", "application/json")],
        serde_json::json!({"code": code, "msg": msg}).to_string(),
    )
        .into_response()
}

pub(super) fn not_found(msg: &str) -> Response {
    twirp_error(StatusCode::NOT_FOUND, "not_found", msg)
}

async fn twirp(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let method = uri.path().trim_start_matches("/twirp/").to_owned();
    let claims = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|token| verify_jwt(token, API_SECRET));
    let Some(claims) = claims.filter(|c| c["iss"] == API_KEY) else {
        return twirp_error(StatusCode::UNAUTHORIZED, "unauthenticated", "invalid token");
    };
    if headers.get("content-type").and_then(|v| v.to_str().ok()) != Some("application/protobuf") {
        return twirp_error(StatusCode::BAD_REQUEST, "malformed", "protobuf only");
    }
    let Some(call) = super::fake_calls::decode_call(&method, body) else {
        return twirp_error(StatusCode::NOT_FOUND, "bad_route", "no such method");
    };
    shared.calls.lock().unwrap().push(Recorded {
        method: method.clone(),
        claims,
        call: call.clone(),
    });
    if shared.hanging.lock().unwrap().contains(&method) {
        // A LiveKit that never answers, though it made the room it was asked for.
        if let Call::CreateRoom(req) = &call {
            shared.rooms().create_room(req);
        }
        std::future::pending::<()>().await;
    }
    let delay = shared.delays.lock().unwrap().get(&method).copied();
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let fail_once = match shared.failing_next.lock().unwrap().get_mut(&method) {
        Some(left) if *left > 0 => {
            *left -= 1;
            true
        }
        _ => false,
    };
    if fail_once || shared.failing.lock().unwrap().contains(&method) {
        return twirp_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "injected failure",
        );
    }
    match super::fake_calls::act(&shared, &call) {
        Ok(_) if shared.losing_answers.lock().unwrap().contains(&method) => twirp_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "injected failure after the call acted",
        ),
        Ok(reply) => (
            StatusCode::OK,
            [("content-type", "application/protobuf")],
            reply,
        )
            .into_response(),
        Err(refused) => *refused,
    }
}

impl FakeLiveKit {
    pub async fn start() -> Self {
        let shared = Shared::default();
        let app = Router::new().fallback(twirp).with_state(shared.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the fake LiveKit")
                .block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                    // Not a graceful shutdown: calls told to hang never finish.
                    tokio::select! {
                        served = axum::serve(listener, app) => served.unwrap(),
                        _ = stopped => {}
                    }
                });
        });
        Self {
            url,
            shared,
            _server: Arc::new(Server { stop: Some(stop) }),
        }
    }

    /// Configuration pointing the product at this server.
    pub fn config(&self) -> Vec<(&'static str, String)> {
        vec![
            ("LIVEKIT_URL", self.url.clone()),
            ("LIVEKIT_API_KEY", API_KEY.into()),
            ("LIVEKIT_API_SECRET", API_SECRET.into()),
        ]
    }

    /// `method` is e.g. `livekit.RoomService/CreateRoom`.
    pub fn fail(&self, method: &str) {
        self.shared
            .failing
            .lock()
            .unwrap()
            .insert(method.to_owned());
    }

    /// `method` acts, then answers a failure (its answer lost).
    pub fn lose_answers(&self, method: &str) {
        self.shared
            .losing_answers
            .lock()
            .unwrap()
            .insert(method.to_owned());
    }

    /// `method` never answers.
    pub fn hang(&self, method: &str) {
        self.shared
            .hanging
            .lock()
            .unwrap()
            .insert(method.to_owned());
    }

    /// `method` fails its next `times` calls, then answers again.
    pub fn fail_next(&self, method: &str, times: usize) {
        self.shared
            .failing_next
            .lock()
            .unwrap()
            .insert(method.to_owned(), times);
    }

    /// `method` acts and answers only after `delay`.
    pub fn delay(&self, method: &str, delay: std::time::Duration) {
        self.shared
            .delays
            .lock()
            .unwrap()
            .insert(method.to_owned(), delay);
    }

    /// `method` answers again (calls already hanging stay so).
    pub fn heal(&self, method: &str) {
        self.shared.failing.lock().unwrap().remove(method);
        self.shared.hanging.lock().unwrap().remove(method);
        self.shared.losing_answers.lock().unwrap().remove(method);
        self.shared.failing_next.lock().unwrap().remove(method);
        self.shared.delays.lock().unwrap().remove(method);
    }

    /// The rooms that exist now.
    pub fn rooms(&self) -> HashSet<String> {
        self.shared.rooms().rooms.keys().cloned().collect()
    }

    /// The egresses started so far, by id.
    pub fn egresses(&self) -> HashMap<String, FakeEgress> {
        self.shared.egresses.lock().unwrap().clone()
    }

    /// An egress of `room` that LiveKit runs though the API never recorded its id (a start
    /// whose answer was lost with the process that asked for it); its id.
    pub fn unrecorded_egress(&self, room: &str) -> String {
        let mut egresses = self.shared.egresses.lock().unwrap();
        let id = format!("EG_unrecorded_{}", egresses.len() + 1);
        egresses.insert(id.clone(), FakeEgress::running_in(room));
        id
    }

    /// The egress ends by itself (as LiveKit's does when an output or the encoder fails);
    /// `ListEgress` then reports it `EGRESS_COMPLETE`, with no file.
    pub fn end_egress(&self, egress_id: &str) {
        self.end_egress_as(egress_id, EgressEnd::default());
    }

    /// The egress ends as `end` says, which `ListEgress` reports from then on.
    pub fn end_egress_as(&self, egress_id: &str, end: EgressEnd) {
        if let Some(egress) = self.shared.egresses.lock().unwrap().get_mut(egress_id) {
            egress.running = false;
            egress.ended = Some(end);
        }
    }

    /// One output of a running egress fails with `error` (by the URL it was given).
    pub fn fail_output(&self, egress_id: &str, url: &str, error: &str) {
        if let Some(egress) = self.shared.egresses.lock().unwrap().get_mut(egress_id) {
            let pushed = egress_parsed_url(url).unwrap_or_else(|_| url.to_owned());
            egress.failed_outputs.push((pushed, error.to_owned()));
        }
    }

    /// LiveKit forgets the egress: `ListEgress` no longer knows it.
    pub fn forget_egress(&self, egress_id: &str) {
        self.shared.egresses.lock().unwrap().remove(egress_id);
    }

    /// How many times `method` was called.
    pub fn count(&self, method: &str) -> usize {
        self.methods().iter().filter(|m| *m == method).count()
    }

    pub fn calls(&self) -> Vec<Recorded> {
        self.shared.calls.lock().unwrap().clone()
    }

    pub fn methods(&self) -> Vec<String> {
        self.calls().into_iter().map(|c| c.method).collect()
    }
}

pub use super::fake_egress::*;
pub use super::fake_rooms::*;
pub use super::livekit_events::*;
