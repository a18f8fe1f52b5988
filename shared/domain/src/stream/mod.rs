//! Streams, their lifecycle (docs/lifecycle.md, "Atomicity" and "Why a stream ended") and their
//! four public representations (docs/streams.md, "Representations").

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::event_type::EventType;
use crate::paging::MAX_LIST_LIMIT;

mod destinations;
mod egress;
mod recording;
mod representations;
pub use egress::{EGRESS_CALL_TIMEOUT, EGRESS_LOST, Egress, EgressKind, LOST_AFTER_READS};
pub use representations::*;

/// Most streams a brand may have in `preparing` plus `live`.
pub const MAX_ACTIVE_STREAMS: u32 = 3;
/// Duration of a test stream started without `duration_minutes`.
pub const DEFAULT_TEST_DURATION_MINUTES: u32 = 480;
/// Shown for streams whose platform was never recorded (dashboard streams).
pub const UNKNOWN_PLATFORM: &str = "unknown";
/// `source` of streams created through this API.
pub const SOURCE_API: &str = "api";
/// `PREPARING_TIMEOUT_SECS` when unset: the spec's 5 minutes.
pub const DEFAULT_PREPARING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StreamStatus {
    Preparing,
    Live,
    Ended,
    Error,
}

impl StreamStatus {
    pub const ALL: [StreamStatus; 4] = [
        StreamStatus::Preparing,
        StreamStatus::Live,
        StreamStatus::Ended,
        StreamStatus::Error,
    ];

    /// Active streams hold one of the brand's concurrency slots.
    pub fn is_active(self) -> bool {
        matches!(self, StreamStatus::Preparing | StreamStatus::Live)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StreamStatus::Preparing => "preparing",
            StreamStatus::Live => "live",
            StreamStatus::Ended => "ended",
            StreamStatus::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == s)
    }
}

/// Timers a stream can have pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerKind {
    /// Still `preparing` at `created_at + PREPARING_TIMEOUT_SECS`: `error`.
    PreparingTimeout,
    /// Still `live` at `started_at + duration`: `ended`.
    DurationEnd,
    /// The agent is due to be dispatched again ([`Stream::next_dispatch_at`]).
    DispatchRetry,
    /// The reconnect window lapses ([`Stream::reconnect_until`]).
    ReconnectWindow,
    /// An attempt at the egress start owed to a live stream ([`Egress`]).
    EgressStart,
    /// The host's presence read back from LiveKit ([`Stream::host_check_at`]).
    HostReadback,
    /// A scheduled show's start: the timer's id is the show's (docs/shows.md).
    ShowStart,
    /// A scheduled show's reminder.
    ShowReminder,
}

impl TimerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TimerKind::PreparingTimeout => "preparing_timeout",
            TimerKind::DurationEnd => "duration_end",
            TimerKind::DispatchRetry => "dispatch_retry",
            TimerKind::ReconnectWindow => "reconnect_window",
            TimerKind::EgressStart => "egress_start",
            TimerKind::HostReadback => "host_readback",
            TimerKind::ShowStart => "show_start",
            TimerKind::ShowReminder => "show_reminder",
        }
    }
}

/// Why a stream reached `ended` or `error` (docs/lifecycle.md, "Why a stream ended"): recorded in
/// the same atomic step as the transition, shown on the stream and in its final event. Clients must
/// accept values added later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// `DELETE /streams/{id}`.
    Requested,
    /// The stream's duration elapsed.
    DurationElapsed,
    /// The AI host left the room.
    HostLeft,
    /// The room provider finished the room.
    RoomFinished,
    /// Still `preparing` at the preparing timeout.
    PreparingTimeout,
    /// Room, dispatch or token failed at start.
    LaunchFailed,
    /// The room provider failed while live.
    ProviderError,
    /// The agent dropped while live and no agent joined again within the reconnect window.
    HostLost,
}

