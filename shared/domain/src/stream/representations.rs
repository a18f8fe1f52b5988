//! A stream's four public representations (docs/streams.md, "Representations"): created,
//! summary (list items), detail (also the `data.stream` of events) and ended.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use uuid::Uuid;

use super::*;
use crate::clock::timestamp;

fn is_false(b: &bool) -> bool {
    !*b
}

/// Response of `POST /streams`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StreamCreated {
    pub stream_id: Uuid,
    pub status: StreamStatus,
    pub room_name: String,
    pub ws_url: Option<String>,
    pub viewer_token: Option<String>,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// Present, and `true`, only on test-key streams.
    #[serde(skip_serializing_if = "is_false")]
    pub test: bool,
    /// Live keys only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_dispatched: Option<bool>,
    /// Live keys only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch_method: Option<Option<String>>,
    /// The destinations, in the order given (`[]` when none): `pending` for a live key, `active` for a test key.
    pub destinations: Vec<crate::destination::Destination>,
    /// The recording, present when the stream was started with `record: true`: its first file, and every file in `parts` when there is more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording: Option<crate::recording::RecordingView>,
}

/// Item of `GET /streams`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StreamSummary {
    pub id: Uuid,
    pub status: StreamStatus,
    pub platform: String,
    pub vertical: String,
    pub creator_id: Option<String>,
    pub product_name: String,
    pub source: String,
    pub room_name: Option<String>,
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub ended_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    pub viewer_count: u64,
    /// Present, and `true`, only on test-key streams.
    #[serde(skip_serializing_if = "is_false")]
    pub test: bool,
    /// Present once the stream is `ended` or `error`; absent before, never `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "EndReason")]
    pub end_reason: Option<EndReason>,
}

impl StreamSummary {
    /// `creator_id` is the creator's id while that creator exists, else `None`. The stream was
    /// read for this answer alone: its strings move instead of being copied.
    pub fn new(stream: Stream, creator_id: Option<String>) -> Self {
        Self {
            id: stream.id,
            status: stream.status,
            platform: stream
                .platform
                .unwrap_or_else(|| super::UNKNOWN_PLATFORM.to_owned()),
            vertical: stream.vertical,
            creator_id,
            product_name: stream.product_name,
            source: stream.source,
            room_name: stream.room_name,
            started_at: stream.started_at,
            ended_at: stream.ended_at,
            created_at: stream.created_at,
            viewer_count: stream.viewer_count,
            test: stream.test,
            end_reason: stream.end_reason,
        }
    }
}

/// Response of `GET /streams/{id}`, also the `data.stream` of webhook events.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StreamDetail {
    pub stream_id: Uuid,
    pub status: StreamStatus,
    pub creator_id: Option<String>,
    pub product_name: String,
    pub platform: String,
    pub vertical: String,
    pub viewer_count: u64,
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub ended_at: Option<DateTime<Utc>>,
    /// `""` for a stream that never had a room.
    pub room_name: String,
    /// Reserved: always empty in this release.
    pub events: Vec<StreamEventEntry>,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// Present, and `true`, only on test-key streams.
    #[serde(skip_serializing_if = "is_false")]
    pub test: bool,
    /// Present once the stream is `ended` or `error`; absent before, never `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "EndReason")]
    pub end_reason: Option<EndReason>,
    /// The channels the show is pushed to, in the order given (`[]` when none).
    pub destinations: Vec<crate::destination::Destination>,
    /// The recording, present when the stream was started with `record: true`: its first file, and every file in `parts` when there is more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording: Option<crate::recording::RecordingView>,
    /// The stream's metered live time as of the answer: on `GET /streams/{id}` and the test helpers' answers, never in an event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<StreamUsage>,
}

/// A stream's `usage` (docs/usage.md): what its `live` meter has counted so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StreamUsage {
    /// Milliseconds live, from `started_at` to `ended_at` or to the answer while `live`; `0` for a stream that never went live.
    pub live_ms: u64,
    /// `true` while the stream is `live`: the figure still grows.
    pub in_progress: bool,
}

impl StreamDetail {
    pub fn new(stream: &Stream, creator_id: Option<String>) -> Self {
        Self {
            stream_id: stream.id,
            status: stream.status,
            creator_id,
            product_name: stream.product_name.clone(),
            platform: stream.platform_or_unknown().to_owned(),
            vertical: stream.vertical.clone(),
            viewer_count: stream.viewer_count,
            started_at: stream.started_at,
            ended_at: stream.ended_at,
            room_name: stream.room_name.clone().unwrap_or_default(),
            events: Vec::new(),
            created_at: stream.created_at,
            test: stream.test,
            end_reason: stream.end_reason,
            destinations: stream.destinations.clone(),
            recording: recording_as_of_change(stream),
            usage: None,
        }
    }

    /// [`StreamDetail::new`] from a stream read for this answer alone: its strings move
    /// instead of being copied.
    pub fn from_read(stream: Stream, creator_id: Option<String>) -> Self {
        let recording = recording_as_of_change(&stream);
        Self {
            stream_id: stream.id,
            status: stream.status,
            creator_id,
            platform: stream
                .platform
                .unwrap_or_else(|| super::UNKNOWN_PLATFORM.to_owned()),
            product_name: stream.product_name,
            vertical: stream.vertical,
            viewer_count: stream.viewer_count,
            started_at: stream.started_at,
            ended_at: stream.ended_at,
            room_name: stream.room_name.unwrap_or_default(),
            events: Vec::new(),
            created_at: stream.created_at,
            test: stream.test,
            end_reason: stream.end_reason,
            recording,
            destinations: stream.destinations,
            usage: None,
        }
    }
}

/// The recording as a change shows it (the `201`, events): no URL, and never `expired`, which
/// only a read long after shows (`hosting_app` fills both in for reads).
pub fn recording_as_of_change(stream: &Stream) -> Option<crate::recording::RecordingView> {
    stream
        .egress
        .recording
        .as_ref()
        .map(crate::recording::RecordingView::unsigned)
}

/// Response of `GET /streams`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StreamList {
    pub streams: Vec<StreamSummary>,
    /// Streams matching the filter, over every page.
    pub total: u64,
    #[schemars(range(min = 1, max = MAX_LIST_LIMIT))]
    pub limit: u64,
    pub offset: u64,
}

/// An entry of `StreamDetail.events` (none are recorded in this release).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StreamEventEntry {
    #[serde(rename = "type")]
    pub event_type: EventType,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
}

/// Response of `DELETE /streams/{id}`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StreamEnded {
    pub stream_id: Uuid,
    pub status: StreamStatus,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub ended_at: DateTime<Utc>,
}

/// Query of `GET /streams`, after defaulting and clamping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    /// `Some(None)`: a status was asked for that no stream can have.
    pub status: Option<Option<StreamStatus>>,
    pub limit: u64,
    pub offset: u64,
}

impl ListQuery {
    /// Never fails: non-integers take their defaults, out-of-range values are clamped.
    pub fn new(status: Option<&str>, limit: Option<&str>, offset: Option<&str>) -> Self {
        let (limit, offset) = crate::paging::limit_and_offset(limit, offset);
        Self {
            status: status.map(StreamStatus::parse),
            limit,
            offset,
        }
    }
}

#[cfg(test)]
mod list_query_tests {
    use super::*;

    #[test]
    fn an_unknown_status_matches_nothing() {
        assert_eq!(ListQuery::new(Some("bogus"), None, None).status, Some(None));
        assert_eq!(ListQuery::new(None, Some("7"), None).limit, 7);
    }
}
