//! Rooms, agents and dispatches as the fake LiveKit runs them, made as LiveKit makes them
//! (livekit/livekit `pkg/rtc/room.go`, `pkg/service/agent_dispatch_service.go`, `pkg/agent/`;
//! livekit/protocol `livekit_agent_dispatch.proto`; livekit/agents `worker.py`,
//! `ipc/job_proc_lazy_main.py`):
//!
//! - every dispatch (a room's own in `CreateRoomRequest.agents`, or `CreateDispatch`) is a new
//!   job with a random id, and its agent joins the room by itself: identity `agent-AJ_...`, kind
//!   `AGENT`, attribute `lk.agent_name`, its `joined_at`; LiveKit sends `participant_joined`;
//! - a room created without `agents` gets LiveKit's automatic dispatch for agent name `""`,
//!   which brings any automatic agent of the project: a stray agent;
//! - `CreateDispatch` into a missing room creates it, with LiveKit's default timeouts;
//! - an agent whose code raises, or whose worker is drained, leaves `CLIENT_INITIATED`, as one
//!   that finished does; `DeleteRoom` ends the room's dispatches with it;
//! - `ListRooms` counts viewers in `num_participants`, leaving agents and egress out
//!   (`room.go`, `updateProto`).
//!
//! Its webhooks wait in an outbox until the test lets LiveKit send them
//! ([`crate::common::TestApp::livekit_sends`]), which may lose, duplicate or reorder them.

use std::collections::HashMap;

use livekit_protocol as proto;
use serde_json::{Value, json};

/// LiveKit's default `empty_timeout` for a room it creates by itself (`pkg/config`).
pub const DEFAULT_EMPTY_TIMEOUT: u32 = 300;

/// How the agents of dispatches behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Agents {
    /// No agent ever joins by itself: the tests that send LiveKit's webhooks by hand.
    #[default]
    Manual,
    /// Each dispatch's agent joins at once.
    JoinAtOnce,
    /// Each dispatch's agent starts slowly: it joins when the test says
    /// ([`crate::common::fake_livekit::FakeLiveKit::start_pending_agents`]).
    Slow,
}

#[derive(Debug, Clone)]
pub struct FakeParticipant {
    pub sid: String,
    pub identity: String,
    pub kind: proto::participant_info::Kind,
    pub attributes: HashMap<String, String>,
    pub joined_at_ms: i64,
}

impl FakeParticipant {
    pub fn info(&self) -> proto::ParticipantInfo {
        proto::ParticipantInfo {
            sid: self.sid.clone(),
            identity: self.identity.clone(),
            state: proto::participant_info::State::Active as i32,
            kind: self.kind as i32,
            attributes: self.attributes.clone(),
            joined_at: self.joined_at_ms / 1000,
            joined_at_ms: self.joined_at_ms,
            ..Default::default()
        }
    }

    /// The participant as LiveKit's webhooks write it (protojson).
    pub fn json(&self, reason: Option<&str>) -> Value {
        let kind = self.kind.as_str_name();
        let mut participant = json!({"sid": self.sid, "identity": self.identity,
            "state": if reason.is_some() { "DISCONNECTED" } else { "ACTIVE" },
            "joinedAt": (self.joined_at_ms / 1000).to_string(),
            "joinedAtMs": self.joined_at_ms.to_string(),
            "attributes": self.attributes});
        // protojson leaves the zero value (STANDARD) out.
        if self.kind != proto::participant_info::Kind::Standard {
            participant["kind"] = json!(kind);
        }
        if let Some(reason) = reason {
            participant["disconnectReason"] = json!(reason);
        }
        participant
    }

    pub fn is_agent(&self) -> bool {
        self.kind == proto::participant_info::Kind::Agent
    }

    pub fn counts_as_viewer(&self) -> bool {
        !matches!(
            self.kind,
            proto::participant_info::Kind::Agent | proto::participant_info::Kind::Egress
        )
    }
}

#[derive(Debug, Clone)]
pub struct FakeRoom {
    pub empty_timeout: u32,
    pub departure_timeout: u32,
    pub participants: Vec<FakeParticipant>,
}