impl EndReason {
    pub const ALL: [EndReason; 8] = [
        EndReason::Requested,
        EndReason::DurationElapsed,
        EndReason::HostLeft,
        EndReason::RoomFinished,
        EndReason::PreparingTimeout,
        EndReason::LaunchFailed,
        EndReason::ProviderError,
        EndReason::HostLost,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Requested => "requested",
            EndReason::DurationElapsed => "duration_elapsed",
            EndReason::HostLeft => "host_left",
            EndReason::RoomFinished => "room_finished",
            EndReason::PreparingTimeout => "preparing_timeout",
            EndReason::LaunchFailed => "launch_failed",
            EndReason::ProviderError => "provider_error",
            EndReason::HostLost => "host_lost",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.as_str() == s)
    }
}

/// A plain string enumeration whose description tells clients to accept new values.
impl JsonSchema for EndReason {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EndReason".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Self::ALL.iter().map(|r| r.as_str()).collect();
        schemars::json_schema!({
            "type": "string",
            "enum": names,
            "description": "Why the stream reached `ended` or `error`, recorded with that change; absent while it is `preparing` or `live` and on history that never recorded one. `requested`: `DELETE /streams/{id}` (ended). `duration_elapsed`: its duration passed (ended). `host_left`: the AI host left the room (ended). `room_finished`: the room provider finished the room (ended). `preparing_timeout`: still preparing 5 minutes after creation (error). `launch_failed`: room, dispatch or token failed at start, the `502 launch_failed` (error). `provider_error`: the room provider failed while live (error). `host_lost`: the AI host dropped while live and no host joined again within the reconnect window (error). Values may be added: treat an unknown one as a generic end."
        })
    }
}

/// Every way a stream can change status. Each is a conditional update on the status it leaves,
/// so racing triggers yield exactly one transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The agent joined the room.
    AgentJoined,
    /// Room creation, dispatch or token failed after the record was created.
    LaunchFailed,
    /// Still preparing when the preparing timeout fired.
    PreparingTimedOut,
    /// `DELETE /streams/{id}`.
    EndRequested,
    /// The duration elapsed.
    DurationElapsed,
    /// The agent left the room (or a test helper said so).
    HostLeft,
    /// The room provider finished the room.
    RoomFinished,
    /// The room provider reported a failure while live (only a test helper reports one).
    ProviderFailed,
    /// The reconnect window lapsed with no agent back.
    HostLost,
}

impl Transition {
    pub fn from(self) -> StreamStatus {
        match self {
            Transition::AgentJoined | Transition::LaunchFailed | Transition::PreparingTimedOut => {
                StreamStatus::Preparing
            }
            Transition::EndRequested
            | Transition::DurationElapsed
            | Transition::HostLeft
            | Transition::RoomFinished
            | Transition::ProviderFailed
            | Transition::HostLost => StreamStatus::Live,
        }
    }

    pub fn to(self) -> StreamStatus {
        match self {
            Transition::AgentJoined => StreamStatus::Live,
            Transition::LaunchFailed
            | Transition::PreparingTimedOut
            | Transition::ProviderFailed
            | Transition::HostLost => StreamStatus::Error,
            Transition::EndRequested
            | Transition::DurationElapsed
            | Transition::HostLeft
            | Transition::RoomFinished => StreamStatus::Ended,
        }
    }

    /// The reason a transition that finishes the stream records.
    pub fn end_reason(self) -> Option<EndReason> {
        Some(match self {
            Transition::AgentJoined => return None,
            Transition::LaunchFailed => EndReason::LaunchFailed,
            Transition::PreparingTimedOut => EndReason::PreparingTimeout,
            Transition::EndRequested => EndReason::Requested,
            Transition::DurationElapsed => EndReason::DurationElapsed,
            Transition::HostLeft => EndReason::HostLeft,
            Transition::RoomFinished => EndReason::RoomFinished,
            Transition::ProviderFailed => EndReason::ProviderError,
            Transition::HostLost => EndReason::HostLost,
        })
    }

