//! Analytics in bounded work: a window's totals from aggregates kept as streams change, so a
//! 30-day `GET /analytics` reads the same few dozen aggregate items with 200 or 200,000
//! streams in the window, plus the streams it lists.
//!
//! - A brand's streams are aggregated by time of creation: `DAY#<brand>#<date>` holds the
//!   day's figures per hour (`h<hh>_n`, ...), `HOUR#<brand>#<date>T<hh>` the hour's per minute
//!   (`m<mm>_n`, ...). Figures: streams created (`_n`) and per platform (`_p_<platform>`),
//!   set by the creation's transaction; viewers (`_v`) and completed milliseconds (`_ms`),
//!   added by the transaction that finishes the stream (a finished stream's figures never
//!   change again: viewer counts change only while `live`). Seeding adds the same.
//! - A window since `since` is then: the whole days after the day of `since`'s minute (day
//!   items), the whole hours after that minute's hour in its day (its day item), the whole
//!   minutes after it in its hour (its hour item), and the streams created in the minute of
//!   `since` itself, read one by one (a brand starts at most 100 streams a minute through the
//!   API). Active streams (at most 3, listed in the counters item) add their viewers and time
//!   as they are now.
//! - The counters item and the aggregate items are read in one `TransactGetItems`, so a stream
//!   finishing meanwhile is either still active there (and read one by one) or already in the
//!   aggregates, never both. Positions follow creation time, so the streams created in the
//!   whole minutes are the newest positions (their count is the aggregates' `_n`): the listed
//!   streams and those of the partial minute are position ranges, read with the active ones in
//!   one `BatchGetItem` round.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{Get, TransactGetItem, TransactWriteItem};
use chrono::{DateTime, NaiveDate, TimeDelta, Timelike, Utc};

use super::items::n;
use super::keys;
use super::positions::BrandIndex;
use super::requests::{add_update, backend, backoff, retrying};
use super::{DynamoStore, Item};
use hosting_domain::analytics::{
    AnalyticsStream, Figures, MAX_LISTED_STREAMS, Window, next_whole_minute,
};
use hosting_domain::ports::StoreResult;
use hosting_domain::{Stream, StreamStatus};
use hosting_support::admission;

/// Attempts of a `TransactGetItems` that a concurrent write cancelled.
const READ_ATTEMPTS: u32 = 6;

const STREAMS: &str = "n";
const VIEWERS: &str = "v";
const COMPLETED: &str = "ms";
const PLATFORM: &str = "p_";

/// The aggregate items a stream created at `at` counts in, and its unit in each: (day, hour)
/// and (hour item, minute).
struct Buckets {
    day: NaiveDate,
    hour: u32,
    minute: u32,
}

impl Buckets {
    fn of(at: DateTime<Utc>) -> Self {
        Buckets {
            day: at.date_naive(),
            hour: at.hour(),
            minute: at.minute(),
        }
    }
}

fn hour_unit(hour: u32) -> String {
    format!("h{hour:02}")
}

fn minute_unit(minute: u32) -> String {
    format!("m{minute:02}")
}

/// `figures` as attribute deltas of `unit`, zero ones left out.
fn attributes(unit: &str, figures: &Figures) -> Vec<(String, i64)> {
    let mut attributes = vec![
        (format!("{unit}_{STREAMS}"), figures.streams),
        (format!("{unit}_{VIEWERS}"), figures.viewers),
        (format!("{unit}_{COMPLETED}"), figures.completed_ms),
    ];
    for (platform, count) in figures.platforms.iter() {
        attributes.push((format!("{unit}_{PLATFORM}{platform}"), count));
    }
    attributes.retain(|(_, delta)| *delta != 0);
    attributes
}

