//! Clips (docs/clips.md): a part of a stream's ready recording, cut without re-encoding into an
//! MP4 of its own, kept beside the recording and handed out like it. A clip is asked for, cut in
//! the background (a durable record drives the cut: the clip itself, owed work while it is in
//! the due index), and lives with its stream, at most [`MAX_CLIPS_PER_STREAM`] of them.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::clock::timestamp;
use crate::error::{ApiError, ApiResult};
use crate::recording::{CLIPS_PREFIX, Recording, RecordingStatus};
use crate::validation::present;

/// The longest clip, unless configured (`CLIP_MAX_SECONDS`).
pub const DEFAULT_CLIP_MAX_SECONDS: u32 = 180;
/// The shortest clip, in seconds.
pub const CLIP_MIN_SECONDS: f64 = 1.0;
/// Clips a stream may have, deleted ones included (they stay listed as `deleted`).
pub const MAX_CLIPS_PER_STREAM: u32 = 50;
pub const CLIP_TITLE_MAX_CHARS: usize = 200;
/// Cuts tried before a clip whose reads or write keep failing is `failed`.
pub const CLIP_ATTEMPTS: u32 = 6;
/// How long a cut holds its clip, unless configured (`CLIP_LEASE_SECS`): longer than any cut
/// takes (the clips function's timeout is 120 s). A cut lost with its process is taken again
/// once this has passed.
pub const DEFAULT_CLIP_LEASE: Duration = Duration::from_secs(300);
/// How long a new clip's job has before the sweep sends it again: a new clip is cut by the job
/// its creation queued, and only one lost is the sweep's.
pub const CLIP_JOB_GRACE: Duration = Duration::from_secs(60);
/// A clip's `error` when its recording is no longer kept.
pub const SOURCE_GONE: &str = "the recording is no longer kept";

/// `pending`: waiting for its cut. `processing`: being cut (or waiting to be tried again).
/// `ready`: downloadable. `failed`: it cannot be cut (`error` says why). `expired`: its
/// recording's retention has passed. `deleted`: removed with `DELETE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClipStatus {
    Pending,
    Processing,
    Ready,
    Failed,
    Expired,
    Deleted,
}

impl ClipStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Processing => "processing",
            Self::Ready => "ready",
            Self::Failed => "failed",
            Self::Expired => "expired",
            Self::Deleted => "deleted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Processing,
            Self::Ready,
            Self::Failed,
            Self::Expired,
            Self::Deleted,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
    }

    /// Still owed its cut.
    pub fn owes_cut(self) -> bool {
        matches!(self, Self::Pending | Self::Processing)
    }
}

// Doc comments here are public text: the derived schema documents the request body.
/// Body of `POST /streams/{id}/clips`.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
pub struct ClipRequest {
    /// Where the clip starts, in seconds from the start of the recording (its first part, then its next parts in order); at least 0.
    #[schemars(range(min = 0))]
    pub start_seconds: f64,
    /// Where it ends: after `start_seconds`, by 1 to `CLIP_MAX_SECONDS` (180 by default), within the recording's duration and in the same part as the start.
    pub end_seconds: f64,
    /// A name for people; `null` or absent for none.
    #[schemars(length(min = 1, max = CLIP_TITLE_MAX_CHARS))]
    pub title: Option<String>,
}

impl ClipRequest {
    /// The body's fields in the endpoint's order of checks (docs/request-pipeline.md):
    /// missing fields, then each constraint. `max_seconds` is `CLIP_MAX_SECONDS`.
    pub fn parse(body: &Map<String, Value>, max_seconds: u32) -> ApiResult<Self> {
        let missing: Vec<&str> = ["start_seconds", "end_seconds"]
            .into_iter()
            .filter(|field| present(body, field).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(ApiError::MissingFields(format!(
                "Missing required fields: {}.",
                missing.join(", ")
            )));
        }
        let number = |field: &str| {
            body[field]
                .as_f64()
                .filter(|n| n.is_finite())
                .ok_or_else(|| ApiError::InvalidFields(format!("{field} must be a number.")))
        };
        let start_seconds = number("start_seconds")?;
        let end_seconds = number("end_seconds")?;
        if start_seconds < 0.0 {
            return Err(ApiError::InvalidFields(
                "start_seconds must be at least 0.".into(),
            ));
        }
        if end_seconds <= start_seconds {
            return Err(ApiError::InvalidFields(
                "end_seconds must be after start_seconds.".into(),
            ));
        }
        let length = end_seconds - start_seconds;
        if length > f64::from(max_seconds) || length < CLIP_MIN_SECONDS {
            return Err(ApiError::InvalidFields(format!(
                "A clip lasts from 1 to {max_seconds} seconds."
            )));
        }
        let title = match present(body, "title") {
            None => None,
            Some(Value::String(title))
                if (1..=CLIP_TITLE_MAX_CHARS).contains(&title.chars().count()) =>
            {
                Some(title.clone())
            }
            Some(_) => {
                return Err(ApiError::InvalidFields(format!(
                    "title must be a string of 1 to {CLIP_TITLE_MAX_CHARS} characters."
                )));
            }
        };
        Ok(Self {
            start_seconds,
            end_seconds,
            title,
        })
    }
}

