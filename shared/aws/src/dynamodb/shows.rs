//! Scheduled shows on DynamoDB (docs/shows.md, "Storage").
//!
//! - The show item (`SHOW#<id>`, `SHOW`) holds the show as JSON (`body`), the attributes its
//!   conditions read (`status`, `claim_until`, `rev`, raised by every write) and, while
//!   something is due, its place in the due index (`SHOW#<shard>`, next moment): the
//!   reminder or the start while `scheduled`, the claim's end while `starting`.
//! - Its destinations' keys and its script are on items of their own under the same
//!   partition, erased in the write that starts, fails or cancels it.
//! - `GET /shows` pages by `starts_at` without reading what it skips: every show has a copy in
//!   its brand's list of all shows (`SHOWS#<brand>#a`) and in the list of its status (`#s`,
//!   `#t`, `#d`, `#f`, `#c`), sorted by `starts_at` then id, and the brand's counts item
//!   (`SHOWCOUNTS#<brand>`) counts each list's shows per hour of `starts_at`
//!   (`<letter><yyyymmddhh>`). A page reads the counts, finds the hour where its offset falls,
//!   and queries from that hour's start: it reads `limit` plus the shows it skips inside that
//!   one hour. Every write of a show moves its copies and counts in the same transaction.

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::idempotency::binding_item;
use super::items::{ItemExt, corrupt, event_item, n, s, stream_keys_item, stream_keys_of};
use super::keys::{self, key, sortable};
use super::requests::{
    TransactError, UpdateSpec, backend, condition_failed_at, delete, put, update,
};
use super::streams::Creation;
use super::{DynamoStore, Item};
use hosting_domain::destination::StreamKeys;
use hosting_domain::ports::*;
use hosting_domain::show::{Show, ShowError, ShowStatus};
use hosting_domain::{EventType, Stream, StreamEvent};
use hosting_support::admission;

/// Rounds of read-and-write a change of a `scheduled` show makes against concurrent writes
/// (its reminder, another change) before giving up.
const CHANGE_ATTEMPTS: u32 = 5;

/// The list a status's copy lives in.
fn status_letter(status: ShowStatus) -> char {
    match status {
        ShowStatus::Scheduled => 's',
        ShowStatus::Starting => 't',
        ShowStatus::Started => 'd',
        ShowStatus::Failed => 'f',
        ShowStatus::Cancelled => 'c',
    }
}

const ALL: char = 'a';

fn list_sk(show: &Show) -> String {
    keys::due_sk(show.starts_at, &show.id.to_string())
}

/// The counts attribute of `starts_at`'s hour in list `letter`.
fn hour_count(letter: char, starts_at: DateTime<Utc>) -> String {
    format!("{letter}{}", starts_at.format("%Y%m%d%H"))
}

/// The start of the hour a counts attribute names.
fn hour_start(hour: &str) -> Option<DateTime<Utc>> {
    let at = chrono::NaiveDateTime::parse_from_str(&format!("{hour}0000"), "%Y%m%d%H%M%S").ok()?;
    Some(at.and_utc())
}

/// When the show next needs the service: its reminder or start while `scheduled`, the end of
/// its claim while `starting`.
fn next_due(show: &Show) -> Option<DateTime<Utc>> {
    match show.status {
        ShowStatus::Scheduled => {
            let reminder = show
                .reminder_at()
                .filter(|at| !show.reminded && *at < show.starts_at);
            Some(reminder.unwrap_or(show.starts_at))
        }
        ShowStatus::Starting => show.claim_until,
        _ => None,
    }
}

fn body(show: &Show) -> StoreResult<String> {
    serde_json::to_string(show).map_err(|err| corrupt(format!("show: {err}")))
}

fn show_item(show: &Show, rev: u64) -> StoreResult<Item> {
    let mut item = keys::show_key(show.id);
    item.insert("id".into(), s(show.id.to_string()));
    item.insert("brand_id".into(), s(&show.brand_id));
    item.insert("status".into(), s(show.status.as_str()));
    item.insert("rev".into(), n(rev));
    item.insert("body".into(), s(body(show)?));
    if let Some(until) = show.claim_until {
        item.insert("claim_until".into(), s(sortable(until)));
    }
    if let Some(due) = next_due(show) {
        item.insert(keys::DUE_PK.into(), s(keys::show_due_pk(show.id)));
        item.insert(
            keys::DUE_SK.into(),
            s(keys::due_sk(due, &show.id.to_string())),
        );
    }
    Ok(item)
}

