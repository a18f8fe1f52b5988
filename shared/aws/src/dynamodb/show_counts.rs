//! How many shows each of a brand's show lists holds, in items whose size does not grow with
//! how many shows the brand has had (docs/shows.md, "Storage").
//!
//! Per list (`SHOWCOUNTS#<brand>#<letter>`), the root item (`SHOWCOUNTS`) counts shows per
//! month of `starts_at` (`m<yyyymm>`, about 10 bytes a month) and one item per month
//! (`MONTH#<yyyymm>`) counts them per hour (`h<ddhh>`, at most 744). A show write adds to the
//! root and to the months it moves shows in; a page reads the root, then the month where its
//! offset falls, and knows the hour to query from.
//!
//! Root items written before this layout hold one attribute per hour (`<letter><yyyymmddhh>`).
//! They are read as well and never written again: counts add up, so a show counted in the old
//! layout and moved in the new one nets out exactly, and stacks upgrade without a migration.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::TransactWriteItem;
use chrono::{DateTime, NaiveDate, Utc};

use super::DynamoStore;
use super::Item;
use super::items::corrupt;
use super::keys;
use super::requests::add_update;
use hosting_domain::ports::StoreResult;
use hosting_support::admission;

/// An hour of `starts_at`, as `yyyymmddhh`.
pub(super) type Hour = String;

pub(super) fn hour_of(starts_at: DateTime<Utc>) -> Hour {
    starts_at.format("%Y%m%d%H").to_string()
}

/// The start of the hour `hour` names.
fn hour_start(hour: &str) -> Option<DateTime<Utc>> {
    let (year, month, day, at) = (
        hour.get(..4)?.parse().ok()?,
        hour.get(4..6)?.parse().ok()?,
        hour.get(6..8)?.parse().ok()?,
        hour.get(8..10)?.parse().ok()?,
    );
    let date = NaiveDate::from_ymd_opt(year, month, day)?;
    Some(date.and_hms_opt(at, 0, 0)?.and_utc())
}

fn month_attribute(month: &str) -> String {
    format!("m{month}")
}

fn hour_attribute(hour: &str) -> String {
    format!("h{}", &hour[6..])
}

/// How `deltas` (per list letter and hour, shows added or removed) move the counts: one `ADD`
/// on each list's root and one on each month item that changes, none for what nets to zero.
pub(super) fn count_writes(
    table: &str,
    brand_id: &str,
    deltas: &BTreeMap<(char, Hour), i64>,
) -> StoreResult<Vec<TransactWriteItem>> {
    // Per list, per month: the hours' deltas.
    let mut lists: BTreeMap<char, BTreeMap<String, BTreeMap<String, i64>>> = BTreeMap::new();
    for ((letter, hour), delta) in deltas.iter().filter(|(_, delta)| **delta != 0) {
        *lists
            .entry(*letter)
            .or_default()
            .entry(hour[..6].to_owned())
            .or_default()
            .entry(hour_attribute(hour))
            .or_default() += delta;
    }
    let mut writes = Vec::new();
    for (letter, months) in lists {
        let by_month: Vec<(String, i64)> = months
            .iter()
            .map(|(month, hours)| (month_attribute(month), hours.values().sum()))
            .filter(|(_, delta)| *delta != 0)
            .collect();
        if !by_month.is_empty() {
            writes.push(add_update(
                table,
                keys::show_counts_key(brand_id, letter),
                &by_month,
            )?);
        }
        for (month, hours) in months {
            let hours: Vec<(String, i64)> = hours.into_iter().collect();
            writes.push(add_update(
                table,
                keys::show_month_counts_key(brand_id, letter, &month),
                &hours,
            )?);
        }
    }
    Ok(writes)
}

/// Where a page of a list begins.
pub(super) struct PageStart {
    /// How many shows the list holds.
    pub(super) total: u64,
    /// The hour where the page's offset falls and how many of that hour's shows come before
    /// it; `None` when the offset is past the end.
    pub(super) from: Option<(DateTime<Utc>, u64)>,
}

/// The counts an item holds under `prefix`, keyed by what follows it when that is `len` long;
/// zero and unreadable counts are left out.
fn counts(item: &Item, prefix: &str, len: usize) -> BTreeMap<String, u64> {
    item.iter()
        .filter_map(|(name, value)| {
            let key = name.strip_prefix(prefix)?;
            let count: i64 = value.as_n().ok()?.parse().ok()?;
            (key.len() == len && count > 0).then(|| (key.to_owned(), count as u64))
        })
        .collect()
}