/// The file of a recording a clip is cut from.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipSource {
    /// Its key in the recordings bucket.
    pub key: String,
    /// Where the file starts in the recording's time (the lengths of the parts before it).
    pub offset_seconds: f64,
    /// When it turned `ready`: the clip expires with it.
    pub ready_at: DateTime<Utc>,
}

/// The file of `recording` that holds `start..end` (the recording's time: its parts one after
/// the other), as a clip's checks after the stream's need it: `409 recording_not_ready` while
/// the recording (its first file) is not `ready`, `400 invalid_fields` for a range past the
/// recording's duration (its ready parts, up to the first that is not) or across two parts.
pub fn source_of(
    recording: &Recording,
    start: f64,
    end: f64,
    now: DateTime<Utc>,
    retention: Duration,
) -> ApiResult<ClipSource> {
    let usable = |file: &&crate::recording::RecordingFile| {
        file.status == RecordingStatus::Ready && !file.expired(now, retention)
    };
    if !recording.files.first().is_some_and(|f| usable(&f)) {
        return Err(ApiError::RecordingNotReady);
    }
    let mut offset = 0.0;
    for file in recording.files.iter().take_while(usable) {
        let length = file.duration_seconds.unwrap_or(0) as f64;
        if start < offset + length {
            if end > offset + length {
                return Err(ApiError::InvalidFields(
                    "The clip's range spans two parts of the recording; a clip is cut from one."
                        .into(),
                ));
            }
            return Ok(ClipSource {
                key: file.key.clone(),
                offset_seconds: offset,
                ready_at: file.ready_at.unwrap_or(now),
            });
        }
        offset += length;
    }
    Err(ApiError::InvalidFields(format!(
        "end_seconds is past the recording's duration ({offset} seconds)."
    )))
}

/// A clip as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// `clp_` and 32 lowercase hex digits.
    pub id: String,
    pub stream_id: Uuid,
    pub brand_id: String,
    /// Its stream's: a test stream's clips are cut from the shipped test recording.
    pub test: bool,
    pub title: Option<String>,
    pub start_seconds: f64,
    pub end_seconds: f64,
    /// Never `expired`: that is read off `source.ready_at` when shown.
    pub status: ClipStatus,
    pub source: ClipSource,
    pub duration_seconds: Option<f64>,
    pub size_bytes: Option<u64>,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Cuts begun.
    pub attempts: u32,
    /// When work it is owed falls due (its cut, taken again after a lease or a failed try; a
    /// deleted clip's object removal), `None` when it is owed nothing: the due index.
    pub due_at: Option<DateTime<Utc>>,
    /// Bumped by every write: each write is conditional on the version it read.
    pub version: u64,
}

/// `clp_` and 32 lowercase hex digits.
pub fn new_clip_id() -> String {
    format!("clp_{}", Uuid::new_v4().simple())
}