fn copy_item(show: &Show, letter: char) -> StoreResult<Item> {
    let mut item = key(keys::show_list_pk(&show.brand_id, letter), &list_sk(show));
    item.insert("body".into(), s(body(show)?));
    Ok(item)
}

fn show_of(item: &Item) -> StoreResult<Show> {
    serde_json::from_str(&item.string("body")?).map_err(|_| corrupt("show body"))
}

fn rev_of(item: &Item) -> u64 {
    item.opt_number("rev")
        .and_then(|rev| rev.try_into().ok())
        .unwrap_or(0)
}

/// An item under another key (the show's cold items reuse the stream's layouts).
fn rekeyed(mut item: Item, key: Item) -> Item {
    item.extend(key);
    item
}

fn keys_item(show_id: Uuid, stream_keys: &StreamKeys) -> Item {
    rekeyed(
        stream_keys_item(show_id, stream_keys),
        keys::show_keys_key(show_id),
    )
}

fn script_item(show_id: Uuid, script: &str) -> Item {
    let mut item = keys::show_script_key(show_id);
    item.insert("script".into(), s(script));
    item
}

/// The show item's write: a `Put` under `condition`.
fn put_show(
    table: &str,
    item: Item,
    condition: &str,
    values: Vec<(&str, AttributeValue)>,
) -> StoreResult<TransactWriteItem> {
    let mut builder = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression(condition);
    if condition.contains("#st") {
        builder = builder.expression_attribute_names("#st", "status");
    }
    for (name, value) in values {
        builder = builder.expression_attribute_values(name, value);
    }
    Ok(TransactWriteItem::builder()
        .put(builder.build().map_err(backend)?)
        .build())
}

/// The condition that the show item is still as read.
fn unchanged(rev: u64) -> (&'static str, Vec<(&'static str, AttributeValue)>) {
    ("rev = :rev", vec![(":rev", n(rev))])
}

/// Every write of a show going from `before` (`None`: new) to `after`: the show item under
/// `condition` (first, so a refusal is at index 0), its list copies moved, its counts moved.
fn show_writes(
    table: &str,
    before: Option<(&Show, u64)>,
    after: &Show,
    condition: (&str, Vec<(&str, AttributeValue)>),
) -> StoreResult<Vec<TransactWriteItem>> {
    let rev = before.map_or(1, |(_, rev)| rev + 1);
    let mut writes = vec![put_show(
        table,
        show_item(after, rev)?,
        condition.0,
        condition.1,
    )?];
    let mut deltas: BTreeMap<String, i64> = BTreeMap::new();
    for letter in [ALL, status_letter(after.status)] {
        writes.push(put(table, copy_item(after, letter)?, None)?);
        *deltas
            .entry(hour_count(letter, after.starts_at))
            .or_default() += 1;
    }
    if let Some((before, _)) = before {
        for letter in [ALL, status_letter(before.status)] {
            let moved = list_sk(before) != list_sk(after)
                || (letter != ALL && before.status != after.status);
            if moved {
                writes.push(delete(
                    table,
                    key(
                        keys::show_list_pk(&before.brand_id, letter),
                        &list_sk(before),
                    ),
                )?);
            }
            *deltas
                .entry(hour_count(letter, before.starts_at))
                .or_default() -= 1;
        }
    }
    deltas.retain(|_, delta| *delta != 0);
    if !deltas.is_empty() {
        let mut names = Vec::new();
        let mut values = Vec::new();
        let mut adds = Vec::new();
        for (i, (name, delta)) in deltas.into_iter().enumerate() {
            adds.push(format!("#c{i} :c{i}"));
            names.push((format!("#c{i}"), name));
            values.push((format!(":c{i}"), n(delta)));
        }
        let expression = format!("ADD {}", adds.join(", "));
        writes.push(update(
            table,
            UpdateSpec {
                key: keys::show_counts_key(&after.brand_id),
                expression: &expression,
                condition: None,
                names: names
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.clone()))
                    .collect(),
                values: values
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.clone()))
                    .collect(),
            },
        )?);
    }
    Ok(writes)
}