/// An aggregate item's figures per unit (hour of a day item, minute of an hour item).
fn units(item: &Item) -> BTreeMap<u32, Figures> {
    let mut units: BTreeMap<u32, Figures> = BTreeMap::new();
    for (name, value) in item {
        let Some((unit, figure)) = name.split_once('_') else {
            continue;
        };
        let Some(unit) = unit.get(1..).and_then(|u| u.parse::<u32>().ok()) else {
            continue;
        };
        let Some(value) = value.as_n().ok().and_then(|v| v.parse::<i64>().ok()) else {
            continue;
        };
        let figures = units.entry(unit).or_default();
        match figure {
            STREAMS => figures.streams += value,
            VIEWERS => figures.viewers += value,
            COMPLETED => figures.completed_ms += value,
            _ => {
                if let Some(platform) = figure.strip_prefix(PLATFORM)
                    && value != 0
                {
                    figures.platforms.add(platform, value);
                }
            }
        }
    }
    units
}

/// Aggregate items' keys and attributes.
pub(super) type AggregateItems = Vec<(Item, BTreeMap<String, i64>)>;

/// An aggregate item with `attributes`, written whole.
pub(super) fn aggregate_item(key: Item, attributes: BTreeMap<String, i64>) -> Item {
    let mut item = key;
    for (name, value) in attributes.into_iter().filter(|(_, v)| *v != 0) {
        item.insert(name, n(value));
    }
    item
}

/// Aggregate attributes per item, accumulated over many streams (seeding).
#[derive(Debug, Default)]
pub(super) struct Aggregates {
    days: BTreeMap<NaiveDate, BTreeMap<String, i64>>,
    hours: BTreeMap<(NaiveDate, u32), BTreeMap<String, i64>>,
}

impl Aggregates {
    /// What `streams`, as stored, add: every one's creation figures, and the final figures of
    /// those that finished.
    pub(super) fn of_stored<'a>(streams: impl IntoIterator<Item = &'a Stream>) -> Self {
        let mut aggregates = Aggregates::default();
        for stream in streams {
            let figures = if stream.status.is_active() {
                Figures::created(stream)
            } else {
                Figures::of(stream)
            };
            let at = Buckets::of(stream.created_at);
            for (attribute, delta) in attributes(&hour_unit(at.hour), &figures) {
                *aggregates
                    .days
                    .entry(at.day)
                    .or_default()
                    .entry(attribute)
                    .or_default() += delta;
            }
            for (attribute, delta) in attributes(&minute_unit(at.minute), &figures) {
                *aggregates
                    .hours
                    .entry((at.day, at.hour))
                    .or_default()
                    .entry(attribute)
                    .or_default() += delta;
            }
        }
        aggregates
    }

    /// Each aggregate item's key and its attributes, in two parts: the items of days and
    /// hours after `newest` (the creation time of the brand's newest stream so far), which no
    /// stream counted in yet, and the others.
    pub(super) fn split_after(
        self,
        brand_id: &str,
        newest: Option<DateTime<Utc>>,
    ) -> (AggregateItems, AggregateItems) {
        let newest = newest.map(Buckets::of);
        let (mut new, mut old) = (Vec::new(), Vec::new());
        for (day, attributes) in self.days {
            let key = keys::day_key(brand_id, day);
            match &newest {
                Some(newest) if day <= newest.day => old.push((key, attributes)),
                _ => new.push((key, attributes)),
            }
        }
        for ((day, hour), attributes) in self.hours {
            let key = keys::hour_key(brand_id, day, hour);
            match &newest {
                Some(newest) if (day, hour) <= (newest.day, newest.hour) => {
                    old.push((key, attributes));
                }
                _ => new.push((key, attributes)),
            }
        }
        (new, old)
    }

    /// Each aggregate item's key and its attributes.
    pub(super) fn items(self, brand_id: &str) -> AggregateItems {
        let days = self
            .days
            .into_iter()
            .map(|(day, attributes)| (keys::day_key(brand_id, day), attributes));
        let hours = self
            .hours
            .into_iter()
            .map(|((day, hour), attributes)| (keys::hour_key(brand_id, day, hour), attributes));
        days.chain(hours).collect()
    }
}