    /// The name metrics and logs give it.
    pub fn name(self) -> &'static str {
        match self {
            Transition::AgentJoined => "agent_joined",
            Transition::LaunchFailed => "launch_failed",
            Transition::PreparingTimedOut => "preparing_timed_out",
            Transition::EndRequested => "end_requested",
            Transition::DurationElapsed => "duration_elapsed",
            Transition::HostLeft => "host_left",
            Transition::RoomFinished => "room_finished",
            Transition::ProviderFailed => "provider_failed",
            Transition::HostLost => "host_lost",
        }
    }

    pub fn event_type(self) -> EventType {
        match self.to() {
            StreamStatus::Live => EventType::StreamStarted,
            StreamStatus::Ended => EventType::StreamEnded,
            StreamStatus::Preparing | StreamStatus::Error => EventType::StreamError,
        }
    }
}

/// The stored stream record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream {
    pub id: Uuid,
    pub brand_id: String,
    pub status: StreamStatus,
    /// `None` for dashboard streams that never recorded one.
    pub platform: Option<String>,
    pub vertical: String,
    pub creator_id: Option<String>,
    pub product_name: String,
    pub source: String,
    pub room_name: Option<String>,
    pub viewer_count: u64,
    pub test: bool,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub duration_minutes: Option<u32>,
    pub script: Option<String>,
    /// Set with the transition to `ended` or `error`; `None` while active and on history that
    /// never recorded one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<EndReason>,
    /// Dispatches of the agent made while `preparing`, the launch's and failed ones included
    /// (at most [`super::host::MAX_PREPARING_DISPATCHES`]).
    #[serde(default)]
    pub dispatches: u32,
    /// When the agent is next dispatched again, while a dispatch retry is due.
    #[serde(default)]
    pub next_dispatch_at: Option<DateTime<Utc>>,
    /// The host in the room, by participant id (docs/livekit.md, "One host"): at most one.
    #[serde(default)]
    pub agents: Vec<String>,
    /// When the host's presence is next read back from the provider, while active
    /// (docs/livekit.md, "Read-backs").
    #[serde(default)]
    pub host_check_at: Option<DateTime<Utc>>,
    /// While a reconnect window is open: when the agent dropped. Any end during the window
    /// happens as of then.
    #[serde(default)]
    pub host_lost_at: Option<DateTime<Utc>>,
    /// While a reconnect window is open: when it lapses.
    #[serde(default)]
    pub reconnect_until: Option<DateTime<Utc>>,
    /// Raised by every change but a viewer count's, so that a write made from a read of the
    /// stream applies only to the stream as read.
    #[serde(default)]
    pub revision: u64,
    /// When an active stream must have left its status: the preparing timeout while
    /// `preparing`, the duration end while `live`; `None` once final. Stored in the same atomic
    /// step that creates the stream or makes it live, so a lost timer never leaves a stream
    /// active past it (see `hosting_app::service::timers::sweep`).
    pub deadline: Option<DateTime<Utc>>,
    /// The channels the show is pushed to, in the order given (docs/destinations.md).
    #[serde(default)]
    pub destinations: Vec<crate::destination::Destination>,
    /// The egress that pushes it there, and a start still owed.
    #[serde(default)]
    pub egress: Egress,
    /// The stream keys of a new stream's destinations, written with it to an item of their
    /// own; never read back onto the stream.
    #[serde(skip)]
    pub stream_keys: crate::destination::SealedStreamKeys,
}

impl Stream {
    /// Places a new stream after its brand's newest stream (`created_at` `newest_at`, id
    /// `newest_id`), so that creation order is newest-first order, also to the millisecond that
    /// responses show: when it would not sort after the newest there, its creation moves to the
    /// newest's next millisecond. Starts of one brand racing on one clock tick are the only case.
    /// A test stream's start, the same instant as its creation, moves with it.
    pub fn place_after(&mut self, newest_at: DateTime<Utc>, newest_id: Uuid) {
        let shown = |at: DateTime<Utc>| at.timestamp_millis();
        let at = if (shown(self.created_at), self.id) <= (shown(newest_at), newest_id) {
            DateTime::from_timestamp_millis(shown(newest_at) + 1).unwrap_or(newest_at)
        } else {
            // Same millisecond, higher id: at least the newest's instant.
            newest_at.max(self.created_at)
        };
        if at == self.created_at {
            return;
        }
        if self.started_at == Some(self.created_at) {
            self.started_at = Some(at);
            for destination in &mut self.destinations {
                if destination.started_at == Some(self.created_at) {
                    destination.started_at = Some(at);
                }
            }
        }
        for due in [&mut self.deadline, &mut self.next_dispatch_at]
            .into_iter()
            .flatten()
        {
            *due += at - self.created_at;
        }
        self.created_at = at;
    }

