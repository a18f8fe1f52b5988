//! Streams: creation with its slot and position, viewer counts, pages, windows and the
//! deadlines the sweep reads. Status and host changes are in `transitions.rs`.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::TransactWriteItem;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::brand_index::Creation as SlotTaking;
use super::idempotency::binding_item;
use super::items::{
    ItemExt, corrupt, event_item, n, position_item, s, script_item, stream_item, stream_keys_item,
    stream_keys_of,
};
use super::keys::{self};
use super::positions::BrandIndex;
use super::requests::{backend, condition_failed_at, condition_failed_from, put};
use super::table::TTL_ATTRIBUTE;
use super::{DynamoStore, Item};
use hosting_domain::analytics::{Figures, Window};
use hosting_domain::destination::SealedStreamKeys;
use hosting_domain::error::StoreError;
use hosting_domain::event::EventType;
use hosting_domain::ports::{
    CreateStreamOutcome, IdempotencyBinding, Outcome, StoreResult, StreamKeyStore, StreamListStore,
    StreamPage, StreamStore, ViewerChange,
};
use hosting_domain::stream::Transition;
use hosting_domain::{RoomCleanup, Stream, StreamEvent, StreamStatus};
use hosting_support::admission;

/// Placing a new stream at the brand's next position, against concurrent starts.
const CREATE_ATTEMPTS: u32 = 12;
/// How long provider event ids are remembered for deduplication.
const PROVIDER_EVENT_TTL: chrono::Duration = chrono::Duration::hours(24);

pub(super) fn room_item(room_name: &str, stream_id: Uuid) -> Item {
    let mut item = keys::room_key(room_name);
    item.insert("stream_id".into(), s(stream_id.to_string()));
    item
}

/// Records a provider event id, refused when it is there already.
pub(super) fn dedupe_item(
    table: &str,
    event_id: &str,
    at: DateTime<Utc>,
) -> StoreResult<TransactWriteItem> {
    let mut item = keys::provider_event_key(event_id);
    item.insert(
        TTL_ATTRIBUTE.into(),
        n((at + PROVIDER_EVENT_TTL).timestamp()),
    );
    put(table, item, Some("attribute_not_exists(pk)"))
}

/// What creating a stream with extra writes found.
pub(super) enum Creation {
    Created(Box<Stream>),
    /// The brand had every active slot taken: nothing was written.
    ConcurrencyLimit,
    /// A condition of the extra writes refused the transaction: nothing was written.
    Refused,
}

/// The extra writes of a creation's transaction, given the stream as it is stored.
pub(super) type ExtraWrites<'a> =
    dyn Fn(&Stream) -> StoreResult<Vec<TransactWriteItem>> + Send + Sync + 'a;

