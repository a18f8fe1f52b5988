//! Analytics (decisions.md section 5): the window, the aggregates over its streams and their
//! representation.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use uuid::Uuid;

use super::{Stream, StreamStatus};
use crate::clock::timestamp;
use crate::error::{ApiError, ApiResult};

/// At most this many streams are listed; the totals always cover the whole window.
pub const MAX_LISTED_STREAMS: usize = 1_000;

/// The analytics window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
// Names for generated clients, as the values are not identifiers.
#[schemars(extend("x-enum-varnames" = ["HOURS_24", "DAYS_7", "DAYS_30"]))]
pub enum Period {
    #[serde(rename = "24h")]
    Day,
    #[serde(rename = "7d")]
    Week,
    #[serde(rename = "30d")]
    Month,
}

impl Period {
    /// `None` means the default, `7d`; anything but the three values is `invalid_fields`.
    pub fn parse(raw: Option<&str>) -> ApiResult<Self> {
        match raw {
            None | Some("7d") => Ok(Period::Week),
            Some("24h") => Ok(Period::Day),
            Some("30d") => Ok(Period::Month),
            Some(_) => Err(ApiError::InvalidFields(
                "period must be one of 24h, 7d, 30d.".into(),
            )),
        }
    }

    pub fn length(self) -> TimeDelta {
        match self {
            Period::Day => TimeDelta::hours(24),
            Period::Week => TimeDelta::days(7),
            Period::Month => TimeDelta::days(30),
        }
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AnalyticsStream {
    pub id: Uuid,
    pub status: StreamStatus,
    pub viewer_count: u64,
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub ended_at: Option<DateTime<Utc>>,
    pub platform: String,
    pub vertical: String,
}

/// Response of `GET /analytics`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Analytics {
    pub period: Period,
    pub brand_id: String,
    pub total_streams: u64,
    pub total_viewers: u64,
    /// Whole minutes of the window's completed streams.
    pub total_minutes: u64,
    pub live_now: u64,
    /// Rounded to two decimals.
    #[schemars(range(min = 0))]
    pub avg_viewers_per_stream: f64,
    /// Streams per platform (`unknown` when none was recorded).
    pub by_platform: BTreeMap<String, u64>,
    /// Newest first, at most 1,000; the totals cover every stream of the window.
    #[schemars(length(max = MAX_LISTED_STREAMS))]
    pub streams: Vec<AnalyticsStream>,
}

/// The aggregates over `streams` (newest first), which are exactly the window's streams.
pub fn aggregate(period: Period, brand_id: &str, streams: &[Stream]) -> Analytics {
    let total_streams = streams.len() as u64;
    let total_viewers: u64 = streams.iter().map(|s| s.viewer_count).sum();
    let completed_millis: i64 = streams
        .iter()
        .filter_map(|s| Some((s.ended_at? - s.started_at?).num_milliseconds().max(0)))
        .sum();
    let mut by_platform = BTreeMap::new();
    for stream in streams {
        *by_platform
            .entry(stream.platform_or_unknown().to_owned())
            .or_insert(0) += 1;
    }
    let avg_viewers_per_stream = if total_streams == 0 {
        0.0
    } else {
        (total_viewers as f64 / total_streams as f64 * 100.0).round() / 100.0
    };
    Analytics {
        period,
        brand_id: brand_id.to_owned(),
        total_streams,
        total_viewers,
        total_minutes: (completed_millis / 60_000) as u64,
        live_now: streams
            .iter()
            .filter(|s| s.status == StreamStatus::Live)
            .count() as u64,
        avg_viewers_per_stream,
        by_platform,
        streams: streams
            .iter()
            .take(MAX_LISTED_STREAMS)
            .map(|s| AnalyticsStream {
                id: s.id,
                status: s.status,
                viewer_count: s.viewer_count,
                started_at: s.started_at,
                ended_at: s.ended_at,
                platform: s.platform_or_unknown().to_owned(),
                vertical: s.vertical.clone(),
            })
            .collect(),
    }
}