    /// The deadline of the status the stream is in (see [`Stream::deadline`]).
    pub fn deadline_in_status(
        &self,
        preparing_timeout: std::time::Duration,
    ) -> Option<DateTime<Utc>> {
        match self.status {
            StreamStatus::Preparing => Some(
                self.created_at
                    + chrono::TimeDelta::from_std(preparing_timeout)
                        .unwrap_or(chrono::TimeDelta::MAX),
            ),
            StreamStatus::Live => Some(
                self.started_at.unwrap_or(self.created_at)
                    + chrono::TimeDelta::minutes(i64::from(self.effective_duration_minutes())),
            ),
            StreamStatus::Ended | StreamStatus::Error => None,
        }
    }

    /// The timer that fires at the deadline, while there is one.
    pub fn deadline_timer(&self) -> Option<(TimerKind, DateTime<Utc>)> {
        let kind = match self.status {
            StreamStatus::Preparing => TimerKind::PreparingTimeout,
            StreamStatus::Live => TimerKind::DurationEnd,
            StreamStatus::Ended | StreamStatus::Error => return None,
        };
        Some((kind, self.deadline?))
    }

    /// The transition a passed deadline makes.
    pub fn deadline_transition(&self) -> Option<Transition> {
        match self.status {
            StreamStatus::Preparing => Some(Transition::PreparingTimedOut),
            StreamStatus::Live => Some(Transition::DurationElapsed),
            StreamStatus::Ended | StreamStatus::Error => None,
        }
    }

    /// Applies `transition` as of `at`, or returns `false` when the stream is not in the status
    /// the transition leaves. Stores call this inside their conditional update.
    pub fn apply(&mut self, transition: Transition, at: DateTime<Utc>) -> bool {
        if self.status != transition.from() {
            return false;
        }
        self.status = transition.to();
        match self.status {
            StreamStatus::Live => self.started_at = Some(at),
            // Nothing aired after a drop that opened a reconnect window.
            StreamStatus::Ended | StreamStatus::Error => {
                self.ended_at = Some(self.host_lost_at.map_or(at, |lost| lost.min(at)));
            }
            StreamStatus::Preparing => {}
        }
        self.end_reason = transition.end_reason();
        // Live, the preparing retries stop; final, so does every window and retry.
        self.next_dispatch_at = None;
        if !self.status.is_active() {
            self.host_lost_at = None;
            self.reconnect_until = None;
            self.host_check_at = None;
        }
        self.destinations_follow_status(at);
        self.revision += 1;
        // Only `live` has a deadline that a transition sets: the preparing one is set at
        // creation, where the timeout is known.
        self.deadline = self.deadline_in_status(std::time::Duration::ZERO);
        true
    }

    /// Minutes until the duration end once live: the requested duration, or for test streams
    /// started without one, the 480-minute maximum.
    pub fn effective_duration_minutes(&self) -> u32 {
        self.duration_minutes
            .unwrap_or(DEFAULT_TEST_DURATION_MINUTES)
    }

    pub fn platform_or_unknown(&self) -> &str {
        self.platform.as_deref().unwrap_or(UNKNOWN_PLATFORM)
    }

