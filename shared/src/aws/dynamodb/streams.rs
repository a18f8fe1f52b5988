//! Streams: creation with its slot and position, transitions, viewer counts, pages, windows
//! and the deadlines the sweep reads.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, TransactWriteItem};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::brand_index::Creation;
use super::idempotency::binding_item;
use super::items::{ItemExt, corrupt, event_item, n, position_item, s, stream_item};
use super::keys::{self, sortable};
use super::positions::{self, BrandIndex};
use super::requests::{
    UpdateSpec, backend, condition_failed, condition_failed_at, put, retrying, update,
};
use super::room_cleanups::cleanup_item;
use super::table::TTL_ATTRIBUTE;
use super::{DynamoStore, Item};
use crate::admission;
use crate::domain::event::EventType;
use crate::domain::stream::Transition;
use crate::domain::{RoomCleanup, Stream, StreamEvent, StreamStatus};
use crate::error::StoreError;
use crate::ports::{
    CreateStreamOutcome, IdempotencyBinding, Outcome, StoreResult, StreamPage, StreamStore,
};

/// Placing a new stream at the brand's next position, against concurrent starts.
const CREATE_ATTEMPTS: u32 = 12;
/// Days whose first position the streams since a time look up: a 30-day window and today.
const DAYS_PROBED: usize = 31;
/// How long provider event ids are remembered for deduplication.
const PROVIDER_EVENT_TTL: chrono::Duration = chrono::Duration::hours(24);

pub(super) fn room_item(room_name: &str, stream_id: Uuid) -> Item {
    let mut item = keys::room_key(room_name);
    item.insert("stream_id".into(), s(stream_id.to_string()));
    item
}

/// Records a provider event id, refused when it is there already.
fn dedupe_item(table: &str, event_id: &str, at: DateTime<Utc>) -> StoreResult<TransactWriteItem> {
    let mut item = keys::provider_event_key(event_id);
    item.insert(
        TTL_ATTRIBUTE.into(),
        n((at + PROVIDER_EVENT_TTL).timestamp()),
    );
    put(table, item, Some("attribute_not_exists(pk)"))
}

