//! The egresses' state on a stream (docs/destinations.md, "Going live", "One show, two
//! egresses", "Lost, late and early reports"): which egresses it has, the start still owed to
//! them with its claim and retries, and when they are next read back from LiveKit.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::{Stream, StreamStatus};
use crate::destination::{DestinationStatus, EGRESS_UNAVAILABLE};

/// The egresses of a stream, and the start still owed to them. A stream has up to two: one
/// pushing to its destinations, and one writing its recording's file (whose id is on the file,
/// [`crate::recording::RecordingFile::egress_id`]), so that neither's end or limit cuts the
/// other (docs/destinations.md, "One show, two egresses"). An owed start starts whichever of
/// the two is missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Egress {
    /// LiveKit's id of the destinations' egress started last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Times the destinations' egress was started again after one ended while live.
    #[serde(default)]
    pub restarts: u32,
    /// Times the recording's egress was started again after one ended while live.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub file_restarts: u32,
    /// While a start is owed: when its next attempt is due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<DateTime<Utc>>,
    /// While a start is owed: since when (its retries stop `EGRESS_START_RETRY_SECS` after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<DateTime<Utc>>,
    /// Attempts at the owed start so far.
    #[serde(default)]
    pub attempts: u32,
    /// The stream's recording, when it was started with `record: true` (docs/recordings.md):
    /// the egress writes its files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<crate::recording::Recording>,
    /// When the stream's egresses are next read back from LiveKit, whatever it reported
    /// meanwhile (docs/destinations.md, "Lost, late and early reports").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_at: Option<DateTime<Utc>>,
    /// Read-backs in a row that found the destinations' egress unknown to LiveKit.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_reads: u32,
    /// The destinations' egresses the stream used before its current one, latest last: their
    /// late reports
    /// move no destination (docs/destinations.md, "Lost, late and early reports").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous: Vec<String>,
}

/// Most ids [`Egress::previous`] keeps: more than a show of the longest duration ever uses
/// (3 restarts, a start again per LiveKit time limit, and a few egresses LiveKit forgot).
const PREVIOUS_EGRESSES_KEPT: usize = 16;

impl Egress {
    pub fn is_idle(&self) -> bool {
        *self == Self::default()
    }

