//! The usage ledger's arithmetic (docs/usage.md): a stream's metered time cut into segments of
//! one meter and one UTC hour, each named by a `usage_id` a recomputation gives again, summed in
//! milliseconds and rounded once, up, on a period's total.

pub mod period;

use std::collections::BTreeMap;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::stream::{Stream, StreamStatus, StreamUsage};

pub const MS_PER_MINUTE: u64 = 60_000;
/// The shares of a plan's `included_minutes` at which `usage.threshold_reached` fires.
pub const THRESHOLD_PERCENTS: [u32; 4] = [50, 80, 100, 120];

/// What a segment measures. Only `live` draws on plan minutes; the others are the egress time
/// the operator pays LiveKit for, shown beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Meter {
    Live,
    Destination,
    Recording,
}

impl Meter {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Destination => "destination",
            Self::Recording => "recording",
        }
    }
}

/// A test key's streams are metered apart and never billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageEnvironment {
    Live,
    Test,
}

impl UsageEnvironment {
    pub fn of(stream: &Stream) -> Self {
        if stream.test { Self::Test } else { Self::Live }
    }
}

/// How every figure is rounded, carried in every answer about usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rounding {
    pub unit: &'static str,
    pub mode: &'static str,
    pub applied_to: &'static str,
}

pub const ROUNDING: Rounding = Rounding {
    unit: "minute",
    mode: "ceil",
    applied_to: "period_total",
};

/// A period's plan minutes: its `live` milliseconds and its adjustments', rounded up once. A
/// total an adjustment takes below zero bills nothing.
pub fn plan_minutes(live_ms: u64, adjustments_ms: i64) -> u64 {
    let total = i128::from(live_ms) + i128::from(adjustments_ms);
    let total = u64::try_from(total.max(0)).unwrap_or(u64::MAX);
    total.div_ceil(MS_PER_MINUTE)
}

/// The thresholds a change of plan minutes from `before` to `after` reaches for the first time.
pub fn thresholds_reached(before: u64, after: u64, included_minutes: u64) -> Vec<u32> {
    let reached = |minutes: u64, percent: u32| {
        u128::from(minutes) * 100 >= u128::from(included_minutes) * u128::from(percent)
    };
    THRESHOLD_PERCENTS
        .into_iter()
        .filter(|&p| included_minutes > 0 && reached(after, p) && !reached(before, p))
        .collect()
}

/// One stretch of metered time: a meter of one stream (of one destination for `destination`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeteredSpan {
    pub meter: Meter,
    pub destination_id: Option<String>,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// Still running: its end is `now` and moves on.
    pub in_progress: bool,
}

/// A stream's metered spans as its record tells them at `now`. `live` runs from `started_at`
/// to `ended_at` (which, for a stream ended in a reconnect window, is already the drop), or to
/// `now` while live: `preparing` is never metered. A destination runs from its `active` to its
/// end, inside the stream's live time. The recording's egress time is not yet kept on the
/// record, so no `recording` span is derived here.
pub fn metered_spans(stream: &Stream, now: DateTime<Utc>) -> Vec<MeteredSpan> {
    let Some(started) = stream.started_at else {
        return Vec::new();
    };
    let live = stream.status == StreamStatus::Live;
    let Some(live_end) = (if live { Some(now) } else { stream.ended_at }) else {
        return Vec::new();
    };
    let mut spans = Vec::with_capacity(1 + stream.destinations.len());
    if live_end > started {
        spans.push(MeteredSpan {
            meter: Meter::Live,
            destination_id: None,
            start: started,
            end: live_end,
            in_progress: live,
        });
    }
    for d in &stream.destinations {
        let Some(active) = d.started_at else { continue };
        let start = active.max(started);
        let end = d.ended_at.map_or(live_end, |e| e.min(live_end));
        if end > start {
            spans.push(MeteredSpan {
                meter: Meter::Destination,
                destination_id: Some(d.destination_id.clone()),
                start,
                end,
                in_progress: live && d.ended_at.is_none(),
            });
        }
    }
    spans
}

/// A stream's `usage` at `now`: its `live` span to the millisecond, as its segments add up.
pub fn stream_usage(stream: &Stream, now: DateTime<Utc>) -> StreamUsage {
    let live = metered_spans(stream, now)
        .into_iter()
        .find(|span| span.meter == Meter::Live);
    StreamUsage {
        live_ms: live.as_ref().map_or(0, |span| {
            let ms = (to_millisecond(span.end) - to_millisecond(span.start)).num_milliseconds();
            u64::try_from(ms).unwrap_or(0)
        }),
        in_progress: stream.status == StreamStatus::Live,
    }
}

