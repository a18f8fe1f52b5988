//! The fake LiveKit's rooms driven as LiveKit drives them (fake_rooms.rs): who joins and leaves
//! by itself, how its agents behave, and the webhooks LiveKit would send.

use std::collections::HashMap;

use livekit_protocol as proto;
use serde_json::Value;

use super::fake_livekit::{Call, FakeLiveKit};
use super::fake_rooms::{Agents, FakeDispatch, FakeParticipant};

impl FakeLiveKit {
    /// Someone joins `room` unannounced (its webhook never sent): LiveKit creates the room
    /// when it does not exist.
    pub fn join(&self, room: &str) {
        let mut rooms = self.shared.rooms();
        rooms.join(
            room,
            proto::participant_info::Kind::Standard,
            HashMap::new(),
        );
        rooms.outbox.pop();
    }

    /// A viewer joins `room`, its webhook sent as LiveKit sends it; the viewer.
    pub fn viewer_joins(&self, room: &str) -> FakeParticipant {
        self.shared.rooms().join(
            room,
            proto::participant_info::Kind::Standard,
            HashMap::new(),
        )
    }

    /// How the agents of later dispatches behave.
    pub fn agents(&self, agents: Agents) {
        self.shared.rooms().agents = agents;
    }

    /// Times joins and events on the test's clock.
    pub fn use_clock(&self, clock: hosting_domain::clock::ManualClock) {
        *self.shared.clock.lock().unwrap() = Some(clock);
    }

    /// The slow agents dispatched so far join now (those whose dispatch still exists).
    pub fn start_pending_agents(&self) {
        let mut rooms = self.shared.rooms();
        for dispatch in std::mem::take(&mut rooms.pending) {
            rooms.agent_joins(&dispatch);
        }
    }

    /// The hosts in `room`: agents of `stream-host` acting for no one else.
    pub fn hosts(&self, room: &str) -> Vec<FakeParticipant> {
        self.shared.rooms().hosts(room, "stream-host")
    }

    /// The dispatches of `room` LiveKit still has.
    pub fn dispatches(&self, room: &str) -> Vec<FakeDispatch> {
        let mut dispatches: Vec<FakeDispatch> = self
            .shared
            .rooms()
            .dispatches
            .values()
            .filter(|d| d.room == room)
            .cloned()
            .collect();
        dispatches.sort_by(|a, b| a.id.cmp(&b.id));
        dispatches
    }

    /// How many dispatches were asked for: the rooms' own and `CreateDispatch`es.
    pub fn dispatches_made(&self) -> usize {
        self.calls()
            .iter()
            .map(|c| match &c.call {
                Call::CreateRoom(req) => req.agents.len(),
                Call::CreateDispatch(_) => 1,
                _ => 0,
            })
            .sum()
    }

    /// The host `identity` leaves `room` with `reason`, as LiveKit reports it; `finished`: it
    /// set `lsh.finished` first, as a host that ends the show on purpose does.
    pub fn host_leaves(&self, room: &str, identity: &str, reason: &str, finished: bool) {
        let mut rooms = self.shared.rooms();
        if finished
            && let Some(host) = rooms
                .rooms
                .get_mut(room)
                .and_then(|r| r.participants.iter_mut().find(|p| p.identity == identity))
        {
            host.attributes
                .insert("lsh.finished".to_owned(), "true".to_owned());
        }
        assert!(
            rooms.leave(room, identity, reason),
            "{identity} is not in {room}"
        );
    }

    /// An agent of kind `AGENT` with `attributes` joins `room` by itself (an avatar, a stray
    /// automatic agent); it.
    pub fn agent_joins_with(&self, room: &str, attributes: &[(&str, &str)]) -> FakeParticipant {
        let attributes = attributes
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.shared
            .rooms()
            .join(room, proto::participant_info::Kind::Agent, attributes)
    }

    /// The participant `identity` leaves `room` with `reason`.
    pub fn leaves(&self, room: &str, identity: &str, reason: &str) {
        assert!(self.shared.rooms().leave(room, identity, reason));
    }

    /// LiveKit closes `room` by itself (its timeouts): everyone leaves, `room_finished`.
    pub fn close_room(&self, room: &str) {
        assert!(self.shared.rooms().close_room(room), "no room {room}");
    }

    /// The next `count` webhooks LiveKit sends are lost: never delivered.
    pub fn lose_next_webhooks(&self, count: usize) {
        self.shared.rooms().lose_next = count;
    }

    /// A webhook a test sends by hand: LiveKit's rooms as it reports them.
    pub fn mirror(&self, event: &Value) {
        self.shared.rooms().mirror(event);
    }

    /// The webhooks waiting to go out, less those lost.
    pub fn take_webhooks(&self) -> Vec<Value> {
        let mut rooms = self.shared.rooms();
        let mut events = std::mem::take(&mut rooms.outbox);
        let lost = rooms.lose_next.min(events.len());
        rooms.lose_next -= lost;
        events.drain(..lost);
        events
    }
}
