//! The deletion of a finished stream's room, kept as a record until the room provider confirms the
//! room is gone (docs/lifecycle.md, "Room cleanup"). The record is written in the same atomic step
//! as the transition that finishes the stream, so no crash, timeout or provider failure between the
//! two can leave a host airing in a room nobody will delete.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use uuid::Uuid;

use super::Stream;

/// The longest wait between two attempts: a room whose deletion failed is deleted again
/// within this, plus one sweep interval, of the provider being reachable again.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(45);
/// After a launch's bound, how long a request the launch sent may still be acted on by the
/// provider (a `CreateRoom` answered after the launch stopped waiting).
pub const LAUNCH_SETTLE: Duration = Duration::from_secs(10);

/// A room to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomCleanup {
    pub stream_id: Uuid,
    pub brand_id: String,
    pub room_name: String,
    /// When the stream finished, or when the room was seen in use after that: how long the
    /// cleanup has been pending.
    pub since: DateTime<Utc>,
    /// When the next attempt is due.
    pub due_at: DateTime<Utc>,
    /// Attempts that failed so far.
    pub attempts: u32,
    /// Until then a launch may still create the room (or dispatch its agent), so a deletion
    /// confirmed earlier is made again at this time before the record is done.
    pub hold_until: DateTime<Utc>,
    /// The stream's destinations' egress, stopped before the room is deleted
    /// (docs/destinations.md, "Ending").
    pub egress_id: Option<String>,
    /// The egress writing its recording's last file, stopped likewise.
    pub file_egress_id: Option<String>,
    /// The stream has stream keys to erase once the cleanup is done.
    pub erase_keys: bool,
}

impl RoomCleanup {
    /// The cleanup of `stream`, finished at `at`, whose launch (if any) was bounded by
    /// `launch_bound` from its creation: none for a stream without a room (test streams).
    pub fn for_finished(
        stream: &Stream,
        at: DateTime<Utc>,
        launch_bound: Duration,
    ) -> Option<Self> {
        let room_name = stream.room_name.clone().filter(|_| !stream.test)?;
        let hold_until = stream.created_at + delta(launch_bound + LAUNCH_SETTLE);
        Some(Self {
            stream_id: stream.id,
            brand_id: stream.brand_id.clone(),
            room_name,
            since: at,
            due_at: at,
            attempts: 0,
            hold_until,
            egress_id: stream.egress.id.clone(),
            file_egress_id: stream.recording_egress().map(str::to_owned),
            erase_keys: !stream.destinations.is_empty(),
        })
    }

    /// The cleanup as the finished stream it was written with holds it (the stream as stored
    /// may have moved on from the read it was first built from: an egress started, a
    /// destination added).
    pub fn of_stored(&self, stream: &Stream) -> Self {
        Self {
            egress_id: stream.egress.id.clone(),
            file_egress_id: stream.recording_egress().map(str::to_owned),
            erase_keys: !stream.destinations.is_empty(),
            ..self.clone()
        }
    }

    /// The record after a failed attempt at `now`: due again after a delay that doubles with
    /// each failure, from one second up to [`MAX_RETRY_DELAY`].
    pub fn failed(&self, now: DateTime<Utc>) -> Self {
        let delay = Duration::from_secs(1u64 << self.attempts.min(16)).min(MAX_RETRY_DELAY);
        Self {
            attempts: self.attempts.saturating_add(1),
            due_at: now + delta(delay),
            ..self.clone()
        }
    }

    /// After the provider confirmed the room gone at `now`: `None` when the cleanup is done,
    /// or the record due again at its hold when a launch may still recreate the room.
    pub fn confirmed(&self, now: DateTime<Utc>) -> Option<Self> {
        (now < self.hold_until).then(|| Self {
            due_at: self.hold_until,
            ..self.clone()
        })
    }
}

fn delta(duration: Duration) -> TimeDelta {
    TimeDelta::from_std(duration).unwrap_or(TimeDelta::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cleanup() -> RoomCleanup {
        let at = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        RoomCleanup {
            stream_id: Uuid::nil(),
            brand_id: "brand_a".into(),
            room_name: "stream-x".into(),
            since: at,
            due_at: at,
            attempts: 0,
            hold_until: at + TimeDelta::seconds(30),
            egress_id: None,
            file_egress_id: None,
            erase_keys: false,
        }
    }

    #[test]
    fn retries_back_off_up_to_the_cap() {
        let start = cleanup();
        let mut record = start.clone();
        let mut delays = Vec::new();
        for _ in 0..9 {
            let next = record.failed(start.since);
            delays.push((next.due_at - start.since).num_seconds());
            record = next;
        }
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 45, 45, 45]);
        assert_eq!(record.attempts, 9);
        // Very many failures never overflow.
        record.attempts = u32::MAX;
        assert_eq!(record.failed(start.since).attempts, u32::MAX);
    }

    #[test]
    fn a_confirmation_before_the_hold_is_made_again_at_the_hold() {
        let record = cleanup();
        let again = record.confirmed(record.since).expect("held");
        assert_eq!(again.due_at, record.hold_until);
        assert_eq!(record.confirmed(record.hold_until), None);
    }
}