/// Whether `id` can name a clip; anything else is simply not found.
pub fn is_clip_id(id: &str) -> bool {
    id.strip_prefix("clp_").is_some_and(|hex| {
        hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

impl Clip {
    /// A new clip of `request`, owed its cut from now.
    pub fn new(
        request: ClipRequest,
        stream: &crate::Stream,
        source: ClipSource,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id: new_clip_id(),
            stream_id: stream.id,
            brand_id: stream.brand_id.clone(),
            test: stream.test,
            title: request.title,
            start_seconds: request.start_seconds,
            end_seconds: request.end_seconds,
            status: ClipStatus::Pending,
            source,
            duration_seconds: None,
            size_bytes: None,
            error: None,
            created_at: now,
            attempts: 0,
            due_at: Some(now + TimeDelta::from_std(CLIP_JOB_GRACE).unwrap_or_default()),
            version: 0,
        }
    }

    /// Its object in the recordings bucket: `clips/<brand>/<stream>/<clip>.mp4`.
    pub fn key(&self) -> String {
        format!(
            "{CLIPS_PREFIX}{}/{}/{}.mp4",
            self.brand_id, self.stream_id, self.id
        )
    }

    /// The range to cut, in its source file's time.
    pub fn range_in_source(&self) -> (f64, f64) {
        (
            self.start_seconds - self.source.offset_seconds,
            self.end_seconds - self.source.offset_seconds,
        )
    }

    /// `ready` and past its recording's retention.
    pub fn expired(&self, now: DateTime<Utc>, retention: Duration) -> bool {
        let retention = TimeDelta::from_std(retention).unwrap_or(TimeDelta::MAX);
        self.status == ClipStatus::Ready
            && self
                .source
                .ready_at
                .checked_add_signed(retention)
                .is_some_and(|until| now >= until)
    }

    /// Whether a cut may take it at `now`: `pending` (its job has come), or `processing` with
    /// its lease or its retry's wait over.
    pub fn cut_due(&self, now: DateTime<Utc>) -> bool {
        match self.status {
            ClipStatus::Pending => true,
            ClipStatus::Processing => self.due_at.is_some_and(|due| due <= now),
            _ => false,
        }
    }

    /// The next version of this clip, as a write replaces it.
    pub fn next(&self) -> Self {
        Self {
            version: self.version + 1,
            ..self.clone()
        }
    }

    /// Taken by a cut at `now`: `processing`, due again when its `lease` ends.
    pub fn claimed(&self, now: DateTime<Utc>, lease: Duration) -> Self {
        Self {
            status: ClipStatus::Processing,
            attempts: self.attempts + 1,
            due_at: Some(now + TimeDelta::from_std(lease).unwrap_or(TimeDelta::MAX)),
            ..self.next()
        }
    }

    /// Cut and stored.
    pub fn ready(&self, size_bytes: u64, duration_seconds: f64) -> Self {
        Self {
            status: ClipStatus::Ready,
            size_bytes: Some(size_bytes),
            duration_seconds: Some((duration_seconds * 1000.0).round() / 1000.0),
            due_at: None,
            ..self.next()
        }
    }

    /// It can never be cut: why.
    pub fn failed(&self, error: &str) -> Self {
        Self {
            status: ClipStatus::Failed,
            error: Some(error.to_owned()),
            due_at: None,
            ..self.next()
        }
    }

    /// Deleted at `now`: its object is removed from `now`, or once a cut that holds it has
    /// ended (that cut may still write it).
    pub fn deleted(&self, now: DateTime<Utc>) -> Self {
        let remove_at = match (self.status, self.due_at) {
            (ClipStatus::Processing, Some(lease_end)) => lease_end.max(now),
            _ => now,
        };
        Self {
            status: ClipStatus::Deleted,
            due_at: Some(remove_at),
            ..self.next()
        }
    }
}

/// A clip as the API shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ClipView {
    /// `clp_` and 32 lowercase hex digits.
    #[schemars(pattern("^clp_[0-9a-f]{32}$"))]
    pub clip_id: String,
    pub stream_id: Uuid,
    pub title: Option<String>,
    /// As asked.
    #[serde(serialize_with = "number")]
    pub start_seconds: f64,
    /// As asked.
    #[serde(serialize_with = "number")]
    pub end_seconds: f64,
    pub status: ClipStatus,
    /// The clip's real length, from the keyframe it starts on to the end of the frame covering `end_seconds`; when `ready` (or `expired`).
    pub duration_seconds: Option<f64>,
    /// When `ready` (or `expired`).
    pub size_bytes: Option<u64>,
    /// When `ready`: a presigned `GET` URL of the MP4, valid `RECORDING_URL_TTL_SECS`; a fresh one on every read. `null` in event bodies.
    pub url: Option<String>,
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub url_expires_at: Option<DateTime<Utc>>,
    /// When `failed`: why.
    pub error: Option<String>,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
}

/// A whole number as an integer (`10`, not `10.0`): a time shown as asked.
fn number<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        s.serialize_i64(*value as i64)
    } else {
        s.serialize_f64(*value)
    }
}

