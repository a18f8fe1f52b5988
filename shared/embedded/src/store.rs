use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use chrono::{DateTime, Duration, Utc};
use hosting_domain::destination::SealedStreamKeys;
use tokio::sync::Notify;
use uuid::Uuid;

use super::analytics::{Aggregates, minute_of};
use super::idempotency::KeyEntry;
use super::ordered::Ordered;
use super::outbox::OutboxEntry;
use hosting_domain::analytics::Figures;
use hosting_domain::idempotency::RETENTION;
use hosting_domain::ports::*;
use hosting_domain::room_cleanup::RoomCleanup;
use hosting_domain::{ApiKey, Brand, Creator, Stream, StreamEvent, StreamStatus, Webhook};

/// The store's maps. Hashed with foldhash rather than SipHash: every request looks up a few
/// (its brand's indexes, its rate-limit count), and their keys are the product's own ids.
/// A parked delivery and the end of the claim on it, if any.
pub(super) type ParkedEntry = (hosting_domain::ports::Delivery, Option<DateTime<Utc>>);

pub(super) type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A brand's shows in `GET /shows` order, per filter (`None`: all).
pub(super) type ShowOrder =
    Map<(String, Option<hosting_domain::show::ShowStatus>), BTreeSet<(DateTime<Utc>, Uuid)>>;

/// A brand's id as the key of a map every request looks up: held inline up to 24 bytes, so
/// comparing it with the id looked up reads the map's entry and not a second allocation as
/// well (over many brands, each one more cache miss: BENCHMARKS.md, "Throughput").
pub(super) type BrandKey = compact_str::CompactString;

/// How long provider event ids are remembered for deduplication.
const PROVIDER_EVENT_TTL: Duration = Duration::hours(24);

#[derive(Default)]
pub(super) struct State {
    pub(super) brands: Map<String, Brand>,
    /// Streams in `preparing` or `live`, per brand: the concurrency slots in use.
    pub(super) active: Map<String, u32>,
    pub(super) keys: Map<String, ApiKey>,
    pub(super) creators: Map<String, Creator>,
    pub(super) streams: Map<Uuid, Stream>,
    /// Each brand's indexes of its streams, found with one lookup of the brand's id.
    pub(super) brand_streams: Map<BrandKey, BrandStreams>,
    pub(super) streams_by_room: Map<String, Uuid>,
    /// Active streams by deadline, as the DynamoDB store's deadline index holds them.
    pub(super) deadlines: BTreeSet<(DateTime<Utc>, Uuid)>,
    /// Pending room cleanups by stream, and by when they are due.
    pub(super) room_cleanups: Map<Uuid, RoomCleanup>,
    pub(super) room_cleanups_due: BTreeSet<(DateTime<Utc>, Uuid)>,
    /// Streams' scripts, apart from the streams.
    pub(super) scripts: Map<Uuid, String>,
    /// Streams' destination keys, apart from the streams, until erased.
    pub(super) stream_keys: Map<Uuid, SealedStreamKeys>,
    pub(super) webhooks: Map<Uuid, Webhook>,
    /// Each webhook's delivery log.
    pub(super) delivery_logs: Map<Uuid, super::delivery_log::DeliveryLogState>,
    /// Delivery slots held, by (brand, slot): (holder, held until).
    pub(super) delivery_slots: Map<(String, u32), (String, DateTime<Utc>)>,
    /// Parked deliveries, by (brand, key in park order).
    pub(super) parked: BTreeMap<(String, String), ParkedEntry>,
    /// Each brand's parked-delivery wake-up.
    pub(super) parked_wakes: Map<String, DateTime<Utc>>,
    /// Events not yet relayed (and those set aside), by id.
    pub(super) outbox: BTreeMap<String, OutboxEntry>,
    /// Every event ever emitted, for tests and the local server's log.
    pub(super) emitted: Vec<StreamEvent>,
    pub(super) provider_events: Map<String, DateTime<Utc>>,
    pub(super) idempotency: Map<String, KeyEntry>,
    /// Keys the service keeps for itself, by name.
    pub(super) service_keys: Map<String, Vec<u8>>,
    /// Scheduled shows by id, and their destinations' keys and scripts apart from them.
    pub(super) shows: Map<Uuid, hosting_domain::show::Show>,
    pub(super) show_inputs: Map<Uuid, (SealedStreamKeys, Option<String>)>,
    /// Each show's due moments (its start, its reminder), as the DynamoDB store's due index
    /// holds them.
    pub(super) shows_due: BTreeSet<(DateTime<Utc>, Uuid)>,
    /// Each brand's shows by `starts_at` then id, all of them (`None`) and per status, so a
    /// page walks its own list instead of sorting the brand's shows.
    pub(super) show_order: ShowOrder,
    /// Each stream's clips, and the work they are owed by when it is due (the DynamoDB
    /// store's due index).
    pub(super) clips: Map<Uuid, Vec<hosting_domain::clip::Clip>>,
    pub(super) clips_due: BTreeSet<(DateTime<Utc>, Uuid, String)>,
}