#[derive(Debug, Clone)]
pub struct FakeDispatch {
    pub id: String,
    pub room: String,
    pub agent_name: String,
    pub metadata: String,
    pub restart_policy: i32,
}

/// Everything the fake keeps of rooms, their participants and dispatches, and the webhooks
/// LiveKit has yet to send.
#[derive(Debug, Default)]
pub struct RoomState {
    pub rooms: HashMap<String, FakeRoom>,
    pub dispatches: HashMap<String, FakeDispatch>,
    pub agents: Agents,
    /// Dispatches whose slow agent has not joined yet.
    pub pending: Vec<String>,
    pub outbox: Vec<Value>,
    /// Webhooks still to lose.
    pub lose_next: usize,
    /// The fake's clock, in Unix milliseconds (the test's manual clock when it set one).
    pub now_ms: i64,
}

/// A LiveKit-style id: its prefix and 12 random characters.
pub fn random_id(prefix: &str) -> String {
    format!(
        "{prefix}{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

impl RoomState {
    fn event(&mut self, event: &str, room: &str, participant: Option<Value>) {
        let mut body = json!({"event": event, "room": {"sid": "RM_fake", "name": room},
            "id": random_id("EV_"), "createdAt": (self.now_ms / 1000).to_string()});
        if let Some(participant) = participant {
            body["participant"] = participant;
        }
        self.outbox.push(body);
    }

    /// Creates the room if it does not exist (LiveKit's `CreateRoom` of an existing room keeps
    /// it); its dispatches as LiveKit makes them.
    pub fn create_room(&mut self, request: &proto::CreateRoomRequest) {
        if self.rooms.contains_key(&request.name) {
            return;
        }
        self.rooms.insert(
            request.name.clone(),
            FakeRoom {
                empty_timeout: request.empty_timeout,
                departure_timeout: request.departure_timeout,
                participants: Vec::new(),
            },
        );
        if request.agents.is_empty() {
            // LiveKit's automatic dispatch: any automatic agent of the project comes.
            self.dispatch(&request.name, "", "", 0);
        }
        for agent in &request.agents {
            self.dispatch(
                &request.name,
                &agent.agent_name,
                &agent.metadata,
                agent.restart_policy,
            );
        }
    }

    /// `room`, created with LiveKit's defaults when missing (as a join or a dispatch into a
    /// room LiveKit does not have creates it).
    fn room_or_default(&mut self, room: &str) -> &mut FakeRoom {
        self.rooms
            .entry(room.to_owned())
            .or_insert_with(|| FakeRoom {
                empty_timeout: DEFAULT_EMPTY_TIMEOUT,
                departure_timeout: 20,
                participants: Vec::new(),
            })
    }

    /// A new job with a random id; a missing room is created with LiveKit's defaults.
    pub fn dispatch(
        &mut self,
        room: &str,
        agent_name: &str,
        metadata: &str,
        restart_policy: i32,
    ) -> FakeDispatch {
        self.room_or_default(room);
        let dispatch = FakeDispatch {
            id: random_id("AD_"),
            room: room.to_owned(),
            agent_name: agent_name.to_owned(),
            metadata: metadata.to_owned(),
            restart_policy,
        };
        self.dispatches
            .insert(dispatch.id.clone(), dispatch.clone());
        match self.agents {
            Agents::Manual => {}
            Agents::JoinAtOnce => self.agent_joins(&dispatch.id),
            Agents::Slow => self.pending.push(dispatch.id.clone()),
        }
        dispatch
    }

    /// The agent of a dispatch joins its room, if the dispatch and room still exist.
    pub fn agent_joins(&mut self, dispatch_id: &str) {
        let Some(dispatch) = self.dispatches.get(dispatch_id).cloned() else {
            return;
        };
        let mut attributes = HashMap::new();
        if !dispatch.agent_name.is_empty() {
            attributes.insert("lk.agent_name".to_owned(), dispatch.agent_name.clone());
        }
        self.join(
            &dispatch.room,
            proto::participant_info::Kind::Agent,
            attributes,
        );
    }

    /// A participant joins `room` (LiveKit creates the room for it when missing); it.
    pub fn join(
        &mut self,
        room: &str,
        kind: proto::participant_info::Kind,
        attributes: HashMap<String, String>,
    ) -> FakeParticipant {
        let participant = FakeParticipant {
            sid: random_id("PA_"),
            identity: if kind == proto::participant_info::Kind::Agent {
                random_id("agent-AJ_")
            } else {
                random_id("viewer-")
            },
            kind,
            attributes,
            joined_at_ms: self.now_ms,
        };
        self.room_or_default(room)
            .participants
            .push(participant.clone());
        self.event("participant_joined", room, Some(participant.json(None)));
        participant
    }

    /// The participant of `identity` leaves with `reason`; whether it was there.
    pub fn leave(&mut self, room: &str, identity: &str, reason: &str) -> bool {
        let Some(participants) = self.rooms.get_mut(room).map(|r| &mut r.participants) else {
            return false;
        };
        let Some(at) = participants.iter().position(|p| p.identity == identity) else {
            return false;
        };
        let participant = participants.remove(at);
        self.event(
            "participant_left",
            room,
            Some(participant.json(Some(reason))),
        );
        true
    }

    /// LiveKit closes the room: its participants leave `ROOM_DELETED`, its dispatches end,
    /// and `room_finished` goes out. `false` when there was no such room.
    pub fn close_room(&mut self, room: &str) -> bool {
        let Some(closed) = self.rooms.remove(room) else {
            return false;
        };
        self.dispatches.retain(|_, d| d.room != room);
        for participant in closed.participants {
            self.event(
                "participant_left",
                room,
                Some(participant.json(Some("ROOM_DELETED"))),
            );
        }
        self.event("room_finished", room, None);
        true
    }

    /// What a webhook a test sends by hand reports, made so in the rooms (no webhook of their
    /// own): LiveKit's state is what its webhooks say it is.
    pub fn mirror(&mut self, event: &Value) {
        let room = event["room"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let participant = &event["participant"];
        let sid = participant["sid"].as_str().unwrap_or_default().to_owned();
        match event["event"].as_str() {
            Some("participant_joined") => {
                let kind = participant["kind"]
                    .as_str()
                    .and_then(proto::participant_info::Kind::from_str_name)
                    .unwrap_or(proto::participant_info::Kind::Standard);
                let attributes = participant["attributes"]
                    .as_object()
                    .map(|attributes| {
                        attributes
                            .iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                            .collect()
                    })
                    .unwrap_or_default();
                let joined_at_ms = self.now_ms;
                let participants = &mut self.room_or_default(&room).participants;
                if !participants.iter().any(|p| p.sid == sid) {
                    participants.push(FakeParticipant {
                        identity: participant["identity"].as_str().unwrap_or(&sid).to_owned(),
                        sid,
                        kind,
                        attributes,
                        joined_at_ms,
                    });
                }
            }
            Some("participant_left") => {
                if let Some(room) = self.rooms.get_mut(&room) {
                    room.participants.retain(|p| p.sid != sid);
                }
            }
            Some("room_finished") => {
                self.rooms.remove(&room);
                self.dispatches.retain(|_, d| d.room != room);
            }
            _ => {}
        }
    }

    /// The hosts of `agent_name` in `room`: agents of that name acting for no one else.
    pub fn hosts(&self, room: &str, agent_name: &str) -> Vec<FakeParticipant> {
        self.rooms
            .get(room)
            .map(|r| {
                r.participants
                    .iter()
                    .filter(|p| {
                        p.is_agent()
                            && p.attributes.get("lk.agent_name").map(String::as_str)
                                == Some(agent_name)
                            && !p.attributes.contains_key("lk.publish_on_behalf")
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The room as `ListRooms` answers it: viewers only in `num_participants`.
    pub fn room_info(&self, name: &str) -> Option<proto::Room> {
        let room = self.rooms.get(name)?;
        Some(proto::Room {
            sid: "RM_fake".into(),
            name: name.to_owned(),
            empty_timeout: room.empty_timeout,
            departure_timeout: room.departure_timeout,
            num_participants: u32::try_from(
                room.participants
                    .iter()
                    .filter(|p| p.counts_as_viewer())
                    .count(),
            )
            .unwrap_or(u32::MAX),
            ..Default::default()
        })
    }
}