/// The part of a span inside one UTC hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HourPiece {
    pub hour_start: DateTime<Utc>,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

impl HourPiece {
    pub fn duration_ms(&self) -> u64 {
        u64::try_from((self.end - self.start).num_milliseconds()).unwrap_or(0)
    }
}

/// `[start, end)` cut at every UTC hour, to the millisecond (what is finer is dropped from
/// both ends, so pieces add up to the span as stored).
pub fn split_by_hour(start: DateTime<Utc>, end: DateTime<Utc>) -> impl Iterator<Item = HourPiece> {
    let (start, end) = (to_millisecond(start), to_millisecond(end));
    let mut at = start;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let hour_start = hour_of(at);
        let piece_end = end.min(hour_start + TimeDelta::hours(1));
        let piece = HourPiece {
            hour_start,
            start: at,
            end: piece_end,
        };
        at = piece_end;
        Some(piece)
    })
}

pub fn hour_of(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(TimeDelta::hours(1))
        .expect("an hour divides any instant chrono holds")
}

fn to_millisecond(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(TimeDelta::milliseconds(1))
        .expect("a millisecond divides any instant chrono holds")
}

/// `use_` and 32 lowercase hex digits of a SHA-256 of what names a segment: a stream, a
/// meter, a destination (or none) and an hour. The same segment always gets the same id, so a
/// segment written twice is one segment.
pub fn usage_id(
    stream_id: Uuid,
    meter: Meter,
    destination_id: Option<&str>,
    hour_start: DateTime<Utc>,
) -> String {
    let mut hash = Sha256::new();
    for part in [
        stream_id.to_string().as_str(),
        meter.as_str(),
        destination_id.unwrap_or(""),
        &hour_start.timestamp().to_string(),
    ] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    format!("use_{}", hex::encode(&hash.finalize()[..16]))
}

/// What a segment carries about who caused it, beyond the stream's own fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attribution {
    pub show_id: Option<String>,
    pub key_id: Option<String>,
    pub tags: BTreeMap<String, String>,
}

/// One ledger line: one meter of one stream within one UTC hour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsageSegment {
    pub usage_id: String,
    pub stream_id: Uuid,
    pub meter: Meter,
    pub destination_id: Option<String>,
    pub hour_start: DateTime<Utc>,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub duration_ms: u64,
    pub environment: UsageEnvironment,
    pub source: String,
    pub platform: Option<String>,
    pub creator_id: Option<String>,
    pub show_id: Option<String>,
    pub key_id: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub in_progress: bool,
}