/// The date a counters item's `newest` (`created_at#id`) names.
fn newest_day(index: &BrandIndex) -> Option<NaiveDate> {
    let newest = index.newest.as_ref()?;
    NaiveDate::parse_from_str(newest.get(..10)?, "%Y-%m-%d").ok()
}

impl DynamoStore {
    /// The updates of a stream's two aggregate items adding `figures` (none when there is
    /// nothing to add), for the transaction that creates or finishes it.
    pub(super) fn aggregate_updates(
        &self,
        stream: &Stream,
        figures: &Figures,
    ) -> StoreResult<Vec<TransactWriteItem>> {
        let at = Buckets::of(stream.created_at);
        let mut items = Vec::new();
        let by_hour = attributes(&hour_unit(at.hour), figures);
        if !by_hour.is_empty() {
            items.push(add_update(
                &self.table,
                keys::day_key(&stream.brand_id, at.day),
                &by_hour,
            )?);
        }
        let by_minute = attributes(&minute_unit(at.minute), figures);
        if !by_minute.is_empty() {
            items.push(add_update(
                &self.table,
                keys::hour_key(&stream.brand_id, at.day, at.hour),
                &by_minute,
            )?);
        }
        Ok(items)
    }

    /// Items by key in one consistent, atomic read (at most 100), in the order of `keys`.
    async fn transact_get(&self, keys: Vec<Item>) -> StoreResult<Vec<Option<Item>>> {
        let mut gets = Vec::with_capacity(keys.len());
        for key in keys {
            let get = Get::builder()
                .table_name(&self.table)
                .set_key(Some(key))
                .build()
                .map_err(backend)?;
            gets.push(TransactGetItem::builder().get(get).build());
        }
        let mut attempt = 0;
        loop {
            let result = retrying(|| {
                self.client
                    .transact_get_items()
                    .set_transact_items(Some(gets.clone()))
                    .send()
            })
            .await;
            match result {
                Ok(out) => {
                    return Ok(out
                        .responses
                        .unwrap_or_default()
                        .into_iter()
                        .map(|response| response.item)
                        .collect());
                }
                // A write to one of the items was in progress: read again.
                Err(err)
                    if attempt + 1 < READ_ATTEMPTS
                        && err.code() == Some("TransactionCanceledException") =>
                {
                    attempt += 1;
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Err(err) => return Err(backend(err)),
            }
        }
    }

    /// See [`hosting_domain::ports::StreamStore::analytics_window`] and the module's documentation.
    pub(super) async fn read_analytics_window(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Window> {
        let whole = next_whole_minute(since);
        let partial = Buckets::of(whole - TimeDelta::minutes(1));
        // The day of `since`'s minute to tomorrow (a start placed after the newest can land
        // a moment ahead of the clock).
        let last_day = now.date_naive().max(partial.day) + TimeDelta::days(1);
        let days: Vec<NaiveDate> = partial
            .day
            .iter_days()
            .take_while(|day| *day <= last_day)
            .collect();
        let mut keys = vec![
            keys::brand_key(brand_id),
            keys::hour_key(brand_id, partial.day, partial.hour),
        ];
        keys.extend(days.iter().map(|day| keys::day_key(brand_id, *day)));
        let mut read = self.transact_get(keys).await?.into_iter();
        // The rest (the partial minute's and the listed streams) waits for the request's
        // admission; the aggregates, a constant number of items, went alongside it.
        admission::admitted().await;
        let index = BrandIndex::from_item(&read.next().flatten().unwrap_or_default())?;
        let minutes = units(&read.next().flatten().unwrap_or_default());
        let mut day_items: Vec<(NaiveDate, Item)> = days
            .into_iter()
            .zip(read)
            .filter_map(|(day, item)| Some((day, item?)))
            .collect();
        // Seeded history dated past tomorrow: its days too (they change only when its
        // active streams finish).
        if let Some(newest) = newest_day(&index).filter(|newest| *newest > last_day) {
            let later: Vec<Item> = (last_day + TimeDelta::days(1))
                .iter_days()
                .take_while(|day| day <= &newest)
                .map(|day| keys::day_key(brand_id, day))
                .collect();
            // Not the day of `since`: every hour counts.
            for item in self.batch_get(later).await? {
                day_items.push((NaiveDate::MAX, item));
            }
        }

        // The whole minutes after `since`'s, from the aggregates.
        let mut window = Window::default();
        for figures in minutes.range(partial.minute + 1..).map(|(_, f)| f) {
            window.figures.add(figures);
        }
        for (day, item) in &day_items {
            let hours = units(item);
            let from = if *day == partial.day {
                partial.hour + 1
            } else {
                0
            };
            for figures in hours.range(from..).map(|(_, f)| f) {
                window.figures.add(figures);
            }
        }
        let in_partial_minute = minutes
            .get(&partial.minute)
            .map_or(0, |f| f.streams.max(0) as u64);

        // Positions: the whole minutes' streams are the newest `created` ones, the partial
        // minute's come just before them.
        let created = window.figures.streams.max(0) as u64;
        let whole_start = index.total.saturating_sub(created);
        let partial_start = whole_start.saturating_sub(in_partial_minute);
        let listed: Vec<u64> = (whole_start..index.total)
            .rev()
            .take(MAX_LISTED_STREAMS)
            .collect();
        let active: Vec<u64> = index
            .active
            .keys()
            .copied()
            .filter(|p| (whole_start..index.total).contains(p))
            .collect();
        let wanted: BTreeSet<u64> = listed
            .iter()
            .copied()
            .chain(partial_start..whole_start)
            .chain(active.iter().copied())
            .collect();
        let wanted: Vec<u64> = wanted.into_iter().collect();
        // Live ones' viewer shards alongside, by the ids the counters keep.
        let live = index.live_ids_among(&wanted);
        let (streams, sums) = tokio::join!(
            self.streams_by_position(brand_id, &wanted),
            self.shard_sums(&live)
        );
        let mut streams: HashMap<u64, Stream> = streams?;
        self.with_live_viewers(streams.values_mut(), &sums?).await?;

        let count = |window: &mut Window, stream: &Stream, figures: Figures| {
            window.figures.add(&figures);
            if stream.status == StreamStatus::Live {
                window.live_now += 1;
            }
        };
        // The partial minute, one by one.
        let mut partial_streams = Vec::new();
        for position in (partial_start..whole_start).rev() {
            if let Some(stream) = streams.get(&position).filter(|s| s.created_at >= since) {
                count(&mut window, stream, Figures::of(stream));
                partial_streams.push(stream.clone());
            }
        }
        // Active streams: their viewers and time as they are now (those that finished since
        // the aggregates were read are not in them).
        for position in active {
            if let Some(stream) = streams.get(&position) {
                count(&mut window, stream, Figures::finished(stream));
            }
        }
        window.streams = listed
            .iter()
            .filter_map(|position| streams.remove(position))
            .chain(partial_streams)
            .take(MAX_LISTED_STREAMS)
            .map(AnalyticsStream::from_read)
            .collect();
        Ok(window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;
    use hosting_domain::analytics::PlatformCounts;

    #[test]
    fn attributes_read_back_as_units() {
        let figures = Figures {
            streams: 2,
            viewers: 7,
            completed_ms: 61_000,
            platforms: {
                let mut platforms = PlatformCounts::one("kick");
                platforms.add("tik_tok", 1);
                platforms
            },
        };
        let mut item: Item = attributes(&minute_unit(5), &figures)
            .into_iter()
            .map(|(name, value)| (name, AttributeValue::N(value.to_string())))
            .collect();
        item.insert("pk".into(), AttributeValue::S("HOUR#b#x".into()));
        item.insert("m07_n".into(), AttributeValue::N("1".into()));
        let units = units(&item);
        assert_eq!(units.get(&5), Some(&figures));
        assert_eq!(units.get(&7).map(|f| f.streams), Some(1));
        assert_eq!(units.len(), 2);
    }
}