/// Per hour of `starts_at` that has any, how many shows list `letter` holds.
fn hour_counts(counts: &Item, letter: char) -> BTreeMap<String, u64> {
    counts
        .iter()
        .filter_map(|(name, value)| {
            let hour = name.strip_prefix(letter)?;
            let count: u64 = value.as_n().ok()?.parse().ok()?;
            (hour.len() == 10 && count > 0).then(|| (hour.to_owned(), count))
        })
        .collect()
}

fn transact_failed(err: TransactError) -> hosting_domain::error::StoreError {
    backend(err)
}

impl DynamoStore {
    async fn read_show(&self, show_id: Uuid) -> StoreResult<Option<(Show, u64)>> {
        let Some(item) = self.get(keys::show_key(show_id)).await? else {
            return Ok(None);
        };
        Ok(Some((show_of(&item)?, rev_of(&item))))
    }

    /// Writes `writes`: `Ok(false)` when the show item's condition (index 0) refused them.
    async fn write_show(&self, writes: Vec<TransactWriteItem>) -> StoreResult<bool> {
        match self.transact(writes).await {
            Ok(()) => Ok(true),
            Err(err) if condition_failed_at(&err, 0) => Ok(false),
            Err(err) => Err(transact_failed(err)),
        }
    }

    /// A `scheduled` show of the brand, with its revision, or what was found instead.
    async fn scheduled(
        &self,
        brand_id: &str,
        show_id: Uuid,
    ) -> StoreResult<Result<(Show, u64), ShowChange>> {
        Ok(match self.read_show(show_id).await? {
            Some((show, _)) if show.brand_id != brand_id => Err(ShowChange::Absent),
            None => Err(ShowChange::Absent),
            Some((show, _)) if show.status != ShowStatus::Scheduled => {
                Err(ShowChange::NotScheduled)
            }
            Some(found) => Ok(found),
        })
    }

    /// The show item as claimed by `show`'s starter, or `None` when the claim no longer holds.
    async fn still_claimed(&self, show: &Show) -> StoreResult<Option<(Show, u64)>> {
        Ok(self.read_show(show.id).await?.filter(|(stored, _)| {
            stored.status == ShowStatus::Starting && stored.claim_until == show.claim_until
        }))
    }
}

