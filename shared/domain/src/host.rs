//! The AI host's presence in a stream's room (docs/lifecycle.md, "The show goes on"): dispatch
//! retries while `preparing`, and the reconnect window when the host drops while `live`. Each
//! change here is computed from the stream as read and written only onto that stream (its
//! `revision`), so racing events and sweeps apply each change once.

use chrono::{DateTime, Utc};

use super::stream::{Stream, StreamStatus, Transition};

/// Most dispatches of the agent while `preparing`, the launch's and failed ones included.
pub const MAX_PREPARING_DISPATCHES: u32 = 3;

/// What the host leaving the room means (docs/lifecycle.md, "Disconnect reasons"). An agent
/// that crashes in its code, or whose worker is drained, leaves with `CLIENT_INITIATED` just
/// as one that finished does, so only the host's own word ends the show: its `lsh.finished`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// It said it finished, or someone other than the service removed it: the stream ends,
    /// `host_left`.
    Left,
    /// The room was deleted or closed: the stream ends, `room_finished`.
    RoomClosed,
    /// Anything else (a crash, a drain, a lost connection, a replaced identity): the
    /// reconnect window opens.
    Dropped,
}

impl Departure {
    /// From the protojson name of LiveKit's `DisconnectReason` (absent when LiveKit sent none)
    /// and whether the host set `lsh.finished`.
    pub fn of(reason: Option<&str>, finished: bool) -> Self {
        match reason {
            _ if finished => Departure::Left,
            Some("ROOM_DELETED" | "ROOM_CLOSED") => Departure::RoomClosed,
            Some("PARTICIPANT_REMOVED") => Departure::Left,
            _ => Departure::Dropped,
        }
    }
}

/// What an active stream has due, most pressing first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Its status deadline passed: the preparing timeout or the duration end.
    Deadline(Transition),
    /// Its reconnect window lapsed with no agent back.
    WindowLapse,
    /// The agent is to be dispatched again.
    Dispatch,
    /// The host's presence is to be read back from the provider (docs/livekit.md,
    /// "Read-backs").
    HostCheck,
    /// A start of the stream's egress is owed (docs/destinations.md, "Going live").
    EgressStart,
    /// Its egresses are to be read back from LiveKit (docs/destinations.md, "Lost, late and
    /// early reports"); also once the stream finished, while its recording is `processing`.
    EgressCheck,
}