/// A stream's segments at `now`: its spans cut by hour. A meter's span is one stretch, so a
/// stream yields at most one segment per meter (and destination) and hour.
pub fn segments(
    stream: &Stream,
    attribution: &Attribution,
    now: DateTime<Utc>,
) -> Vec<UsageSegment> {
    let mut out = Vec::new();
    for span in metered_spans(stream, now) {
        for piece in split_by_hour(span.start, span.end) {
            out.push(UsageSegment {
                usage_id: usage_id(
                    stream.id,
                    span.meter,
                    span.destination_id.as_deref(),
                    piece.hour_start,
                ),
                stream_id: stream.id,
                meter: span.meter,
                destination_id: span.destination_id.clone(),
                hour_start: piece.hour_start,
                start: piece.start,
                end: piece.end,
                duration_ms: piece.duration_ms(),
                environment: UsageEnvironment::of(stream),
                source: stream.source.clone(),
                platform: stream.platform.clone(),
                creator_id: stream.creator_id.clone(),
                show_id: attribution.show_id.clone(),
                key_id: attribution.key_id.clone(),
                tags: attribution.tags.clone(),
                in_progress: span.in_progress,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::destination::{Destination, DestinationStatus};
    use crate::stream::tests::stream;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn ended(started: &str, ended: &str) -> Stream {
        let mut s = stream(StreamStatus::Ended);
        (s.started_at, s.ended_at) = (Some(utc(started)), Some(utc(ended)));
        s
    }

    fn destination(id: &str, active: Option<&str>, end: Option<&str>) -> Destination {
        Destination {
            destination_id: id.into(),
            platform: "youtube".into(),
            ingest_url: "rtmp://a.rtmp.youtube.com/live2".into(),
            stream_key_last4: "abcd".into(),
            status: DestinationStatus::Active,
            error: None,
            started_at: active.map(utc),
            ended_at: end.map(utc),
        }
    }

    #[test]
    fn a_stream_across_hours_and_a_month_end_yields_one_segment_per_hour() {
        let s = ended("2026-11-30T23:15:00.250Z", "2026-12-01T01:05:00Z");
        let got = segments(&s, &Attribution::default(), utc("2026-12-02T00:00:00Z"));
        let hours: Vec<_> = got
            .iter()
            .map(|g| (g.hour_start, g.start, g.end, g.duration_ms))
            .collect();
        assert_eq!(
            hours,
            [
                (
                    utc("2026-11-30T23:00:00Z"),
                    utc("2026-11-30T23:15:00.250Z"),
                    utc("2026-12-01T00:00:00Z"),
                    2_699_750
                ),
                (
                    utc("2026-12-01T00:00:00Z"),
                    utc("2026-12-01T00:00:00Z"),
                    utc("2026-12-01T01:00:00Z"),
                    3_600_000
                ),
                (
                    utc("2026-12-01T01:00:00Z"),
                    utc("2026-12-01T01:00:00Z"),
                    utc("2026-12-01T01:05:00Z"),
                    300_000
                ),
            ]
        );
        let total: u64 = got.iter().map(|g| g.duration_ms).sum();
        assert_eq!(total, 6_599_750);
        assert!(got.iter().all(|g| g.meter == Meter::Live && !g.in_progress));
        assert!(got.iter().all(|g| g.environment == UsageEnvironment::Live));
    }

    #[test]
    fn preparing_and_unstarted_streams_meter_nothing() {
        let now = utc("2026-12-02T00:00:00Z");
        assert!(
            segments(
                &stream(StreamStatus::Preparing),
                &Attribution::default(),
                now
            )
            .is_empty()
        );
        // Ended before it went live (a preparing timeout): no live time at all.
        let mut s = stream(StreamStatus::Ended);
        s.ended_at = Some(now);
        assert!(metered_spans(&s, now).is_empty());
        // A start and an end at the same millisecond: nothing.
        assert!(
            segments(
                &ended("2026-12-01T10:00:00Z", "2026-12-01T10:00:00.0004Z"),
                &Attribution::default(),
                now
            )
            .is_empty()
        );
    }

    #[test]
    fn a_live_stream_accrues_to_now_in_progress() {
        let mut s = stream(StreamStatus::Live);
        s.started_at = Some(utc("2026-12-01T10:59:00Z"));
        let got = segments(&s, &Attribution::default(), utc("2026-12-01T11:00:30.5Z"));
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|g| g.in_progress));
        assert_eq!(got[1].duration_ms, 30_500);
        // Later, the same hours keep their ids: the open one grows in place.
        let later = segments(&s, &Attribution::default(), utc("2026-12-01T11:40:00Z"));
        assert_eq!(later[1].usage_id, got[1].usage_id);
        assert_eq!(later[1].duration_ms, 2_400_000);
    }

    #[test]
    fn destinations_meter_their_active_time_inside_the_stream() {
        let mut s = ended("2026-12-01T10:00:00Z", "2026-12-01T12:30:00Z");
        s.destinations = vec![
            destination("dst_a", Some("2026-12-01T10:00:05Z"), None),
            destination(
                "dst_b",
                Some("2026-12-01T11:00:00Z"),
                Some("2026-12-01T11:10:00Z"),
            ),
            destination("dst_c", None, None),
        ];
        let got = segments(&s, &Attribution::default(), utc("2026-12-02T00:00:00Z"));
        let of = |meter, d: Option<&str>| -> Vec<u64> {
            got.iter()
                .filter(|g| g.meter == meter && g.destination_id.as_deref() == d)
                .map(|g| g.duration_ms)
                .collect()
        };
        assert_eq!(of(Meter::Live, None), [3_600_000, 3_600_000, 1_800_000]);
        // A destination still active when the stream ended stops with it.
        assert_eq!(
            of(Meter::Destination, Some("dst_a")),
            [3_595_000, 3_600_000, 1_800_000]
        );
        assert_eq!(of(Meter::Destination, Some("dst_b")), [600_000]);
        assert!(of(Meter::Destination, Some("dst_c")).is_empty());
    }

    #[test]
    fn ids_are_deterministic_distinct_and_well_formed() {
        let s = ended("2026-12-01T10:30:00Z", "2026-12-01T12:30:00Z");
        let a = segments(&s, &Attribution::default(), utc("2026-12-02T00:00:00Z"));
        let b = segments(&s, &Attribution::default(), utc("2026-12-03T00:00:00Z"));
        assert_eq!(a, b);
        let mut ids: Vec<_> = a.iter().map(|g| g.usage_id.clone()).collect();
        ids.push(usage_id(
            s.id,
            Meter::Destination,
            Some("dst_a"),
            a[0].hour_start,
        ));
        ids.push(usage_id(s.id, Meter::Recording, None, a[0].hour_start));
        ids.push(usage_id(Uuid::nil(), Meter::Live, None, a[0].hour_start));
        for id in &ids {
            let hex = id.strip_prefix("use_").unwrap();
            assert_eq!(hex.len(), 32);
            assert!(hex.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        }
        let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }

    #[test]
    fn test_streams_are_metered_as_test_with_their_attribution() {
        let mut s = ended("2026-12-01T10:00:00Z", "2026-12-01T10:01:00Z");
        s.test = true;
        let attribution = Attribution {
            show_id: Some("shw_1".into()),
            key_id: Some("key_0123456789abcdef".into()),
            tags: BTreeMap::from([("team".into(), "beauty".into())]),
        };
        let got = segments(&s, &attribution, utc("2026-12-02T00:00:00Z"));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].environment, UsageEnvironment::Test);
        assert_eq!(got[0].key_id.as_deref(), Some("key_0123456789abcdef"));
        assert_eq!(got[0].tags["team"], "beauty");
    }

    #[test]
    fn a_streams_usage_is_its_live_segments_added_up() {
        let s = ended("2026-11-30T23:15:00.250Z", "2026-12-01T01:05:00.9999Z");
        let now = utc("2026-12-02T00:00:00Z");
        let total: u64 = segments(&s, &Attribution::default(), now)
            .iter()
            .map(|g| g.duration_ms)
            .sum();
        let usage = stream_usage(&s, now);
        assert_eq!((usage.live_ms, usage.in_progress), (total, false));
        assert_eq!(total, 6_600_749);
        let mut live = stream(StreamStatus::Live);
        live.started_at = Some(now);
        assert_eq!(
            stream_usage(&live, now),
            StreamUsage {
                live_ms: 0,
                in_progress: true
            }
        );
        let later = now + TimeDelta::milliseconds(1_500);
        assert_eq!(stream_usage(&live, later).live_ms, 1_500);
        assert_eq!(
            stream_usage(&stream(StreamStatus::Preparing), now).live_ms,
            0
        );
    }

    #[test]
    fn plan_minutes_round_up_once_on_the_total() {
        assert_eq!(plan_minutes(0, 0), 0);
        assert_eq!(plan_minutes(1, 0), 1);
        assert_eq!(plan_minutes(60_000, 0), 1);
        assert_eq!(plan_minutes(60_001, 0), 2);
        // Sixty streams of one second each are one minute, not sixty.
        assert_eq!(plan_minutes(60 * 1_000, 0), 1);
        assert_eq!(plan_minutes(120_000, -60_000), 1);
        assert_eq!(plan_minutes(1_000, -5_000), 0);
        assert_eq!(
            plan_minutes(u64::MAX, i64::MAX),
            u64::MAX.div_ceil(MS_PER_MINUTE)
        );
    }

    #[test]
    fn thresholds_fire_once_each_as_minutes_cross_them() {
        assert_eq!(thresholds_reached(0, 49, 100), Vec::<u32>::new());
        assert_eq!(thresholds_reached(49, 50, 100), [50]);
        assert_eq!(thresholds_reached(50, 130, 100), [80, 100, 120]);
        assert_eq!(thresholds_reached(130, 200, 100), Vec::<u32>::new());
        // 80% of 7 minutes is 5.6: reached at 6, not at 5.
        assert_eq!(thresholds_reached(4, 5, 7), Vec::<u32>::new());
        assert_eq!(thresholds_reached(5, 6, 7), [80]);
        // No included minutes: no thresholds.
        assert_eq!(thresholds_reached(0, 1_000, 0), Vec::<u32>::new());
    }
}