/// One brand's indexes of its streams, held together: a page or an analytics window looks
/// the brand up once and finds them side by side in memory, not in a structure per index
/// spread over every brand's (BENCHMARKS.md, "What one request costs").
#[derive(Default)]
pub(super) struct BrandStreams {
    /// In creation order: what the DynamoDB store's positions give.
    pub(super) all: Ordered,
    /// Per status (at [`status_slot`]), in creation order.
    pub(super) by_status: [Ordered; StreamStatus::ALL.len()],
    /// Analytics aggregates per minute of creation: every stream's creation figures, and the
    /// final figures of those that finished (see [`StreamStore::analytics_window`]).
    pub(super) aggregates: Aggregates,
}

/// Where a status's index sits in [`BrandStreams::by_status`].
pub(super) fn status_slot(status: StreamStatus) -> usize {
    status as usize
}

impl BrandStreams {
    pub(super) fn of_status(&self, status: StreamStatus) -> &Ordered {
        &self.by_status[status_slot(status)]
    }

    pub(super) fn of_status_mut(&mut self, status: StreamStatus) -> &mut Ordered {
        &mut self.by_status[status_slot(status)]
    }
}

impl State {
    /// Stores a new stream and indexes it; its script apart, as on DynamoDB: the stored
    /// stream never carries it.
    pub(super) fn keep_stream(&mut self, stream: &Stream) {
        let mut kept = stream.clone();
        if let Some(script) = kept.script.take() {
            self.scripts.insert(kept.id, script);
        }
        let keys = std::mem::take(&mut kept.stream_keys);
        if !keys.is_empty() {
            self.stream_keys.insert(kept.id, keys);
        }
        self.index_stream(&kept);
        self.streams.insert(kept.id, kept);
    }

    /// The indexes of `brand_id`'s streams, created if it has none yet.
    pub(super) fn brand_streams_mut(&mut self, brand_id: &str) -> &mut BrandStreams {
        // Looked up first: the id is copied only for a brand's first stream.
        if !self.brand_streams.contains_key(brand_id) {
            self.brand_streams
                .insert(BrandKey::new(brand_id), BrandStreams::default());
        }
        self.brand_streams
            .get_mut(brand_id)
            .expect("inserted above")
    }

    /// Adds `figures` (or takes them out) to the minute of `stream`'s creation.
    pub(super) fn aggregate(&mut self, stream: &Stream, figures: &Figures, add: bool) {
        self.brand_streams_mut(&stream.brand_id).aggregates.add(
            minute_of(stream.created_at),
            figures,
            add,
        );
    }

    /// What a stream as stored adds to the aggregates: its creation figures, and its final
    /// figures once it finished.
    pub(super) fn stored_figures(stream: &Stream) -> Figures {
        if stream.status.is_active() {
            Figures::created(stream)
        } else {
            Figures::of(stream)
        }
    }