impl Stream {
    /// The earliest time something is due for the stream while it is active: its deadline,
    /// its next dispatch retry, the end of its reconnect window, an owed egress start or the
    /// read-back of its egresses; once it finished, that read-back while its recording is
    /// `processing`. The due index and the sweep read this.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        let check = self.egress_check_due();
        if !self.status.is_active() {
            return check;
        }
        let egress_due = self
            .egress
            .due_at
            .filter(|_| self.status == StreamStatus::Live);
        [
            self.deadline,
            self.next_dispatch_at,
            self.host_check_at,
            self.reconnect_until,
            egress_due,
            check,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// What is due at `now`, if anything.
    pub fn due(&self, now: DateTime<Utc>) -> Option<Due> {
        let check = self
            .egress_check_due()
            .is_some_and(|due| due <= now)
            .then_some(Due::EgressCheck);
        if !self.status.is_active() {
            return check;
        }
        let deadline = self.deadline.filter(|deadline| *deadline <= now);
        let lapse = self
            .reconnect_until
            .filter(|until| *until <= now && self.status == StreamStatus::Live);
        // Both passed (a sweep that ran late): whichever came first.
        match (deadline, lapse) {
            (Some(deadline), Some(lapse)) if lapse < deadline => return Some(Due::WindowLapse),
            (Some(_), _) => return self.deadline_transition().map(Due::Deadline),
            (None, Some(_)) => return Some(Due::WindowLapse),
            (None, None) => {}
        }
        if self.next_dispatch_at.is_some_and(|t| t <= now) {
            return Some(Due::Dispatch);
        }
        if self.host_check_at.is_some_and(|t| t <= now) {
            return Some(Due::HostCheck);
        }
        if self.status == StreamStatus::Live && self.egress.due_at.is_some_and(|t| t <= now) {
            return Some(Due::EgressStart);
        }
        check
    }

    /// The first dispatch retry of a new live-key stream, `retry` after its launch's dispatch,
    /// and the read-back of its host `check` after it.
    pub fn with_launch_dispatch(
        mut self,
        retry: std::time::Duration,
        check: std::time::Duration,
    ) -> Stream {
        self.dispatches = 1;
        self.next_dispatch_at = self.retry_at(self.created_at, retry);
        self.host_check_at = self.retry_at(self.created_at, check);
        self
    }

    /// The stream with a dispatch made at `now` counted and its next retry set: while
    /// preparing, up to [`MAX_PREPARING_DISPATCHES`] in all; in a reconnect window, every
    /// `retry` until the window ends. `None` when no dispatch is due.
    pub fn with_dispatch_claimed(
        &self,
        now: DateTime<Utc>,
        retry: std::time::Duration,
        check: std::time::Duration,
    ) -> Option<Stream> {
        if self.due(now) != Some(Due::Dispatch) {
            return None;
        }
        let mut next = self.clone();
        next.revision += 1;
        if self.status == StreamStatus::Preparing {
            next.dispatches += 1;
        }
        next.next_dispatch_at = match self.status {
            StreamStatus::Preparing if next.dispatches < MAX_PREPARING_DISPATCHES => {
                self.retry_at(now, retry)
            }
            StreamStatus::Live => self.retry_at(now, retry),
            _ => None,
        };
        // A host that joins without its join reaching us is read back.
        next.host_check_at = Some(now + chrono::TimeDelta::from_std(check).ok()?);
        Some(next)
    }

    /// The stream with its host's read-back at `now` claimed: the next one `next` after it,
    /// so that racing sweeps read LiveKit once. `None` when none is due.
    pub fn with_host_check_claimed(
        &self,
        now: DateTime<Utc>,
        next: std::time::Duration,
    ) -> Option<Stream> {
        if self.due(now) != Some(Due::HostCheck) {
            return None;
        }
        let mut claimed = self.clone();
        claimed.revision += 1;
        claimed.host_check_at = Some(now + chrono::TimeDelta::from_std(next).ok()?);
        Some(claimed)
    }

    /// `retry` after `at`, while that is before whatever ends the retries: the preparing
    /// timeout, or the end of the reconnect window.
    fn retry_at(&self, at: DateTime<Utc>, retry: std::time::Duration) -> Option<DateTime<Utc>> {
        let due = at + chrono::TimeDelta::from_std(retry).ok()?;
        let until = match self.status {
            StreamStatus::Preparing => self.deadline,
            StreamStatus::Live => self.reconnect_until,
            StreamStatus::Ended | StreamStatus::Error => return None,
        };
        until.is_none_or(|until| due < until).then_some(due)
    }

    /// Whether a host other than `participant` is in the room.
    pub fn other_agent_present(&self, participant: &str) -> bool {
        self.agents.iter().any(|agent| agent != participant)
    }

    /// The live stream with host `participant` in the room, its next read-back `check` from
    /// `now`; a host joining during a reconnect window closes it (the stream goes on as it
    /// was). `None` when nothing changes, or when another host is in the room already: that
    /// one stays the host (docs/livekit.md, "One host").
    pub fn with_agent_joined(
        &self,
        participant: &str,
        now: DateTime<Utc>,
        check: std::time::Duration,
    ) -> Option<Stream> {
        if self.status != StreamStatus::Live || self.other_agent_present(participant) {
            return None;
        }
        let mut next = self.clone();
        if next.agents.is_empty() {
            next.agents.push(participant.to_owned());
            next.host_check_at = Some(now + chrono::TimeDelta::from_std(check).ok()?);
        }
        if next.host_lost_at.is_some() {
            next.host_lost_at = None;
            next.reconnect_until = None;
            next.next_dispatch_at = None;
        }
        (next != *self).then(|| Stream {
            revision: self.revision + 1,
            ..next
        })
    }

    /// The stream without `participant` among its agents; `None` when it was not there.
    pub fn with_agent_gone(&self, participant: &str) -> Option<Stream> {
        if !self.agents.iter().any(|agent| agent == participant) {
            return None;
        }
        let mut next = self.clone();
        next.agents.retain(|agent| agent != participant);
        next.revision += 1;
        Some(next)
    }

    /// The live stream whose agent `participant` dropped at `dropped_at`: a reconnect window
    /// of `window` from then, with the agent due to be dispatched again at once (`now`).
    /// `None` unless live with no window open.
    pub fn with_window_opened(
        &self,
        participant: &str,
        dropped_at: DateTime<Utc>,
        window: std::time::Duration,
        now: DateTime<Utc>,
    ) -> Option<Stream> {
        if self.status != StreamStatus::Live || self.host_lost_at.is_some() {
            return None;
        }
        // LiveKit's clock, within what this stream has seen: never before it went live,
        // never after now.
        let dropped_at = dropped_at
            .min(now)
            .max(self.started_at.unwrap_or(self.created_at));
        let mut next = self.clone();
        // The one host is gone (`participant` is empty when a read-back found none).
        next.agents
            .retain(|agent| agent != participant && !participant.is_empty());
        next.host_lost_at = Some(dropped_at);
        next.reconnect_until = Some(dropped_at + chrono::TimeDelta::from_std(window).ok()?);
        next.next_dispatch_at = Some(now);
        next.revision += 1;
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::tests::stream;
    use std::time::Duration;

    const MINUTE: Duration = Duration::from_secs(60);
    const CHECK: Duration = Duration::from_secs(20);

    #[test]
    fn departures_map_as_documented() {
        use Departure::*;
        for reason in [
            None,
            Some("CLIENT_INITIATED"),
            Some("ROOM_DELETED"),
            Some("CONNECTION_TIMEOUT"),
            Some("PARTICIPANT_REMOVED"),
        ] {
            assert_eq!(Departure::of(reason, true), Left, "finished, {reason:?}");
        }
        for (reason, departure) in [
            (Some("ROOM_DELETED"), RoomClosed),
            (Some("ROOM_CLOSED"), RoomClosed),
            (Some("PARTICIPANT_REMOVED"), Left),
            // A crash in the agent's code or a drained worker reads as a finish would.
            (None, Dropped),
            (Some("UNKNOWN_REASON"), Dropped),
            (Some("CLIENT_INITIATED"), Dropped),
            (Some("DUPLICATE_IDENTITY"), Dropped),
            (Some("CONNECTION_TIMEOUT"), Dropped),
            (Some("SIGNAL_CLOSE"), Dropped),
            (Some("SERVER_SHUTDOWN"), Dropped),
            (Some("MEDIA_FAILURE"), Dropped),
            (Some("MIGRATION"), Dropped),
            (Some("STATE_MISMATCH"), Dropped),
            (Some("JOIN_FAILURE"), Dropped),
            (Some("AGENT_ERROR"), Dropped),
        ] {
            assert_eq!(Departure::of(reason, false), departure, "{reason:?}");
        }
    }

    #[test]
    fn preparing_dispatches_stop_at_three_and_before_the_timeout() {
        let mut s = stream(StreamStatus::Preparing);
        s.deadline = Some(s.created_at + chrono::TimeDelta::minutes(5));
        let s = s.with_launch_dispatch(MINUTE, CHECK);
        let first = s.next_dispatch_at.unwrap();
        assert_eq!(first, s.created_at + chrono::TimeDelta::minutes(1));
        assert_eq!(
            s.with_dispatch_claimed(first - chrono::TimeDelta::seconds(1), MINUTE, CHECK),
            None
        );
        let second = s.with_dispatch_claimed(first, MINUTE, CHECK).unwrap();
        assert_eq!((second.dispatches, second.revision), (2, s.revision + 1));
        let at = second.next_dispatch_at.unwrap();
        let third = second.with_dispatch_claimed(at, MINUTE, CHECK).unwrap();
        assert_eq!((third.dispatches, third.next_dispatch_at), (3, None));
        assert_eq!(
            third.host_check_at,
            Some(at + chrono::TimeDelta::seconds(20)),
            "each dispatch is read back"
        );
        assert_eq!(
            third.due(at + chrono::TimeDelta::seconds(20)),
            Some(Due::HostCheck)
        );
        let checked = third
            .with_host_check_claimed(at + chrono::TimeDelta::seconds(20), MINUTE)
            .unwrap();
        assert_eq!(
            checked.host_check_at,
            Some(at + chrono::TimeDelta::seconds(80))
        );
        // A retry that would fall at or after the timeout is never due.
        let mut late = stream(StreamStatus::Preparing);
        late.deadline = Some(late.created_at + chrono::TimeDelta::seconds(60));
        assert_eq!(
            late.with_launch_dispatch(MINUTE, CHECK).next_dispatch_at,
            None
        );
    }

    #[test]
    fn a_window_opens_closes_and_lapses() {
        let mut s = stream(StreamStatus::Live);
        let start = s.created_at;
        s.started_at = Some(start);
        s.deadline = Some(start + chrono::TimeDelta::minutes(30));
        s.agents = vec!["PA_1".into()];
        let dropped = start + chrono::TimeDelta::minutes(10);
        let now = dropped + chrono::TimeDelta::seconds(2);
        let open = s.with_window_opened("PA_1", dropped, MINUTE, now).unwrap();
        assert!(open.agents.is_empty());
        assert_eq!(open.host_lost_at, Some(dropped));
        assert_eq!(
            open.due(now),
            Some(Due::Dispatch),
            "dispatched again at once"
        );
        assert_eq!(open.with_window_opened("PA_1", dropped, MINUTE, now), None);
        let claimed = open.with_dispatch_claimed(now, MINUTE, CHECK).unwrap();
        assert_eq!(
            claimed.next_dispatch_at, None,
            "the next retry is past the window"
        );
        let lapse = dropped + chrono::TimeDelta::minutes(1);
        assert_eq!(
            claimed.next_due(),
            Some(now + chrono::TimeDelta::seconds(20)),
            "the window's dispatch is read back"
        );
        assert_eq!(claimed.due(lapse), Some(Due::WindowLapse));
        // A sweep late past both the lapse and the duration end: the lapse came first.
        let late = s.deadline.unwrap() + chrono::TimeDelta::minutes(1);
        let mut ends_in_window = claimed.clone();
        ends_in_window.deadline = Some(lapse + chrono::TimeDelta::seconds(30));
        assert_eq!(ends_in_window.due(late), Some(Due::WindowLapse));
        ends_in_window.deadline = Some(lapse - chrono::TimeDelta::seconds(30));
        assert_eq!(
            ends_in_window.due(late),
            Some(Due::Deadline(Transition::DurationElapsed))
        );
        // Back within the window: it goes on as it was.
        let back = claimed.with_agent_joined("PA_2", now, CHECK).unwrap();
        assert_eq!((back.host_lost_at, back.reconnect_until), (None, None));
        assert_eq!(back.agents, ["PA_2"]);
        assert_eq!(back.next_due(), Some(now + chrono::TimeDelta::seconds(20)));
        assert_eq!(
            back.with_agent_joined("PA_3", now, CHECK),
            None,
            "a second host is never the host"
        );
        // Any end during a window is as of the drop.
        let mut ended = claimed.clone();
        assert!(ended.apply(Transition::EndRequested, lapse));
        assert_eq!(ended.ended_at, Some(dropped));
        let mut lost = claimed;
        assert!(lost.apply(Transition::HostLost, lapse));
        assert_eq!(lost.ended_at, Some(dropped));
        assert_eq!(lost.next_due(), None);
    }

    #[test]
    fn a_drop_time_stays_between_the_start_and_now() {
        let mut s = stream(StreamStatus::Live);
        s.started_at = Some(s.created_at);
        let now = s.created_at + chrono::TimeDelta::minutes(1);
        let future = now + chrono::TimeDelta::hours(1);
        let opened = s.with_window_opened("PA", future, MINUTE, now).unwrap();
        assert_eq!(opened.host_lost_at, Some(now));
        let past = s.created_at - chrono::TimeDelta::hours(1);
        let opened = s.with_window_opened("PA", past, MINUTE, now).unwrap();
        assert_eq!(opened.host_lost_at, Some(s.created_at));
    }
}
