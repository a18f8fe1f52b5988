//! Replays (docs/recordings.md): a stream started with `record: true` is recorded to an MP4 file by
//! its one egress, kept in the recordings bucket under `recordings/<brand_id>/<stream_id>.mp4`
//! (`-<n>.mp4` for the file of the n-th egress when one was started again), and handed out as a
//! short-lived download URL. The recording's state lives with the egress's on the stream, so every
//! write that moves the egress or the stream's status moves it in the same atomic step.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::clock::timestamp;

/// How long a download URL is valid, unless configured (`RECORDING_URL_TTL_SECS`).
pub const DEFAULT_RECORDING_URL_TTL: Duration = Duration::from_secs(3600);
/// Days a recording is kept, unless configured (`RECORDING_RETENTION_DAYS`).
pub const DEFAULT_RECORDING_RETENTION_DAYS: u32 = 30;
/// Where every recording is written, in the recordings bucket (and the one prefix the upload
/// credentials may write to).
pub const RECORDINGS_PREFIX: &str = "recordings/";
/// Where every clip is written, in the recordings bucket (and the one prefix the clips'
/// function may write to).
pub const CLIPS_PREFIX: &str = "clips/";
/// A recording's `error` when its stream never went live.
pub const NEVER_LIVE: &str = "the stream never went live";
/// A file's `error` when its egress ended without writing it.
pub const NO_FILE: &str = "the egress ended without a file";
/// The MP4 a test stream's recording is (62 s of 160x90 H.264 with a keyframe every 2 s, and
/// AAC sound; made by scripts/media/make-test-recording.py), written under the stream's own key
/// so the whole download path, and cutting clips, work with test keys.
pub const TEST_RECORDING_MP4: &[u8] = include_bytes!("../assets/test-recording.mp4");
/// That file's length, which a test recording reports as its `duration_seconds` (hosting-media's
/// tests read it from the file).
pub const TEST_RECORDING_SECONDS: u64 = 62;
/// The content type every recording is served with.
pub const MP4_CONTENT_TYPE: &str = "video/mp4";

/// `pending`: not live yet. `recording`: live, the egress requested. `processing`: the stream
/// ended, the file not confirmed yet. `ready`: downloadable. `failed`: no file. `expired`: past
/// the retention, deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecordingStatus {
    Pending,
    Recording,
    Processing,
    Ready,
    Failed,
    Expired,
}

impl RecordingStatus {
    pub fn is_final(self) -> bool {
        matches!(self, Self::Ready | Self::Failed | Self::Expired)
    }
}

/// One file of a recording as stored: the key it is written to, the egress writing it, and
/// what the egress reported of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingFile {
    /// The object key in the recordings bucket.
    pub key: String,
    /// Never `expired`: that is read off `ready_at` when shown.
    pub status: RecordingStatus,
    /// The egress that writes it, once started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When it turned `ready`: its retention counts from then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_at: Option<DateTime<Utc>>,
    /// Read-backs in a row that found its egress unknown to LiveKit.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_reads: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl RecordingFile {
    pub(crate) fn new(key: String) -> Self {
        Self {
            key,
            status: RecordingStatus::Pending,
            egress_id: None,
            duration_seconds: None,
            size_bytes: None,
            error: None,
            ready_at: None,
            lost_reads: 0,
        }
    }

    /// Moves to `failed` with `error` unless already final; `true` when it moved.
    pub fn fail(&mut self, error: &str) -> bool {
        if self.status.is_final() {
            return false;
        }
        self.status = RecordingStatus::Failed;
        self.error = Some(error.to_owned());
        true
    }

    /// Moves to `ready` unless already final; `true` when it moved.
    pub fn complete(&mut self, size_bytes: u64, duration_seconds: u64, at: DateTime<Utc>) -> bool {
        if self.status.is_final() {
            return false;
        }
        self.status = RecordingStatus::Ready;
        self.size_bytes = Some(size_bytes);
        self.duration_seconds = Some(duration_seconds);
        self.ready_at = Some(at);
        true
    }

    /// `ready` and past the retention.
    pub fn expired(&self, now: DateTime<Utc>, retention: Duration) -> bool {
        self.status == RecordingStatus::Ready
            && self
                .ready_at
                .and_then(|ready| ready.checked_add_signed(delta(retention)))
                .is_some_and(|until| now >= until)
    }
}

/// A stream's recording: its files in order, the first made when the stream was started with
/// `record: true`, one more for each egress started again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recording {
    pub files: Vec<RecordingFile>,
}

/// `recordings/<brand_id>/<stream_id>.mp4`, and `-<n>.mp4` for the n-th file (from 2).
pub fn recording_key(brand_id: &str, stream_id: uuid::Uuid, n: usize) -> String {
    if n <= 1 {
        format!("{RECORDINGS_PREFIX}{brand_id}/{stream_id}.mp4")
    } else {
        format!("{RECORDINGS_PREFIX}{brand_id}/{stream_id}-{n}.mp4")
    }
}