    pub(super) fn index_stream(&mut self, stream: &Stream) {
        let key = (stream.created_at, stream.id);
        let brand = self.brand_streams_mut(&stream.brand_id);
        brand.aggregates.add(
            minute_of(stream.created_at),
            &Self::stored_figures(stream),
            true,
        );
        brand.all.insert(key);
        brand.of_status_mut(stream.status).insert(key);
        if let Some(room) = &stream.room_name {
            self.streams_by_room.insert(room.clone(), stream.id);
        }
        if let Some(due) = stream.next_due() {
            self.deadlines.insert((due, stream.id));
        }
    }

    pub(super) fn unindex_stream(&mut self, stream: &Stream) {
        let key = (stream.created_at, stream.id);
        if let Some(brand) = self.brand_streams.get_mut(stream.brand_id.as_str()) {
            brand.aggregates.add(
                minute_of(stream.created_at),
                &Self::stored_figures(stream),
                false,
            );
            brand.all.remove(&key);
            brand.of_status_mut(stream.status).remove(&key);
        }
        if let Some(room) = &stream.room_name {
            self.streams_by_room.remove(room);
        }
        if let Some(due) = stream.next_due() {
            self.deadlines.remove(&(due, stream.id));
        }
        if stream.status.is_active() {
            self.release_slot(&stream.brand_id);
        }
    }

    /// Moves a stream between the per-status indexes.
    pub(super) fn reindex_status(&mut self, stream: &Stream, from: StreamStatus) {
        let key = (stream.created_at, stream.id);
        let brand = self.brand_streams_mut(&stream.brand_id);
        brand.of_status_mut(from).remove(&key);
        brand.of_status_mut(stream.status).insert(key);
    }

    /// Moves a stream in the due index from `old` to `new` ([`Stream::next_due`]).
    pub(super) fn reindex_due(
        &mut self,
        id: Uuid,
        old: Option<DateTime<Utc>>,
        new: Option<DateTime<Utc>>,
    ) {
        if let Some(due) = old {
            self.deadlines.remove(&(due, id));
        }
        if let Some(due) = new {
            self.deadlines.insert((due, id));
        }
    }

    pub(super) fn release_slot(&mut self, brand_id: &str) {
        if let Some(count) = self.active.get_mut(brand_id) {
            *count = count.saturating_sub(1);
        }
    }

    pub(super) fn emit(&mut self, event: StreamEvent) {
        self.emitted.push(event.clone());
        self.outbox.insert(
            event.id.clone(),
            OutboxEntry {
                due: event.created_at,
                event,
                claim: None,
                attempts: 0,
                set_aside: None,
            },
        );
    }

    /// Whether `binding` still holds its key (nothing bound to it yet).
    pub(super) fn holds(&self, binding: Option<&IdempotencyBinding>) -> bool {
        binding.is_none_or(|binding| {
            self.idempotency
                .get(&binding.key_id)
                .is_some_and(|entry| entry.token == binding.token && entry.resource_id.is_none())
        })
    }

    /// Binds `binding`'s key to `resource_id` (see [`State::holds`]).
    pub(super) fn bind(&mut self, binding: Option<&IdempotencyBinding>, resource_id: String) {
        let Some(binding) = binding else {
            return;
        };
        if let Some(entry) = self.idempotency.get_mut(&binding.key_id) {
            entry.resource_id = Some(resource_id);
            entry.answer = binding.answer.clone();
            entry.expires_at = binding.at + RETENTION;
        }
    }

    /// Makes `cleanup` its stream's pending room cleanup.
    pub(super) fn put_room_cleanup(&mut self, cleanup: &RoomCleanup) {
        self.remove_room_cleanup(cleanup.stream_id);
        self.room_cleanups_due
            .insert((cleanup.due_at, cleanup.stream_id));
        self.room_cleanups
            .insert(cleanup.stream_id, cleanup.clone());
    }