#[async_trait]
impl StreamStore for DynamoStore {
    async fn create_stream(
        &self,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateStreamOutcome> {
        // The position is the brand's current total, taken in a transaction conditional on
        // that total: a concurrent start of the brand makes it fail, and it is placed again
        // after the winner. At most `max_active` starts can win, so a burst settles quickly.
        for attempt in 0..CREATE_ATTEMPTS {
            if attempt > 0 {
                let jitter = rand::random_range(2..=10u64) * u64::from(attempt);
                tokio::time::sleep(std::time::Duration::from_millis(jitter)).await;
            }
            let index = BrandIndex::from_item(&self.brand_counters(&stream.brand_id).await?)?;
            if index.active.len() >= max_active as usize {
                return Ok(CreateStreamOutcome::ConcurrencyLimit);
            }
            let mut stored = stream.clone();
            if let Some(newest) = &index.newest {
                let (newest_at, newest_id) = newest
                    .split_once('#')
                    .and_then(|(at, id)| {
                        Some((DateTime::parse_from_rfc3339(at).ok()?, id.parse().ok()?))
                    })
                    .ok_or_else(|| corrupt("brand counters: newest"))?;
                stored.place_after(newest_at.to_utc(), newest_id);
            }
            let position = index.total;
            let total_condition = if position == 0 {
                "(attribute_not_exists(streams_total) OR streams_total = :total)"
            } else {
                "streams_total = :total"
            };
            let condition = format!(
                "{total_condition} AND (attribute_not_exists(active) OR active < :max_active)"
            );
            let mut items = vec![
                self.counters_update(
                    &stored,
                    position,
                    None,
                    Some(Creation {
                        condition: &condition,
                        total: position,
                        max_active,
                    }),
                )?,
                put(
                    &self.table,
                    stream_item(&stored, position),
                    Some("attribute_not_exists(pk)"),
                )?,
                put(&self.table, position_item(&stored, position), None)?,
                update(
                    &self.table,
                    UpdateSpec {
                        key: keys::day_key(&stored.brand_id, stored.created_at.date_naive()),
                        expression: "SET #first = if_not_exists(#first, :position)",
                        condition: None,
                        names: vec![("#first", "first".to_owned())],
                        values: vec![(":position", n(position))],
                    },
                )?,
            ];
            if let Some(room) = &stored.room_name {
                items.push(put(&self.table, room_item(room, stored.id), None)?);
            }
            if let Some(event_type) = announce {
                let event = StreamEvent::new(event_type, &stored, stored.created_at);
                items.push(put(&self.table, event_item(&event), None)?);
            }
            let binding_at = items.len();
            if let Some(binding) = binding {
                items.push(binding_item(&self.table, binding, &stored.id.to_string())?);
            }
            match self.transact(items).await {
                Ok(()) => {
                    self.remember_position(stored.id, position);
                    return Ok(CreateStreamOutcome::Created(Box::new(stored)));
                }
                Err(err) if binding.is_some() && condition_failed_at(&err, binding_at) => {
                    return Ok(CreateStreamOutcome::KeyLost);
                }
                // Another start took the position, or the last slot: read again and see.
                Err(err) if condition_failed_at(&err, 0) => continue,
                Err(err) => return Err(backend(err)),
            }
        }
        Err(StoreError::Backend(format!(
            "too many concurrent starts for brand {}",
            stream.brand_id
        )))
    }

    async fn get_stream(&self, stream_id: Uuid) -> StoreResult<Option<Stream>> {
        self.get(keys::stream_key(stream_id))
            .await?
            .as_ref()
            .map(|item| self.stream_from(item))
            .transpose()
    }

    async fn find_stream_by_room(&self, room_name: &str) -> StoreResult<Option<Stream>> {
        let Some(room) = self.get(keys::room_key(room_name)).await? else {
            return Ok(None);
        };
        let id =
            Uuid::parse_str(&room.string("stream_id")?).map_err(|_| corrupt("room stream id"))?;
        self.get_stream(id).await
    }

    async fn list_streams(
        &self,
        brand_id: &str,
        status: Option<StreamStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<StreamPage> {
        let index = BrandIndex::from_item(&self.brand_counters(brand_id).await?)?;
        // The page's reads wait for the request's admission; the counters went alongside it.
        admission::admitted().await;
        let (offset, limit) = (offset as u64, limit as u64);
        let positions = match status {
            None => index.page(offset, limit),
            Some(status) if status.is_active() => index.active_page(status, offset, limit),
            Some(status) => {
                let slices = index.slices(status, offset, limit);
                let sets = self
                    .error_sets(brand_id, &index, &index.error_sets_needed(&slices))
                    .await?;
                index.positions(status, &slices, &sets)
            }
        };
        Ok(StreamPage {
            streams: self.streams_at(brand_id, &positions).await?,
            total: index.total_of(status),
        })
    }

    async fn streams_created_since(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<Stream>> {
        let days: Vec<chrono::NaiveDate> =
            since.date_naive().iter_days().take(DAYS_PROBED).collect();
        let day_keys = days
            .iter()
            .map(|day| keys::day_key(brand_id, *day))
            .collect();
        let (counters, day_items) =
            tokio::join!(self.brand_counters(brand_id), self.batch_get(day_keys));
        let index = BrandIndex::from_item(&counters?)?;
        // The window's reads wait for the request's admission; the counters and the days
        // went alongside it.
        admission::admitted().await;
        if index
            .newest
            .as_ref()
            .is_none_or(|newest| *newest < sortable(since))
        {
            return Ok(Vec::new());
        }
        // Positions follow creation time, so the earliest day found holds the lowest one.
        let first = day_items?
            .iter()
            .filter_map(|item| item.opt_number("first"))
            .filter_map(|first| u64::try_from(first).ok())
            .min();
        let first = match first {
            Some(first) => first,
            // Nothing in the days probed, yet something newer: a search by position.
            None => self.first_position_since(brand_id, &index, since).await?,
        };
        let positions: Vec<u64> = (first..index.total).rev().collect();
        let mut streams = self.streams_at(brand_id, &positions).await?;
        streams.retain(|stream| stream.created_at >= since);
        Ok(streams)
    }

    async fn apply_transition(
        &self,
        current: &Stream,
        transition: Transition,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
        cleanup: Option<&RoomCleanup>,
    ) -> StoreResult<Outcome<(Stream, StreamEvent)>> {
        // No read: the update is conditional on the status the caller saw.
        let mut stream = current.clone();
        let from = stream.status;
        if !stream.apply(transition, at) {
            return Ok(Outcome::Stale);
        }
        // A position remembered from before a seeding renumbered the brand is refused by the
        // copy's condition; the second pass reads it afresh.
        for fresh in [false, true] {
            if fresh {
                self.forget_position(stream.id);
            }
            let position = self.position(stream.id).await?;
            let event = StreamEvent::new(transition.event_type(), &stream, at);

            // The record's changes, shared by the stream item and its position copy.
            let mut sets = vec!["#status = :to"];
            let mut values = vec![(":to", s(stream.status.as_str()))];
            if let Some(started) = stream
                .started_at
                .filter(|_| from == StreamStatus::Preparing && stream.status == StreamStatus::Live)
            {
                sets.push("started_at = :started_at");
                values.push((":started_at", s(sortable(started))));
            }
            if let Some(ended) = stream.ended_at.filter(|_| !stream.status.is_active()) {
                sets.push("ended_at = :ended_at");
                values.push((":ended_at", s(sortable(ended))));
            }
            // The deadline moves with the status; only the stream item is in the due index.
            let (stream_expression, copy_expression, mut stream_values) = match stream.deadline {
                Some(deadline) => {
                    sets.push("deadline = :deadline");
                    values.push((":deadline", s(sortable(deadline))));
                    let mut stream_values = values.clone();
                    stream_values.push((":due_pk", s(keys::deadline_pk(stream.id))));
                    stream_values
                        .push((":due_sk", s(keys::due_sk(deadline, &stream.id.to_string()))));
                    (
                        format!(
                            "SET {}, #due_pk = :due_pk, #due_sk = :due_sk",
                            sets.join(", ")
                        ),
                        format!("SET {}", sets.join(", ")),
                        stream_values,
                    )
                }
                None => (
                    format!("SET {} REMOVE deadline, #due_pk, #due_sk", sets.join(", ")),
                    format!("SET {} REMOVE deadline", sets.join(", ")),
                    values.clone(),
                ),
            };
            stream_values.push((":from", s(from.as_str())));
            let mut copy_values = values;
            copy_values.push((":id", s(stream.id.to_string())));
            let mut items = vec![
                update(
                    &self.table,
                    UpdateSpec {
                        key: keys::stream_key(stream.id),
                        expression: &stream_expression,
                        condition: Some("#status = :from"),
                        names: vec![
                            ("#status", "status".to_owned()),
                            ("#due_pk", keys::DUE_PK.to_owned()),
                            ("#due_sk", keys::DUE_SK.to_owned()),
                        ],
                        values: stream_values,
                    },
                )?,
                update(
                    &self.table,
                    UpdateSpec {
                        key: keys::position_key(&stream.brand_id, position),
                        expression: &copy_expression,
                        condition: Some("#id = :id"),
                        names: vec![("#status", "status".to_owned()), ("#id", "id".to_owned())],
                        values: copy_values,
                    },
                )?,
                self.counters_update(&stream, position, Some(from), None)?,
                put(&self.table, event_item(&event), None)?,
            ];
            if stream.status == StreamStatus::Error {
                items.push(update(
                    &self.table,
                    UpdateSpec {
                        key: keys::errors_key(&stream.brand_id, positions::block_of(position)),
                        expression: "ADD #positions :position",
                        condition: None,
                        names: vec![("#positions", "positions".to_owned())],
                        values: vec![(":position", AttributeValue::Ns(vec![position.to_string()]))],
                    },
                )?);
            }
            if let Some(cleanup) = cleanup {
                items.push(put(&self.table, cleanup_item(cleanup), None)?);
            }
            let dedupe_at = items.len();
            if let Some(event_id) = dedupe {
                items.push(dedupe_item(&self.table, event_id, at)?);
            }
            match self.transact(items).await {
                Ok(()) => return Ok(Outcome::Applied((stream, event))),
                Err(err) if dedupe.is_some() && condition_failed_at(&err, dedupe_at) => {
                    return Ok(Outcome::Duplicate);
                }
                Err(err) if condition_failed_at(&err, 0) => return Ok(Outcome::Stale),
                Err(err) if !fresh && condition_failed_at(&err, 1) => {}
                Err(err) => return Err(backend(err)),
            }
        }
        Err(corrupt("the stream's position copy holds another stream"))
    }

    async fn adjust_viewer_count(
        &self,
        stream: &Stream,
        delta: i64,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
    ) -> StoreResult<Outcome<Stream>> {
        let position = self.position(stream.id).await?;
        // Each update raises `viewer_version`, and the position copy takes a count only if it
        // is newer than the one it holds, so copies of racing joins settle on the latest.
        let condition = if delta < 0 {
            "#status = :live AND viewer_count >= :floor"
        } else {
            "#status = :live"
        };
        let mut values = vec![
            (":delta", n(delta)),
            (":one", n(1)),
            (":live", s(StreamStatus::Live.as_str())),
        ];
        if delta < 0 {
            values.push((":floor", n(-delta)));
        }
        let expression = "ADD viewer_count :delta, viewer_version :one";
        let updated = match dedupe {
            // With its dedupe record in one transaction, so the event counts once.
            Some(event_id) => {
                let items = vec![
                    update(
                        &self.table,
                        UpdateSpec {
                            key: keys::stream_key(stream.id),
                            expression,
                            condition: Some(condition),
                            names: vec![("#status", "status".to_owned())],
                            values,
                        },
                    )?,
                    dedupe_item(&self.table, event_id, at)?,
                ];
                match self.transact(items).await {
                    Ok(()) => {}
                    Err(err) if condition_failed_at(&err, 1) => return Ok(Outcome::Duplicate),
                    Err(err) if condition_failed_at(&err, 0) => return Ok(Outcome::Stale),
                    Err(err) => return Err(backend(err)),
                }
                self.get(keys::stream_key(stream.id))
                    .await?
                    .ok_or_else(|| corrupt("stream vanished"))?
            }
            None => {
                let result = retrying(|| {
                    let mut request = self
                        .client
                        .update_item()
                        .table_name(&self.table)
                        .set_key(Some(keys::stream_key(stream.id)))
                        .update_expression(expression)
                        .condition_expression(condition)
                        .expression_attribute_names("#status", "status")
                        .return_values(ReturnValue::AllNew);
                    for (name, value) in &values {
                        request = request.expression_attribute_values(*name, value.clone());
                    }
                    request.send()
                })
                .await;
                match result {
                    Ok(out) => out.attributes.unwrap_or_default(),
                    Err(err) if condition_failed(&err) => return Ok(Outcome::Stale),
                    Err(err) => return Err(backend(err)),
                }
            }
        };
        let version = updated.number("viewer_version")?;
        let count = updated.number("viewer_count")?;
        let copied = retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::position_key(&stream.brand_id, position)))
                .update_expression("SET viewer_count = :count, viewer_version = :version")
                // The copy must hold this stream (a remembered position can be stale).
                .condition_expression(
                    "#id = :id AND \
                     (attribute_not_exists(viewer_version) OR viewer_version < :version)",
                )
                .expression_attribute_names("#id", "id")
                .expression_attribute_values(":id", s(stream.id.to_string()))
                .expression_attribute_values(":count", n(count))
                .expression_attribute_values(":version", n(version))
                .send()
        })
        .await;
        match copied {
            Ok(_) => {}
            // Refused: a later count is already there.
            Err(err) if condition_failed(&err) => {}
            Err(err) => return Err(backend(err)),
        }
        Stream::try_from(&updated).map(Outcome::Applied)
    }

    async fn overdue_streams(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Stream>> {
        // The index lags the table: each entry is confirmed by a consistent read.
        let mut ids = Vec::new();
        for item in self.due_before(keys::deadline_pks(), now, limit).await? {
            ids.push(keys::stream_key(
                Uuid::parse_str(&item.string("id")?).map_err(|_| corrupt("stream id"))?,
            ));
        }
        let mut overdue: Vec<Stream> = self
            .batch_get(ids)
            .await?
            .iter()
            .map(|item| self.stream_from(item))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|stream| stream.status.is_active() && stream.deadline.is_some_and(|d| d < now))
            .collect();
        overdue.sort_by_key(|stream| stream.deadline);
        overdue.truncate(limit);
        Ok(overdue)
    }

    async fn due_room_cleanups(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<RoomCleanup>> {
        self.read_due_room_cleanups(now, limit).await
    }

    async fn put_room_cleanup(&self, cleanup: &RoomCleanup) -> StoreResult<()> {
        self.write_room_cleanup(cleanup).await
    }

    async fn settle_room_cleanup(
        &self,
        read: &RoomCleanup,
        next: Option<&RoomCleanup>,
    ) -> StoreResult<()> {
        self.settle_cleanup(read, next).await
    }
}