impl Recording {
    pub fn new(brand_id: &str, stream_id: uuid::Uuid) -> Self {
        Self {
            files: vec![RecordingFile::new(recording_key(brand_id, stream_id, 1))],
        }
    }

    /// The file the next egress start writes: the last one, while no egress wrote it.
    pub fn file_to_start(&self) -> Option<&RecordingFile> {
        self.files
            .last()
            .filter(|f| f.status == RecordingStatus::Recording && f.egress_id.is_none())
    }

    /// The file `egress_id` writes.
    pub fn file_of_egress_mut(&mut self, egress_id: &str) -> Option<&mut RecordingFile> {
        self.files
            .iter_mut()
            .find(|f| f.egress_id.as_deref() == Some(egress_id))
    }

    /// The first file's status: what `recording.status` shows, and what its events follow.
    pub fn status(&self) -> RecordingStatus {
        self.files
            .first()
            .map_or(RecordingStatus::Pending, |f| f.status)
    }
}

/// A download URL of a file and when it stops working.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadUrl {
    pub url: String,
    pub expires_at: DateTime<Utc>,
}

/// A file of a recording as shown.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecordingPart {
    pub status: RecordingStatus,
    /// When `ready` (or `expired`): the file's length in whole seconds.
    pub duration_seconds: Option<u64>,
    /// When `ready` (or `expired`).
    pub size_bytes: Option<u64>,
    /// When `ready`: a presigned `GET` URL of the MP4, valid `RECORDING_URL_TTL_SECS`; a fresh one on every read. `null` in event bodies.
    pub url: Option<String>,
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub url_expires_at: Option<DateTime<Utc>>,
    /// When `failed`: why.
    pub error: Option<String>,
}

/// `recording` of a stream's detail: its first file, and `parts` when an egress started
/// again made more than one.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecordingView {
    #[serde(flatten)]
    pub first: RecordingPart,
    /// Every file in order, the first included; absent while there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<RecordingPart>>,
}

impl RecordingView {
    /// The recording as shown at `now`, without URLs (events, and the start of a read).
    pub fn new(recording: &Recording, now: DateTime<Utc>, retention: Duration) -> Self {
        let mut parts: Vec<RecordingPart> = recording
            .files
            .iter()
            .map(|file| RecordingPart {
                status: if file.expired(now, retention) {
                    RecordingStatus::Expired
                } else {
                    file.status
                },
                duration_seconds: file.duration_seconds,
                size_bytes: file.size_bytes,
                url: None,
                url_expires_at: None,
                error: file.error.clone(),
            })
            .collect();
        let first = parts.first().cloned().unwrap_or(RecordingPart {
            status: RecordingStatus::Pending,
            duration_seconds: None,
            size_bytes: None,
            url: None,
            url_expires_at: None,
            error: None,
        });
        let parts = (parts.len() > 1).then(|| std::mem::take(&mut parts));
        Self { first, parts }
    }

    /// The recording as stored: without URLs, and never `expired`.
    pub fn unsigned(recording: &Recording) -> Self {
        Self::new(recording, DateTime::<Utc>::MIN_UTC, Duration::MAX)
    }

    /// The keys of the files shown `ready`, by their index: the ones a URL is made for.
    pub fn downloadable<'a>(&self, recording: &'a Recording) -> Vec<(usize, &'a str)> {
        recording
            .files
            .iter()
            .enumerate()
            .filter(|(index, _)| {
                self.part(*index).map(|p| p.status) == Some(RecordingStatus::Ready)
            })
            .map(|(index, file)| (index, file.key.as_str()))
            .collect()
    }

    fn part(&self, index: usize) -> Option<&RecordingPart> {
        match &self.parts {
            Some(parts) => parts.get(index),
            None => (index == 0).then_some(&self.first),
        }
    }

    /// The URL of the file at `index`.
    pub fn set_url(&mut self, index: usize, url: &DownloadUrl) {
        let set = |part: &mut RecordingPart| {
            part.url = Some(url.url.clone());
            part.url_expires_at = Some(url.expires_at);
        };
        if index == 0 {
            set(&mut self.first);
        }
        if let Some(part) = self.parts.as_mut().and_then(|parts| parts.get_mut(index)) {
            set(part);
        }
    }
}

/// `record` of a start: a JSON boolean, `false` when absent or `null`.
pub fn parse_record(value: Option<&serde_json::Value>) -> crate::ApiResult<bool> {
    match value {
        None => Ok(false),
        Some(serde_json::Value::Bool(record)) => Ok(*record),
        Some(_) => Err(crate::ApiError::InvalidFields(
            "record must be true or false.".into(),
        )),
    }
}

fn delta(duration: Duration) -> TimeDelta {
    TimeDelta::from_std(duration).unwrap_or(TimeDelta::MAX)
}