    pub fn room_name_for(id: Uuid) -> String {
        format!("stream-{}", id.simple())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn stream(status: StreamStatus) -> Stream {
        Stream {
            id: Uuid::new_v4(),
            brand_id: "b".into(),
            status,
            platform: None,
            vertical: "live-commerce".into(),
            creator_id: None,
            product_name: "p".into(),
            source: SOURCE_API.into(),
            room_name: None,
            viewer_count: 0,
            test: false,
            created_at: Utc::now(),
            started_at: None,
            ended_at: None,
            duration_minutes: None,
            script: None,
            end_reason: None,
            dispatches: 0,
            next_dispatch_at: None,
            agents: Vec::new(),
            host_check_at: None,
            host_lost_at: None,
            reconnect_until: None,
            revision: 0,
            deadline: None,
            destinations: Vec::new(),
            egress: Default::default(),
            stream_keys: Default::default(),
        }
    }

    #[test]
    fn a_new_stream_is_placed_after_the_newest_to_the_millisecond() {
        let at = DateTime::parse_from_rfc3339("2026-01-01T00:00:00.000500Z")
            .unwrap()
            .to_utc();
        let low = Uuid::from_u128(1);
        let high = Uuid::from_u128(2);
        let placed = |created_at: DateTime<Utc>, id: Uuid, newest_id: Uuid| {
            let mut s = stream(StreamStatus::Live);
            (s.created_at, s.id, s.started_at) = (created_at, id, Some(created_at));
            s.place_after(at, newest_id);
            assert_eq!(s.started_at, Some(s.created_at));
            s.created_at
        };
        let next_ms = DateTime::parse_from_rfc3339("2026-01-01T00:00:00.001Z")
            .unwrap()
            .to_utc();
        // Same instant, lower id: the next millisecond.
        assert_eq!(placed(at, low, high), next_ms);
        // Same millisecond, higher id: kept, or raised to the newest's instant.
        assert_eq!(placed(at, high, low), at);
        let earlier = at - chrono::Duration::microseconds(100);
        assert_eq!(placed(earlier, high, low), at);
        // A later millisecond: kept.
        let later = at + chrono::Duration::milliseconds(3);
        assert_eq!(placed(later, low, high), later);
        // A clock behind the newest: the next millisecond.
        assert_eq!(
            placed(at - chrono::Duration::seconds(1), high, low),
            next_ms
        );
    }

    #[test]
    fn transitions_only_leave_their_own_status() {
        let now = Utc::now();
        let mut s = stream(StreamStatus::Preparing);
        assert!(!s.apply(Transition::EndRequested, now));
        assert!(s.apply(Transition::AgentJoined, now));
        assert_eq!((s.status, s.started_at), (StreamStatus::Live, Some(now)));
        assert_eq!(s.deadline, Some(now + chrono::Duration::minutes(480)));
        assert!(!s.apply(Transition::AgentJoined, now));
        assert!(s.apply(Transition::EndRequested, now));
        assert_eq!((s.status, s.ended_at), (StreamStatus::Ended, Some(now)));
        assert_eq!(s.end_reason, Some(EndReason::Requested));
        assert_eq!(s.deadline, None);
        for t in [
            Transition::AgentJoined,
            Transition::LaunchFailed,
            Transition::PreparingTimedOut,
            Transition::EndRequested,
            Transition::DurationElapsed,
            Transition::HostLeft,
            Transition::RoomFinished,
            Transition::ProviderFailed,
        ] {
            assert!(!s.apply(t, now), "ended is final");
        }
    }

    #[test]
    fn detail_shape() {
        let mut s = stream(StreamStatus::Live);
        s.test = true;
        let v = serde_json::to_value(StreamDetail::new(&s, None)).unwrap();
        assert_eq!(v["events"], serde_json::json!([]));
        assert_eq!(v["platform"], "unknown");
        assert_eq!(v["test"], true);
        assert_eq!(v["room_name"], "");
        s.test = false;
        let v = serde_json::to_value(StreamDetail::new(&s, None)).unwrap();
        assert!(v.get("test").is_none());
    }

    #[test]
    fn a_detail_from_a_read_is_the_same_detail() {
        for platform in [None, Some("tiktok".to_owned())] {
            let mut s = stream(StreamStatus::Ended);
            s.platform = platform;
            s.room_name = Some("stream-1".into());
            s.ended_at = Some(s.created_at);
            let creator = Some("creator_1".to_owned());
            assert_eq!(
                serde_json::to_value(StreamDetail::from_read(s.clone(), creator.clone())).unwrap(),
                serde_json::to_value(StreamDetail::new(&s, creator)).unwrap(),
            );
        }
    }
}
