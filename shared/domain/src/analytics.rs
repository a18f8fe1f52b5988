//! Analytics (docs/analytics.md): the window, the figures summed
//! over its streams and their representation.

use std::borrow::Cow;
use std::collections::BTreeMap;

use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use uuid::Uuid;

use super::stream::UNKNOWN_PLATFORM;
use super::{Stream, StreamStatus};
use crate::clock::timestamp;
use crate::error::{ApiError, ApiResult};
use crate::platform::PLATFORMS;

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
    pub const ALL: [Period; 3] = [Period::Day, Period::Week, Period::Month];

    pub fn as_str(self) -> &'static str {
        match self {
            Period::Day => "24h",
            Period::Week => "7d",
            Period::Month => "30d",
        }
    }

    /// `None` means the default, `7d`; anything but the three values is `invalid_fields`,
    /// whose message names them from [`Period::ALL`].
    pub fn parse(raw: Option<&str>) -> ApiResult<Self> {
        let Some(raw) = raw else {
            return Ok(Period::Week);
        };
        Self::ALL
            .into_iter()
            .find(|period| period.as_str() == raw)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|p| p.as_str()).collect();
                ApiError::InvalidFields(format!("period must be one of {}.", known.join(", ")))
            })
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

impl AnalyticsStream {
    /// The row of a stored stream, copying only the two strings the row shows.
    pub fn of(stream: &Stream) -> Self {
        let platform = stream.platform_or_unknown().to_owned();
        Self::with_strings(stream, platform, stream.vertical.clone())
    }

    /// The row of a stream read for it alone: its strings are moved, not copied.
    pub fn from_read(mut stream: Stream) -> Self {
        let platform = stream
            .platform
            .take()
            .unwrap_or_else(|| UNKNOWN_PLATFORM.to_owned());
        let vertical = std::mem::take(&mut stream.vertical);
        Self::with_strings(&stream, platform, vertical)
    }

    fn with_strings(stream: &Stream, platform: String, vertical: String) -> Self {
        Self {
            id: stream.id,
            status: stream.status,
            viewer_count: stream.viewer_count,
            started_at: stream.started_at,
            ended_at: stream.ended_at,
            platform,
            vertical,
        }
    }
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
    pub by_platform: BTreeMap<Cow<'static, str>, u64>,
    /// Newest first, at most 1,000; the totals cover every stream of the window.
    #[schemars(length(max = MAX_LISTED_STREAMS))]
    pub streams: Vec<AnalyticsStream>,
}

/// What analytics sums over a set of streams. Signed, so that a store can take a replaced
/// stream's figures back out of its aggregates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Figures {
    pub streams: i64,
    pub viewers: i64,
    /// Sum of `ended_at - started_at` over the streams that have both.
    pub completed_ms: i64,
    /// Streams per platform (`unknown` when none was recorded).
    pub platforms: PlatformCounts,
}

impl Figures {
    /// All of one stream's figures, as they are now.
    pub fn of(stream: &Stream) -> Self {
        let mut figures = Self::created(stream);
        figures.add(&Self::finished(stream));
        figures
    }

    /// The figures fixed when a stream is created: it counts, on its platform.
    pub fn created(stream: &Stream) -> Self {
        Figures {
            streams: 1,
            platforms: PlatformCounts::one(stream.platform_or_unknown()),
            ..Figures::default()
        }
    }

    /// The figures that change while a stream is active and are final once it finished: its
    /// viewers and its completed time.
    pub fn finished(stream: &Stream) -> Self {
        Figures {
            viewers: i64::try_from(stream.viewer_count).unwrap_or(i64::MAX),
            completed_ms: completed_ms(stream),
            ..Figures::default()
        }
    }

    pub fn add(&mut self, other: &Figures) {
        self.add_signed(other, 1);
    }

    pub fn subtract(&mut self, other: &Figures) {
        self.add_signed(other, -1);
    }

    fn add_signed(&mut self, other: &Figures, sign: i64) {
        self.streams += sign * other.streams;
        self.viewers += sign * other.viewers;
        self.completed_ms += sign * other.completed_ms;
        self.platforms.add_signed(&other.platforms, sign);
    }

    pub fn is_empty(&self) -> bool {
        *self == Figures::default()
    }
}

/// The names counted in fixed slots: every platform a stream can start on, then `unknown`.
const COUNTED_PLATFORMS: [&str; PLATFORMS.len() + 1] = {
    let mut names = [UNKNOWN_PLATFORM; PLATFORMS.len() + 1];
    let mut i = 0;
    while i < PLATFORMS.len() {
        names[i] = PLATFORMS[i];
        i += 1;
    }
    names
};

/// Streams per platform. Summing them is what every analytics read does over a brand's
/// aggregates, so the names a stream can carry are counted in fixed slots: a sum allocates
/// nothing and touches one small array. A stored stream with any other name (none is accepted
/// today) is counted by name beside them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlatformCounts {
    counted: [i64; COUNTED_PLATFORMS.len()],
    /// Sorted by name and never holding a zero count, so that equal counts compare equal.
    others: Vec<(String, i64)>,
}

impl PlatformCounts {
    /// One stream on `platform`.
    pub fn one(platform: &str) -> Self {
        let mut counts = Self::default();
        counts.add(platform, 1);
        counts
    }

    pub fn add(&mut self, platform: &str, count: i64) {
        match COUNTED_PLATFORMS.iter().position(|name| *name == platform) {
            Some(slot) => self.counted[slot] += count,
            None => self.add_other(platform, count),
        }
    }

    fn add_other(&mut self, platform: &str, count: i64) {
        match self
            .others
            .binary_search_by(|(name, _)| name.as_str().cmp(platform))
        {
            Ok(at) => {
                self.others[at].1 += count;
                if self.others[at].1 == 0 {
                    self.others.remove(at);
                }
            }
            Err(at) if count != 0 => self.others.insert(at, (platform.to_owned(), count)),
            Err(_) => {}
        }
    }