/// The entry where `offset` falls in `counts` (in order), with how many come before it inside.
fn falls_in(counts: &BTreeMap<String, u64>, offset: u64) -> Option<(&String, u64)> {
    let mut before = 0u64;
    for (key, count) in counts {
        if before + count > offset {
            return Some((key, offset - before));
        }
        before += count;
    }
    None
}

impl DynamoStore {
    /// Reads where a page at `offset` of `brand_id`'s list `letter` begins: the root, then
    /// (unless the page is empty) the month item where the offset falls.
    pub(super) async fn show_page_start(
        &self,
        brand_id: &str,
        letter: char,
        offset: usize,
        limit: usize,
    ) -> StoreResult<PageStart> {
        let root = self
            .get(keys::show_counts_key(brand_id, letter))
            .await?
            .unwrap_or_default();
        // The month's read and the page's query wait for the request's admission; the root
        // went alongside it.
        admission::admitted().await;
        let legacy_hours = counts(&root, &letter.to_string(), 10);
        let mut months = counts(&root, "m", 6);
        for (hour, count) in &legacy_hours {
            *months.entry(hour[..6].to_owned()).or_default() += count;
        }
        let total = months.values().sum();
        let Some((month, skip_in_month)) = falls_in(&months, offset as u64).filter(|_| limit > 0)
        else {
            return Ok(PageStart { total, from: None });
        };
        let month_item = self
            .get(keys::show_month_counts_key(brand_id, letter, month))
            .await?
            .unwrap_or_default();
        let mut hours: BTreeMap<String, u64> = counts(&month_item, "h", 4)
            .into_iter()
            .map(|(day_hour, count)| (format!("{month}{day_hour}"), count))
            .collect();
        for (hour, count) in legacy_hours.range(format!("{month}0000")..format!("{month}9999")) {
            *hours.entry(hour.clone()).or_default() += count;
        }
        let (hour, skip) = falls_in(&hours, skip_in_month)
            .ok_or_else(|| corrupt("show counts: a month's hours add up to less than it"))?;
        let start = hour_start(hour).ok_or_else(|| corrupt("show counts hour"))?;
        Ok(PageStart {
            total,
            from: Some((start, skip)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::items::n;
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;
    use chrono::{Datelike, Timelike};

    #[test]
    fn hours_name_their_start() {
        let at = DateTime::parse_from_rfc3339("2026-12-01T17:42:10Z")
            .unwrap()
            .to_utc();
        let hour = hour_of(at);
        assert_eq!(hour, "2026120117");
        assert_eq!(hour_attribute(&hour), "h0117");
        assert_eq!(
            hour_start(&hour),
            Some(at.with_minute(0).unwrap().with_second(0).unwrap())
        );
        assert_eq!(hour_start("2026023117"), None);
        assert_eq!(at.year(), 2026);
    }

    #[test]
    fn moves_inside_a_month_leave_the_root_alone() {
        let deltas = BTreeMap::from([
            (('a', "2026120117".to_owned()), 1),
            (('a', "2026120118".to_owned()), -1),
            (('s', "2026120117".to_owned()), 0),
        ]);
        let writes = count_writes("t", "b", &deltas).unwrap();
        assert_eq!(writes.len(), 1, "the month item alone");
        let update = writes[0].update().unwrap();
        assert_eq!(update.key()["sk"].as_s().unwrap(), "MONTH#202612");
    }

    #[test]
    fn a_page_falls_in_order() {
        let counts = BTreeMap::from([("a".to_owned(), 2), ("b".to_owned(), 3)]);
        assert_eq!(falls_in(&counts, 0), Some((&"a".to_owned(), 0)));
        assert_eq!(falls_in(&counts, 2), Some((&"b".to_owned(), 0)));
        assert_eq!(falls_in(&counts, 4), Some((&"b".to_owned(), 2)));
        assert_eq!(falls_in(&counts, 5), None);
    }

    /// DynamoDB's size of an item of strings and numbers: names and strings by their bytes, a
    /// number by one byte per two significant digits plus one.
    fn item_size(item: &Item) -> usize {
        item.iter()
            .map(|(name, value)| {
                name.len()
                    + match value {
                        AttributeValue::S(text) => text.len(),
                        AttributeValue::N(number) => {
                            let digits = number.trim_start_matches('-').trim_matches('0');
                            digits.len().div_ceil(2) + 1
                        }
                        other => panic!("unexpected {other:?}"),
                    }
            })
            .sum()
    }

    /// Applies a transaction's `ADD`s the way DynamoDB does.
    fn apply(items: &mut BTreeMap<(String, String), Item>, writes: &[TransactWriteItem]) {
        for write in writes {
            let Some(update) = write.update() else {
                continue;
            };
            let key = update.key();
            let id = (
                key["pk"].as_s().unwrap().clone(),
                key["sk"].as_s().unwrap().clone(),
            );
            let item = items.entry(id).or_insert_with(|| key.clone());
            let names = update.expression_attribute_names().unwrap();
            let values = update.expression_attribute_values().unwrap();
            let adds = update.update_expression().strip_prefix("ADD ").unwrap();
            for add in adds.split(", ") {
                let (name, value) = add.split_once(' ').unwrap();
                let by: i64 = values[value].as_n().unwrap().parse().unwrap();
                let was: i64 = item
                    .get(&names[name])
                    .map_or(0, |had| had.as_n().unwrap().parse().unwrap());
                item.insert(names[name].clone(), n(was + by));
            }
        }
    }

    /// `years` of a show every hour, each created, moved by an hour and started, through the
    /// writes a show makes: the size in bytes of the largest root and month items after them.
    fn hourly_shows_for(years: i64) -> (usize, usize) {
        use super::super::show_items::{show_writes, unchanged};
        use hosting_domain::show::{Show, ShowStatus};
        let first = DateTime::parse_from_rfc3339("2026-01-01T00:30:00Z")
            .unwrap()
            .to_utc();
        let hours = years * 8766;
        let mut items = BTreeMap::new();
        for hour in 0..hours {
            let created = Show {
                id: uuid::Uuid::new_v4(),
                brand_id: "brand_with_history".into(),
                status: ShowStatus::Scheduled,
                starts_at: first + chrono::Duration::hours(hour),
                remind_minutes_before: None,
                stream: serde_json::Map::new(),
                stream_id: None,
                error: None,
                created_at: first,
                test: true,
                reminded: true,
                claim_until: None,
            };
            let moved = Show {
                starts_at: created.starts_at + chrono::Duration::hours(1),
                ..created.clone()
            };
            let started = Show {
                status: ShowStatus::Started,
                ..moved.clone()
            };
            for (before, after) in [
                (None, &created),
                (Some((&created, 1)), &moved),
                (Some((&moved, 2)), &started),
            ] {
                apply(
                    &mut items,
                    &show_writes("t", before, after, unchanged(1)).unwrap(),
                );
            }
        }
        // Items only gain attributes, so the largest now is the largest any write touched.
        let (mut largest_root, mut largest_month) = (0, 0);
        for ((_, sk), item) in &items {
            let size = item_size(item);
            if sk == "SHOWCOUNTS" {
                largest_root = largest_root.max(size);
            } else {
                largest_month = largest_month.max(size);
            }
        }
        let all_root = &items[&(
            "SHOWCOUNTS#brand_with_history#a".into(),
            "SHOWCOUNTS".into(),
        )];
        let total: i64 = all_root
            .iter()
            .filter(|(name, _)| name.starts_with('m'))
            .map(|(_, count)| count.as_n().unwrap().parse::<i64>().unwrap())
            .sum();
        assert_eq!(total, hours);
        (largest_root, largest_month)
    }

    /// Hourly shows fill every month item: a month's item is as large as it gets (at most 744
    /// hours), and the root holds one number per month. A year by default;
    /// `SHOW_HISTORY_YEARS=10` measures the ten years BENCHMARKS.md reports ("Scheduled shows").
    #[test]
    fn hourly_shows_for_years_keep_every_counts_item_small() {
        let years: i64 = std::env::var("SHOW_HISTORY_YEARS")
            .ok()
            .and_then(|years| years.parse().ok())
            .unwrap_or(1);
        let (root, month) = hourly_shows_for(years);
        println!("{years} years: largest root {root} bytes, largest month {month} bytes");
        assert!(root < 100 + 120 * years as usize, "{root}");
        assert!(month < 5_500, "{month}");
    }
}