impl DynamoStore {
    /// Creates `stream` with its slot and position, and `extra`'s writes in the same
    /// transaction (an idempotency binding, a show's start).
    pub(super) async fn create_stream_with(
        &self,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
        extra: &ExtraWrites<'_>,
    ) -> StoreResult<Creation> {
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
                return Ok(Creation::ConcurrencyLimit);
            }
            // The counters went alongside the request's count; the transaction waits for it.
            admission::admitted().await;
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
                    Some(SlotTaking {
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
            ];
            items.extend(self.aggregate_updates(&stored, &Figures::created(&stored))?);
            if let Some(script) = &stored.script {
                items.push(put(&self.table, script_item(stored.id, script), None)?);
            }
            if !stored.stream_keys.is_empty() {
                items.push(put(
                    &self.table,
                    stream_keys_item(stored.id, &stored.stream_keys),
                    None,
                )?);
            }
            if let Some(room) = &stored.room_name {
                items.push(put(&self.table, room_item(room, stored.id), None)?);
            }
            for event in StreamEvent::of_creation(announce, &stored) {
                items.push(put(&self.table, event_item(&event), None)?);
            }
            let extra_at = items.len();
            items.extend(extra(&stored)?);
            match self.transact(items).await {
                Ok(()) => {
                    self.remember_position(stored.id, position);
                    stored.stream_keys = Default::default();
                    return Ok(Creation::Created(Box::new(stored)));
                }
                Err(err) if condition_failed_from(&err, extra_at) => {
                    return Ok(Creation::Refused);
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
        let bind = |stored: &Stream| -> StoreResult<Vec<TransactWriteItem>> {
            binding
                .map(|binding| binding_item(&self.table, binding, &stored.id.to_string()))
                .into_iter()
                .collect()
        };
        Ok(
            match self
                .create_stream_with(stream, announce, max_active, &bind)
                .await?
            {
                Creation::Created(stored) => CreateStreamOutcome::Created(stored),
                Creation::ConcurrencyLimit => CreateStreamOutcome::ConcurrencyLimit,
                Creation::Refused => CreateStreamOutcome::KeyLost,
            },
        )
    }

    async fn get_stream(&self, stream_id: Uuid) -> StoreResult<Option<Stream>> {
        self.stream_with_viewers(stream_id).await
    }

    async fn stream_script(&self, stream_id: Uuid) -> StoreResult<Option<String>> {
        Ok(self
            .get(keys::script_key(stream_id))
            .await?
            .and_then(|item| item.opt_string("script")))
    }

    async fn find_stream_by_room(&self, room_name: &str) -> StoreResult<Option<Stream>> {
        self.stream_by_room(room_name, true).await
    }

    async fn find_stream_by_room_uncounted(&self, room_name: &str) -> StoreResult<Option<Stream>> {
        self.stream_by_room(room_name, false).await
    }

    async fn apply_transition(
        &self,
        current: &Stream,
        transition: Transition,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
        cleanup: Option<&RoomCleanup>,
    ) -> StoreResult<Outcome<(Stream, StreamEvent)>> {
        self.transition(current, transition, at, dedupe, cleanup)
            .await
    }

    async fn update_stream_host(
        &self,
        current: &Stream,
        updated: &Stream,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
    ) -> StoreResult<Outcome<Stream>> {
        self.host_change(current, updated, at, dedupe, &[], None)
            .await
    }

    async fn update_stream_destinations(
        &self,
        current: &Stream,
        updated: &Stream,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
        events: &[StreamEvent],
        added_key: Option<(&str, &hosting_domain::sealed::StoredSecret)>,
    ) -> StoreResult<Outcome<Stream>> {
        self.host_change(current, updated, at, dedupe, events, added_key)
            .await
    }

    async fn adjust_viewer_count(
        &self,
        stream: &Stream,
        change: ViewerChange,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
    ) -> StoreResult<Outcome<()>> {
        match change {
            ViewerChange::By(delta) => self.add_viewers(stream, delta, at, dedupe).await,
            ViewerChange::To(count) => self.set_viewers(stream, count, at).await,
            ViewerChange::Reported(count) => self.report_viewers(stream, count, at).await,
        }
    }
}

#[async_trait]
impl StreamKeyStore for DynamoStore {
    async fn stream_keys(&self, stream_id: Uuid) -> StoreResult<SealedStreamKeys> {
        Ok(self
            .get(keys::stream_keys_key(stream_id))
            .await?
            .map(|item| stream_keys_of(&item))
            .unwrap_or_default())
    }

    async fn erase_stream_keys(&self, stream_id: Uuid) -> StoreResult<()> {
        self.delete_item(keys::stream_keys_key(stream_id)).await
    }
}

#[async_trait]
impl StreamListStore for DynamoStore {
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
        // Live ones (at most the plan's concurrent streams) count their viewers as of now:
        // their shards are read alongside the page, by the ids the counters keep.
        let live = index.live_ids_among(&positions);
        let (streams, sums) = tokio::join!(
            self.streams_at(brand_id, &positions),
            self.shard_sums(&live)
        );
        let mut streams = streams?;
        self.with_live_viewers(streams.iter_mut(), &sums?).await?;
        Ok(StreamPage {
            streams,
            total: index.total_of(status),
        })
    }

    async fn analytics_window(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Window> {
        self.read_analytics_window(brand_id, since, now).await
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
            .filter(|stream| stream.next_due().is_some_and(|due| due < now))
            .collect();
        overdue.sort_by_key(|stream| stream.next_due());
        overdue.truncate(limit);
        Ok(overdue)
    }
}

impl DynamoStore {
    /// The stream of a room, with its live count when `counted`.
    async fn stream_by_room(&self, room_name: &str, counted: bool) -> StoreResult<Option<Stream>> {
        let read = |id| async move {
            if counted {
                self.stream_with_viewers(id).await
            } else {
                self.stream_uncounted(id).await
            }
        };
        // A room the API named carries its stream's id: one read, not two, per LiveKit event
        // (a busy show sends many). Any other name (seeded history) goes through its room item.
        if let Some(id) = room_name
            .strip_prefix("stream-")
            .and_then(|id| Uuid::try_parse(id).ok())
            && let Some(stream) = read(id).await?
            && stream.room_name.as_deref() == Some(room_name)
        {
            return Ok(Some(stream));
        }
        let Some(room) = self.get(keys::room_key(room_name)).await? else {
            return Ok(None);
        };
        let id =
            Uuid::parse_str(&room.string("stream_id")?).map_err(|_| corrupt("room stream id"))?;
        read(id).await
    }
}