    fn add_signed(&mut self, other: &PlatformCounts, sign: i64) {
        for (mine, theirs) in self.counted.iter_mut().zip(other.counted) {
            *mine += sign * theirs;
        }
        for (platform, count) in &other.others {
            self.add_other(platform, sign * count);
        }
    }

    /// Every platform with a count other than zero, and its count.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> {
        COUNTED_PLATFORMS
            .iter()
            .zip(self.counted)
            .map(|(name, count)| (*name, count))
            .chain(
                self.others
                    .iter()
                    .map(|(name, count)| (name.as_str(), *count)),
            )
            .filter(|(_, count)| *count != 0)
    }

    /// The answer's `by_platform`: the platforms with streams, the counted names borrowed.
    fn positive(&self) -> BTreeMap<Cow<'static, str>, u64> {
        let counted = COUNTED_PLATFORMS
            .iter()
            .zip(self.counted)
            .map(|(name, count)| (Cow::Borrowed(*name), count));
        let others = self
            .others
            .iter()
            .map(|(name, count)| (Cow::Owned(name.clone()), *count));
        counted
            .chain(others)
            .filter(|(_, count)| *count > 0)
            .map(|(name, count)| (name, count as u64))
            .collect()
    }
}

fn completed_ms(stream: &Stream) -> i64 {
    match (stream.started_at, stream.ended_at) {
        (Some(started), Some(ended)) => (ended - started).num_milliseconds().max(0),
        _ => 0,
    }
}

/// What a store reads for one analytics window: the totals over every stream of the window,
/// how many of them are live now, and the newest of them (at most [`MAX_LISTED_STREAMS`],
/// newest first) as the answer lists them.
#[derive(Debug, Clone, Default)]
pub struct Window {
    pub figures: Figures,
    pub live_now: u64,
    pub streams: Vec<AnalyticsStream>,
}

impl Window {
    /// The window of exactly `streams` (newest first), summed one by one.
    pub fn of_streams(streams: Vec<Stream>) -> Self {
        let mut window = Window::default();
        for stream in &streams {
            window.figures.add(&Figures::of(stream));
            if stream.status == StreamStatus::Live {
                window.live_now += 1;
            }
        }
        window.streams = streams
            .into_iter()
            .take(MAX_LISTED_STREAMS)
            .map(AnalyticsStream::from_read)
            .collect();
        window
    }
}

/// Where the window starting at `since` splits for stores that keep aggregates per minute of
/// creation: the streams created from `since` to the end of its minute (the partial minute,
/// read one by one) and those created from the next whole minute on (read from aggregates).
pub fn next_whole_minute(since: DateTime<Utc>) -> DateTime<Utc> {
    let minute = since.timestamp().div_euclid(60) * 60;
    DateTime::from_timestamp(minute + 60, 0).unwrap_or(since)
}

/// The answer for `window`.
pub fn answer(period: Period, brand_id: &str, window: Window) -> Analytics {
    let figures = window.figures;
    let mut streams = window.streams;
    streams.truncate(MAX_LISTED_STREAMS);
    let total_streams = figures.streams.max(0) as u64;
    let total_viewers = figures.viewers.max(0) as u64;
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
        total_minutes: (figures.completed_ms.max(0) / 60_000) as u64,
        live_now: window.live_now,
        avg_viewers_per_stream,
        by_platform: figures.platforms.positive(),
        streams,
    }
}

/// The aggregates over `streams` (newest first), which are exactly the window's streams.
pub fn aggregate(period: Period, brand_id: &str, streams: &[Stream]) -> Analytics {
    answer(period, brand_id, Window::of_streams(streams.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_whole_minute_follows_since() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        assert_eq!(
            next_whole_minute(at("2026-03-01T12:00:30.5Z")),
            at("2026-03-01T12:01:00Z")
        );
        // On a whole minute, that minute is the partial one (read one by one).
        assert_eq!(
            next_whole_minute(at("2026-03-01T12:00:00Z")),
            at("2026-03-01T12:01:00Z")
        );
        assert_eq!(
            next_whole_minute(at("2026-03-01T23:59:59.999999Z")),
            at("2026-03-02T00:00:00Z")
        );
    }

    #[test]
    fn figures_added_and_taken_out_leave_nothing() {
        let mut figures = Figures {
            streams: 1,
            viewers: 4,
            completed_ms: 61_000,
            platforms: PlatformCounts::one("kick"),
        };
        let other = figures.clone();
        figures.add(&other);
        assert_eq!(figures.streams, 2);
        assert_eq!(figures.platforms.iter().collect::<Vec<_>>(), [("kick", 2)]);
        figures.subtract(&other);
        figures.subtract(&other);
        assert!(figures.is_empty());
    }

    #[test]
    fn platforms_outside_the_slots_count_by_name() {
        let mut counts = PlatformCounts::one("tiktok");
        counts.add("legacy", 2);
        counts.add(UNKNOWN_PLATFORM, 1);
        let mut sum = PlatformCounts::default();
        sum.add_signed(&counts, 1);
        sum.add_signed(&PlatformCounts::one("legacy"), -1);
        assert_eq!(
            sum.positive(),
            BTreeMap::from([
                (Cow::Borrowed("legacy"), 1),
                (Cow::Borrowed("tiktok"), 1),
                (Cow::Borrowed("unknown"), 1),
            ])
        );
        sum.add_signed(&counts, -1);
        sum.add_signed(&PlatformCounts::one("legacy"), 1);
        assert_eq!(sum, PlatformCounts::default());
        assert_eq!(sum.iter().count(), 0);
    }
}
