//! A stream's behaviour towards its destinations (docs/destinations.md): which changes of them
//! the egress must follow, what a finished stream makes of them, and which of their changes
//! send an event. The destinations are the stream's parts, so the stream knows them, never the
//! other way round.

use chrono::{DateTime, Utc};

use super::{Stream, StreamStatus};
use crate::destination::*;

impl Stream {
    /// Whether the egress has anything to do: an output to push to or a file to write.
    pub fn wants_egress(&self) -> bool {
        self.destinations.iter().any(Destination::in_egress) || self.records_now()
    }

    /// Whether the stream has destinations that are not final.
    pub fn has_open_destinations(&self) -> bool {
        self.destinations.iter().any(|d| !d.status.is_final())
    }

    /// Destinations not `removed`, which count against [`MAX_DESTINATIONS`].
    pub fn counted_destinations(&self) -> usize {
        self.destinations
            .iter()
            .filter(|d| d.status != DestinationStatus::Removed)
            .count()
    }

    pub fn destination(&self, destination_id: &str) -> Option<&Destination> {
        self.destinations
            .iter()
            .find(|d| d.destination_id == destination_id)
    }

    pub fn destination_mut(&mut self, destination_id: &str) -> Option<&mut Destination> {
        self.destinations
            .iter_mut()
            .find(|d| d.destination_id == destination_id)
    }

    /// The stream with one destination moved to `to` at `at` ([`Destination::advance`]);
    /// `None` when it has no such destination or the move is not forward.
    pub fn with_destination_moved(
        &self,
        destination_id: &str,
        to: DestinationStatus,
        at: DateTime<Utc>,
        error: Option<&str>,
    ) -> Option<Stream> {
        let mut next = self.clone();
        if !next.destination_mut(destination_id)?.advance(to, at, error) {
            return None;
        }
        next.revision += 1;
        Some(next)
    }

    /// What a status change does to the destinations, in the same step: going live, a
    /// live-key stream's pending destinations turn `starting` and an egress start is owed (a
    /// test stream's turn `active`); finishing, those not final turn `ended`, or `failed` when
    /// the stream never went live, and no start is owed any more.
    pub fn destinations_follow_status(&mut self, at: DateTime<Utc>) {
        match self.status {
            StreamStatus::Live => {
                let to = if self.test {
                    DestinationStatus::Active
                } else {
                    DestinationStatus::Starting
                };
                let mut moved = false;
                for destination in &mut self.destinations {
                    moved |= destination.advance(to, at, None);
                }
                self.recording_follows_status();
                if (moved || self.records_now()) && !self.test {
                    self.owe_egress_start(at);
                }
            }
            StreamStatus::Ended | StreamStatus::Error => {
                let to = if self.started_at.is_some() {
                    DestinationStatus::Ended
                } else {
                    DestinationStatus::Failed
                };
                let ended_at = self.ended_at.unwrap_or(at);
                for destination in &mut self.destinations {
                    destination.advance(to, ended_at, None);
                }
                self.recording_follows_status();
                self.egress.due_at = None;
                self.egress.since = None;
            }
            StreamStatus::Preparing => {}
        }
    }

    /// Destinations whose state moved from `before` to `self` into one that is evented
    /// (`active`, `failed`), in order.
    pub fn evented_destination_changes<'a>(&'a self, before: &Stream) -> Vec<&'a Destination> {
        self.destinations
            .iter()
            .filter(|after| {
                matches!(
                    after.status,
                    DestinationStatus::Active | DestinationStatus::Failed
                ) && before
                    .destination(&after.destination_id)
                    .is_none_or(|was| was.status != after.status)
            })
            .collect()
    }
}