#[async_trait]
impl ShowStore for DynamoStore {
    async fn create_show(
        &self,
        show: &Show,
        keys: &StreamKeys,
        script: Option<&str>,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateShowOutcome> {
        let mut writes = show_writes(
            &self.table,
            None,
            show,
            ("attribute_not_exists(pk)", Vec::new()),
        )?;
        if !keys.is_empty() {
            writes.push(put(&self.table, keys_item(show.id, keys), None)?);
        }
        if let Some(script) = script {
            writes.push(put(&self.table, script_item(show.id, script), None)?);
        }
        let binding_at = writes.len();
        if let Some(binding) = binding {
            writes.push(binding_item(&self.table, binding, &show.public_id())?);
        }
        match self.transact(writes).await {
            Ok(()) => Ok(CreateShowOutcome::Created),
            Err(err) if binding.is_some() && condition_failed_at(&err, binding_at) => {
                Ok(CreateShowOutcome::KeyLost)
            }
            Err(err) => Err(transact_failed(err)),
        }
    }

    async fn get_show(&self, brand_id: &str, show_id: Uuid) -> StoreResult<Option<Show>> {
        Ok(self
            .read_show(show_id)
            .await?
            .map(|(show, _)| show)
            .filter(|show| show.brand_id == brand_id))
    }

    async fn list_shows(
        &self,
        brand_id: &str,
        status: Option<ShowStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<ShowPage> {
        let letter = status.map_or(ALL, status_letter);
        let counts = self
            .get(keys::show_counts_key(brand_id))
            .await?
            .unwrap_or_default();
        // The page's query waits for the request's admission; the counts went alongside it.
        admission::admitted().await;
        let hours = hour_counts(&counts, letter);
        let total: u64 = hours.values().sum();
        let mut before = 0u64;
        let mut from = None;
        for (hour, count) in &hours {
            if before + count > offset as u64 {
                from = Some((hour.clone(), offset as u64 - before));
                break;
            }
            before += count;
        }
        let Some((hour, skip)) = from.filter(|_| limit > 0) else {
            return Ok(ShowPage {
                shows: Vec::new(),
                total,
            });
        };
        let start = hour_start(&hour).ok_or_else(|| corrupt("show counts hour"))?;
        let items = self
            .query(
                None,
                "pk = :pk AND sk >= :from",
                vec![
                    (":pk", s(keys::show_list_pk(brand_id, letter))),
                    (":from", s(sortable(start))),
                ],
                true,
                Some(skip as usize + limit),
            )
            .await?;
        let shows = items
            .iter()
            .skip(skip as usize)
            .take(limit)
            .map(show_of)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(ShowPage { shows, total })
    }

    async fn update_scheduled_show(
        &self,
        changed: &Show,
        keys: Option<&StreamKeys>,
        script: Option<Option<&str>>,
    ) -> StoreResult<ShowChange> {
        for _ in 0..CHANGE_ATTEMPTS {
            let (before, rev) = match self.scheduled(&changed.brand_id, changed.id).await? {
                Ok(found) => found,
                Err(change) => return Ok(change),
            };
            let mut writes =
                show_writes(&self.table, Some((&before, rev)), changed, unchanged(rev))?;
            match keys {
                Some(keys) if keys.is_empty() => {
                    writes.push(delete(&self.table, keys::show_keys_key(changed.id))?)
                }
                Some(keys) => writes.push(put(&self.table, keys_item(changed.id, keys), None)?),
                None => {}
            }
            match script {
                Some(Some(script)) => {
                    writes.push(put(&self.table, script_item(changed.id, script), None)?)
                }
                Some(None) => writes.push(delete(&self.table, keys::show_script_key(changed.id))?),
                None => {}
            }
            if self.write_show(writes).await? {
                return Ok(ShowChange::Changed(Box::new(changed.clone())));
            }
        }
        Err(hosting_domain::error::StoreError::Backend(
            "the show changed under every attempt".into(),
        ))
    }

    async fn cancel_show(&self, brand_id: &str, show_id: Uuid) -> StoreResult<ShowChange> {
        for _ in 0..CHANGE_ATTEMPTS {
            let (before, rev) = match self.scheduled(brand_id, show_id).await? {
                Ok(found) => found,
                Err(change) => return Ok(change),
            };
            let cancelled = Show {
                status: ShowStatus::Cancelled,
                claim_until: None,
                ..before.clone()
            };
            let mut writes = show_writes(
                &self.table,
                Some((&before, rev)),
                &cancelled,
                unchanged(rev),
            )?;
            writes.push(delete(&self.table, keys::show_keys_key(show_id))?);
            writes.push(delete(&self.table, keys::show_script_key(show_id))?);
            if self.write_show(writes).await? {
                return Ok(ShowChange::Changed(Box::new(cancelled)));
            }
        }
        Err(hosting_domain::error::StoreError::Backend(
            "the show changed under every attempt".into(),
        ))
    }

    async fn claim_show(
        &self,
        brand_id: &str,
        show_id: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Show>> {
        let Some((before, rev)) = self
            .read_show(show_id)
            .await?
            .filter(|(show, _)| show.brand_id == brand_id && show.claimable(now))
        else {
            return Ok(None);
        };
        let claimed = Show {
            status: ShowStatus::Starting,
            claim_until: Some(until),
            ..before.clone()
        };
        // Racing starters read the same revision: one write applies, the others are refused.
        let writes = show_writes(&self.table, Some((&before, rev)), &claimed, unchanged(rev))?;
        Ok(self.write_show(writes).await?.then_some(claimed))
    }

    async fn show_inputs(&self, show_id: Uuid) -> StoreResult<(StreamKeys, Option<String>)> {
        let items = self
            .batch_get(vec![
                keys::show_keys_key(show_id),
                keys::show_script_key(show_id),
            ])
            .await?;
        let mut inputs = (StreamKeys::default(), None);
        for item in items {
            match item.opt_string("sk").as_deref() {
                Some("SCRIPT") => inputs.1 = item.opt_string("script"),
                _ => inputs.0 = stream_keys_of(&item),
            }
        }
        Ok(inputs)
    }

    async fn start_show_stream(
        &self,
        show: &Show,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
    ) -> StoreResult<ShowStart> {
        let Some((before, rev)) = self.still_claimed(show).await? else {
            return Ok(ShowStart::NotClaimed);
        };
        // The show records its stream in the stream's own transaction, conditioned on the
        // claim as read: a starter that lost its claim creates nothing.
        let table = self.table.clone();
        let record = move |stored: &Stream| -> StoreResult<Vec<TransactWriteItem>> {
            let recorded = Show {
                stream_id: Some(stored.id),
                ..before.clone()
            };
            let mut writes = show_writes(&table, Some((&before, rev)), &recorded, unchanged(rev))?;
            writes.push(delete(&table, keys::show_keys_key(before.id))?);
            writes.push(delete(&table, keys::show_script_key(before.id))?);
            Ok(writes)
        };
        Ok(
            match self
                .create_stream_with(stream, announce, max_active, &record)
                .await?
            {
                Creation::Created(stored) => ShowStart::Created(stored),
                Creation::ConcurrencyLimit => ShowStart::ConcurrencyLimit,
                Creation::Refused => ShowStart::NotClaimed,
            },
        )
    }

    async fn settle_show(
        &self,
        show: &Show,
        error: Option<&ShowError>,
        event: &StreamEvent,
    ) -> StoreResult<bool> {
        let Some((before, rev)) = self.still_claimed(show).await? else {
            return Ok(false);
        };
        let settled = Show {
            status: if error.is_some() {
                ShowStatus::Failed
            } else {
                ShowStatus::Started
            },
            error: error.cloned(),
            claim_until: None,
            ..before.clone()
        };
        let mut writes = show_writes(&self.table, Some((&before, rev)), &settled, unchanged(rev))?;
        writes.push(delete(&self.table, keys::show_keys_key(show.id))?);
        writes.push(delete(&self.table, keys::show_script_key(show.id))?);
        writes.push(put(&self.table, event_item(event), None)?);
        self.write_show(writes).await
    }

    async fn remind_show(&self, show: &Show, event: &StreamEvent) -> StoreResult<bool> {
        for _ in 0..CHANGE_ATTEMPTS {
            let Some((before, rev)) = self
                .read_show(show.id)
                .await?
                .filter(|(stored, _)| stored.status == ShowStatus::Scheduled && !stored.reminded)
            else {
                return Ok(false);
            };
            let reminded = Show {
                reminded: true,
                ..before.clone()
            };
            let mut writes =
                show_writes(&self.table, Some((&before, rev)), &reminded, unchanged(rev))?;
            writes.push(put(&self.table, event_item(event), None)?);
            if self.write_show(writes).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn due_shows(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Show>> {
        // The index lags the table: the service reads each show again before acting.
        let mut due: Vec<(DateTime<Utc>, Show)> = Vec::new();
        // Due at `now` counts (the index's bound is strict).
        let bound = now + chrono::TimeDelta::microseconds(1);
        for item in self.due_before(keys::show_due_pks(), bound, limit).await? {
            let show = show_of(&item)?;
            if !due.iter().any(|(_, seen)| seen.id == show.id) {
                due.push((next_due(&show).unwrap_or(now), show));
            }
        }
        due.sort_by_key(|(at, _)| *at);
        due.truncate(limit);
        Ok(due.into_iter().map(|(_, show)| show).collect())
    }

    async fn find_show(&self, show_id: Uuid) -> StoreResult<Option<Show>> {
        Ok(self.read_show(show_id).await?.map(|(show, _)| show))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Timelike;

    #[test]
    fn hours_name_their_start() {
        let at = DateTime::parse_from_rfc3339("2026-12-01T17:42:10Z")
            .unwrap()
            .to_utc();
        let name = hour_count('s', at);
        assert_eq!(name, "s2026120117");
        assert_eq!(
            hour_start(&name[1..]),
            Some(at.with_minute(0).unwrap().with_second(0).unwrap())
        );
    }
}
