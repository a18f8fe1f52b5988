//! A stream's behaviour towards its recording (docs/recordings.md): the file its egress writes,
//! what the stream's end makes of it, and which of its changes send an event. The recording is
//! the stream's part, so the stream knows it, never the other way round.

use chrono::{DateTime, Utc};

use super::{Stream, StreamStatus};
use crate::destination::EGRESS_UNAVAILABLE;
use crate::recording::*;

impl Stream {
    /// The egress writing the recording's current file: the last file's, while it records
    /// (and, the stream over, until its result arrives).
    pub fn recording_egress(&self) -> Option<&str> {
        self.egress
            .recording
            .as_ref()?
            .files
            .last()
            .filter(|f| {
                matches!(
                    f.status,
                    RecordingStatus::Recording | RecordingStatus::Processing
                )
            })
            .and_then(|f| f.egress_id.as_deref())
    }

    /// Whether the stream records and its egress should run for that alone: live, with a
    /// file still to write or being written.
    pub fn records_now(&self) -> bool {
        self.status == StreamStatus::Live
            && self
                .egress
                .recording
                .as_ref()
                .and_then(|r| r.files.last())
                .is_some_and(|f| f.status == RecordingStatus::Recording)
    }

    /// What a status change does to the recording, in the same step: going live, its file
    /// turns `recording` (a live key's egress start is owed by the caller); finishing, a file
    /// being written turns `processing` until its egress reports it (a test stream's until the
    /// shipped MP4 is written under its key), and one that no egress ever wrote `failed`.
    pub(crate) fn recording_follows_status(&mut self) {
        let test = self.test;
        let status = self.status;
        let Some(recording) = self.egress.recording.as_mut() else {
            return;
        };
        for file in &mut recording.files {
            match status {
                StreamStatus::Live if file.status == RecordingStatus::Pending => {
                    file.status = RecordingStatus::Recording;
                }
                StreamStatus::Ended | StreamStatus::Error if !file.status.is_final() => {
                    if file.status == RecordingStatus::Pending {
                        file.fail(NEVER_LIVE);
                    } else if test || file.egress_id.is_some() {
                        // A test stream's file is `ready` once it is written (the relay of
                        // this end's event writes it: [`Stream::with_test_recording_written`]).
                        file.status = RecordingStatus::Processing;
                    } else {
                        file.fail(EGRESS_UNAVAILABLE);
                    }
                }
                _ => {}
            }
        }
    }

    /// A finished test stream's recording once its file (the shipped MP4) is written: `ready`,
    /// described as that file is (its length and size). `None` when it is not waiting for that.
    pub fn with_test_recording_written(&self, at: DateTime<Utc>) -> Option<Stream> {
        if !self.test || self.status.is_active() {
            return None;
        }
        let mut next = self.clone();
        let file = next.egress.recording.as_mut()?.files.first_mut()?;
        if file.status != RecordingStatus::Processing {
            return None;
        }
        file.complete(TEST_RECORDING_MP4.len() as u64, TEST_RECORDING_SECONDS, at);
        next.revision += 1;
        Some(next)
    }

    /// After the egress `egress_id` started: the file it writes is known by it.
    pub(crate) fn recording_started(&mut self, egress_id: &str) {
        if let Some(recording) = self.egress.recording.as_mut()
            && let Some(file) = recording.files.last_mut()
            && file.status == RecordingStatus::Recording
            && file.egress_id.is_none()
        {
            file.egress_id = Some(egress_id.to_owned());
        }
    }

    /// When the egress start is given up: the file no egress wrote is `failed`.
    pub(crate) fn recording_start_given_up(&mut self) {
        if let Some(recording) = self.egress.recording.as_mut() {
            for file in &mut recording.files {
                if file.egress_id.is_none() {
                    file.fail(EGRESS_UNAVAILABLE);
                }
            }
        }
    }

    /// An egress started again after one ended while live writes a file of its own, never
    /// over an earlier one.
    pub fn recording_restarted(&mut self) {
        let (brand_id, id) = (self.brand_id.clone(), self.id);
        if let Some(recording) = self.egress.recording.as_mut() {
            let n = recording.files.len() + 1;
            let mut file = RecordingFile::new(recording_key(&brand_id, id, n));
            file.status = RecordingStatus::Recording;
            recording.files.push(file);
        }
    }

    /// The egress `egress_id` ended: its file is `ready` when it completed with `file`
    /// (`(size_bytes, duration_seconds)`), else `failed` with `error`. `true` when it moved.
    pub fn recording_ended(
        &mut self,
        egress_id: &str,
        file: Option<(u64, u64)>,
        error: &str,
        at: DateTime<Utc>,
    ) -> bool {
        let Some(recorded) = self
            .egress
            .recording
            .as_mut()
            .and_then(|r| r.file_of_egress_mut(egress_id))
        else {
            return false;
        };
        match file {
            Some((size, seconds)) => recorded.complete(size, seconds, at),
            None => recorded.fail(error),
        }
    }

    /// The recording's status as it moved from `before` to `self`, when it reached `ready`
    /// or `failed` (its events).
    pub fn evented_recording_change(&self, before: &Stream) -> Option<RecordingStatus> {
        let after = self.egress.recording.as_ref()?.status();
        let was = before.egress.recording.as_ref().map(Recording::status);
        (matches!(after, RecordingStatus::Ready | RecordingStatus::Failed) && was != Some(after))
            .then_some(after)
    }
}