    pub(super) fn remove_room_cleanup(&mut self, stream_id: Uuid) {
        if let Some(old) = self.room_cleanups.remove(&stream_id) {
            self.room_cleanups_due.remove(&(old.due_at, stream_id));
        }
    }

    /// Records a provider event id as seen at `at`; `false` when it was seen already.
    pub(super) fn first_sighting(&mut self, event_id: Option<&str>, at: DateTime<Utc>) -> bool {
        let Some(event_id) = event_id else {
            return true;
        };
        self.provider_events
            .retain(|_, seen| *seen + PROVIDER_EVENT_TTL > at);
        if self.provider_events.contains_key(event_id) {
            return false;
        }
        self.provider_events.insert(event_id.to_owned(), at);
        true
    }
}

/// One brand's counts per rate-limit window: (window start, count). Its current window, and
/// the previous one for a request that read the clock just before the minute turned, are held
/// inline in the map's entry.
pub(super) type BrandWindows = smallvec::SmallVec<[(DateTime<Utc>, u64); 2]>;

/// Requests counted per brand and rate-limit window.
#[derive(Default)]
pub(super) struct RateWindows {
    pub(super) counts: Map<BrandKey, BrandWindows>,
    pub(super) pruned_at: DateTime<Utc>,
}

/// The embedded store: every port on state held in this process.
///
/// Reads share the state's lock and writes hold it alone, so concurrent reads never wait on
/// each other. The rate-limit counts, which every request writes, have a lock of their own:
/// counting a read does not hold up the reads of other requests (BENCHMARKS.md, "Throughput").
#[derive(Clone, Default)]
pub struct EmbeddedStore {
    state: Arc<RwLock<State>>,
    rate_windows: Arc<Mutex<RateWindows>>,
    pub(super) outbox_ready: Arc<Notify>,
    fail: Arc<std::sync::atomic::AtomicBool>,
    requests: Arc<std::sync::atomic::AtomicU64>,
}

impl EmbeddedStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one store request, and refuses it while the store is set to fail.
    pub(super) fn admit(&self) -> StoreResult<()> {
        self.requests
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(hosting_domain::error::StoreError::Backend(
                "the embedded store is set to fail".into(),
            ));
        }
        Ok(())
    }

    /// The state, for a request that changes it.
    pub(super) fn lock(&self) -> StoreResult<RwLockWriteGuard<'_, State>> {
        self.admit()?;
        Ok(self.write_state())
    }

    /// The state, for a request that only reads it.
    pub(super) fn read(&self) -> StoreResult<RwLockReadGuard<'_, State>> {
        self.admit()?;
        Ok(self.read_state())
    }

    /// The rate-limit counts, for one count.
    pub(super) fn lock_rate_windows(&self) -> StoreResult<MutexGuard<'_, RateWindows>> {
        self.admit()?;
        Ok(self
            .rate_windows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    pub(super) fn read_state(&self) -> RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn write_state(&self) -> RwLockWriteGuard<'_, State> {
        self.state
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Store requests made so far: each call of a port method is one (tests of the work a
    /// request does).
    pub fn requests(&self) -> u64 {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Makes every later call fail, as a backend outage would (tests of `db_error`).
    pub fn set_failing(&self, failing: bool) {
        self.fail
            .store(failing, std::sync::atomic::Ordering::SeqCst);
    }

    /// Notified whenever an event lands in the outbox.
    pub fn outbox_ready(&self) -> Arc<Notify> {
        self.outbox_ready.clone()
    }

    /// Every event emitted so far, oldest first.
    pub fn emitted_events(&self) -> Vec<StreamEvent> {
        self.read_state().emitted.clone()
    }

    /// Active slots in use for `brand_id`.
    pub fn active_streams(&self, brand_id: &str) -> u32 {
        self.read_state().active.get(brand_id).copied().unwrap_or(0)
    }
}