    /// The destinations' current egress, if any, is no longer the stream's.
    pub fn supersede(&mut self) {
        self.lost_reads = 0;
        if let Some(id) = self.id.take() {
            self.previous.push(id);
            let over = self.previous.len().saturating_sub(PREVIOUS_EGRESSES_KEPT);
            self.previous.drain(..over);
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Which of a stream's egresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EgressKind {
    /// The one pushing to the destinations (`stream_outputs`).
    Destinations,
    /// The one writing the recording's file (`file_outputs`).
    Recording,
}

/// Read-backs in a row that find an egress unknown to LiveKit before it counts as lost.
pub const LOST_AFTER_READS: u32 = 3;
/// The `error` of what a lost egress was for: LiveKit no longer knows it, and never reported
/// its end.
pub const EGRESS_LOST: &str = "egress_lost";

/// How long one egress request may take before it counts as failed.
pub const EGRESS_CALL_TIMEOUT: Duration = Duration::from_secs(10);

impl Stream {
    /// The egresses to read back from LiveKit: the destinations' while live, and the
    /// recording's while it records or its file is `processing`.
    pub fn egresses_to_check(&self) -> Vec<(EgressKind, String)> {
        let mut egresses = Vec::with_capacity(2);
        if self.status == StreamStatus::Live
            && let Some(id) = &self.egress.id
        {
            egresses.push((EgressKind::Destinations, id.clone()));
        }
        if let Some(id) = self.recording_egress() {
            egresses.push((EgressKind::Recording, id.to_owned()));
        }
        egresses
    }

    /// When the stream's egresses are due to be read back, if it has any: armed when one
    /// starts and at each read-back; for a stream that finished without one armed, at its end.
    pub fn egress_check_due(&self) -> Option<DateTime<Utc>> {
        if self.egresses_to_check().is_empty() {
            return None;
        }
        self.egress.check_at.or(self.ended_at).or(self.started_at)
    }

    /// The stream with its read-back claimed at `now` and the next one armed at `next`, so
    /// racing sweeps read back once. `None` when none is due.
    pub fn with_egress_check_claimed(
        &self,
        now: DateTime<Utc>,
        next: DateTime<Utc>,
    ) -> Option<Stream> {
        if self.egress_check_due().is_none_or(|due| due > now) {
            return None;
        }
        let mut next_stream = self.clone();
        next_stream.revision += 1;
        next_stream.egress.check_at = Some(next);
        Some(next_stream)
    }

    /// Which of the stream's egresses `egress_id` currently is, if either.
    pub fn egress_kind(&self, egress_id: &str) -> Option<EgressKind> {
        if self.egress.id.as_deref() == Some(egress_id) {
            Some(EgressKind::Destinations)
        } else if self.recording_egress() == Some(egress_id) {
            Some(EgressKind::Recording)
        } else {
            None
        }
    }

    /// A start owed from `at` of whichever egress is missing (going live, a destination added
    /// with none running, an egress that ended while live). One already owed keeps its time
    /// and attempts.
    pub fn owe_egress_start(&mut self, at: DateTime<Utc>) {
        if self.egress.due_at.is_some() {
            return;
        }
        self.egress.due_at = Some(at);
        self.egress.since = Some(at);
        self.egress.attempts = 0;
    }

    /// The stream with the owed egress start claimed for one attempt at `now`: due again after
    /// the attempt's longest wait, so a process that dies in it leaves the retry to a timer or
    /// the sweep. `None` when no start is due.
    pub fn with_egress_start_claimed(&self, now: DateTime<Utc>) -> Option<Stream> {
        if self.status != StreamStatus::Live || self.egress.due_at.is_none_or(|due| due > now) {
            return None;
        }
        let mut next = self.clone();
        next.revision += 1;
        next.egress.attempts += 1;
        next.egress.due_at = Some(now + delta(EGRESS_CALL_TIMEOUT * 2));
        Some(next)
    }

    /// After the egresses of an owed start were started (`started`, by kind): each kept, and
    /// no start owed. `None` when the stream is no longer live.
    pub fn with_egresses_started(&self, started: &[(EgressKind, String)]) -> Option<Stream> {
        if self.status != StreamStatus::Live {
            return None;
        }
        let mut next = self.clone();
        next.revision += 1;
        for (kind, egress_id) in started {
            match kind {
                EgressKind::Destinations => {
                    next.egress.id = Some(egress_id.clone());
                    next.egress.lost_reads = 0;
                }
                EgressKind::Recording => next.recording_started(egress_id),
            }
        }
        next.egress.due_at = None;
        next.egress.since = None;
        next.egress.attempts = 0;
        Some(next)
    }

    /// After an attempt at the owed start failed at `now` (what it did start, `started`, kept):
    /// due again 1 s after the first failure, doubling, while within `retry_for` of when the
    /// start was first owed; past it, every destination still `starting` with no egress turns
    /// `failed` with [`EGRESS_UNAVAILABLE`], and so does a file no egress writes.
    pub fn with_egress_start_failed(
        &self,
        now: DateTime<Utc>,
        retry_for: Duration,
        started: &[(EgressKind, String)],
    ) -> Option<Stream> {
        if self.status != StreamStatus::Live || self.egress.due_at.is_none() {
            return None;
        }
        let mut next = self.with_egresses_started(started)?;
        next.egress.due_at = self.egress.due_at;
        next.egress.since = self.egress.since;
        next.egress.attempts = self.egress.attempts;
        let since = self.egress.since.unwrap_or(now);
        let give_up_at = since + delta(retry_for);
        if now >= give_up_at {
            next.egress.due_at = None;
            next.egress.since = None;
            next.egress.attempts = 0;
            if next.egress.id.is_none() {
                for destination in &mut next.destinations {
                    if destination.status == DestinationStatus::Starting {
                        destination.advance(
                            DestinationStatus::Failed,
                            now,
                            Some(EGRESS_UNAVAILABLE),
                        );
                    }
                }
            }
            next.recording_start_given_up();
        } else {
            let shift = self.egress.attempts.saturating_sub(1).min(16);
            let wait = delta(Duration::from_secs(1u64 << shift));
            next.egress.due_at = Some((now + wait).min(give_up_at));
        }
        Some(next)
    }
}

fn delta(duration: Duration) -> TimeDelta {
    TimeDelta::from_std(duration).unwrap_or(TimeDelta::MAX)
}