impl ClipView {
    /// The clip as shown at `now`, without a URL (events, and the start of a read).
    pub fn new(clip: &Clip, now: DateTime<Utc>, retention: Duration) -> Self {
        Self {
            clip_id: clip.id.clone(),
            stream_id: clip.stream_id,
            title: clip.title.clone(),
            start_seconds: clip.start_seconds,
            end_seconds: clip.end_seconds,
            status: if clip.expired(now, retention) {
                ClipStatus::Expired
            } else {
                clip.status
            },
            duration_seconds: clip.duration_seconds,
            size_bytes: clip.size_bytes,
            url: None,
            url_expires_at: None,
            error: clip.error.clone(),
            created_at: clip.created_at,
        }
    }

    pub fn set_url(&mut self, url: &crate::recording::DownloadUrl) {
        self.url = Some(url.url.clone());
        self.url_expires_at = Some(url.expires_at);
    }
}

/// `GET /streams/{id}/clips`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ClipList {
    /// Every clip of the stream, oldest first (at most 50, deleted ones included).
    pub clips: Vec<ClipView>,
}

/// Orders clips as lists show them: oldest first.
pub fn sort_oldest_first(clips: &mut [Clip]) {
    clips.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::RecordingFile;
    use serde_json::json;

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn checks_come_in_order() {
        let parse = |v| ClipRequest::parse(&body(v), 180).map_err(|e| e.code().as_str());
        assert_eq!(parse(json!({"end_seconds": 5})), Err("missing_fields"));
        assert_eq!(
            parse(json!({"start_seconds": null, "end_seconds": 5})),
            Err("missing_fields")
        );
        assert_eq!(
            parse(json!({"start_seconds": "1", "end_seconds": 5})),
            Err("invalid_fields")
        );
        assert_eq!(
            parse(json!({"start_seconds": -1, "end_seconds": 5})),
            Err("invalid_fields")
        );
        assert_eq!(
            parse(json!({"start_seconds": 5, "end_seconds": 5})),
            Err("invalid_fields")
        );
        assert_eq!(
            parse(json!({"start_seconds": 0, "end_seconds": 180.5})),
            Err("invalid_fields")
        );
        assert_eq!(
            parse(json!({"start_seconds": 0, "end_seconds": 0.5})),
            Err("invalid_fields")
        );
        assert_eq!(
            parse(json!({"start_seconds": 0, "end_seconds": 5, "title": ""})),
            Err("invalid_fields")
        );
        let ok = parse(json!({"start_seconds": 0, "end_seconds": 180, "title": null})).unwrap();
        assert_eq!(
            (ok.start_seconds, ok.end_seconds, ok.title),
            (0.0, 180.0, None)
        );
    }

    fn ready(key: &str, seconds: u64) -> RecordingFile {
        let mut file: RecordingFile = serde_json::from_value(json!({
            "key": key, "status": "recording"
        }))
        .unwrap();
        file.complete(1000, seconds, DateTime::<Utc>::UNIX_EPOCH);
        file
    }

    #[test]
    fn a_range_falls_in_one_ready_part() {
        let now = DateTime::<Utc>::UNIX_EPOCH;
        let week = Duration::from_secs(7 * 86_400);
        let recording = Recording {
            files: vec![ready("a", 60), ready("b", 30)],
        };
        let source = source_of(&recording, 70.0, 80.0, now, week).unwrap();
        assert_eq!((source.key.as_str(), source.offset_seconds), ("b", 60.0));
        let code = |s, e| {
            source_of(&recording, s, e, now, week)
                .unwrap_err()
                .code()
                .as_str()
        };
        assert_eq!(code(50.0, 65.0), "invalid_fields");
        assert_eq!(code(85.0, 91.0), "invalid_fields");
        let late = now + TimeDelta::days(8);
        assert_eq!(
            source_of(&recording, 1.0, 2.0, late, week)
                .unwrap_err()
                .code()
                .as_str(),
            "recording_not_ready"
        );
    }
}
