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
//!   `#t`, `#d`, `#f`, `#c`), sorted by `starts_at` then id, and each list's counts
//!   (`show_counts.rs`) count its shows per month and per hour of `starts_at`. A page reads
//!   the counts, finds the hour where its offset falls, and queries from that hour's start: it
//!   reads `limit` plus the shows it skips inside that one hour. Every write of a show moves
//!   its copies and counts in the same transaction.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::TransactWriteItem;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::DynamoStore;
use super::idempotency::binding_item;
use super::items::{ItemExt, event_item, s, stream_keys_of};
use super::keys::{self, sortable};
use super::requests::{backend, condition_failed_at, delete, put};
use super::show_items::*;
use super::streams::Creation;
use hosting_domain::destination::SealedStreamKeys;
use hosting_domain::ports::*;
use hosting_domain::show::{Show, ShowError, ShowStatus};
use hosting_domain::{EventType, Stream, StreamEvent};

/// Rounds of read-and-write a change of a `scheduled` show makes against concurrent writes
/// (its reminder, another change) before giving up.
const CHANGE_ATTEMPTS: u32 = 5;

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
            Err(err) => Err(backend(err)),
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
        keys: &SealedStreamKeys,
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
            Err(err) => Err(backend(err)),
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
        let page = self
            .show_page_start(brand_id, letter, offset, limit)
            .await?;
        let total = page.total;
        let Some((start, skip)) = page.from else {
            return Ok(ShowPage {
                shows: Vec::new(),
                total,
            });
        };
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
        keys: Option<&SealedStreamKeys>,
        script: Option<Option<&str>>,
    ) -> StoreResult<ShowChange> {
        for _ in 0..CHANGE_ATTEMPTS {
            let (before, rev) = match self.scheduled(&changed.brand_id, changed.id).await? {
                Ok(found) => found,
                Err(change) => return Ok(change),
            };
            let changed = &changed.over(&before);
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
}

#[async_trait]
impl ShowStartStore for DynamoStore {
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

    async fn show_inputs(&self, show_id: Uuid) -> StoreResult<(SealedStreamKeys, Option<String>)> {
        let items = self
            .batch_get(vec![
                keys::show_keys_key(show_id),
                keys::show_script_key(show_id),
            ])
            .await?;
        let mut inputs = (SealedStreamKeys::default(), None);
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
                due.push((show.next_moment().unwrap_or(now), show));
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
