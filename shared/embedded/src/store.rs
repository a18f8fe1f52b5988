use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use tokio::sync::Notify;
use uuid::Uuid;

use super::analytics::{Aggregates, minute_of};
use super::idempotency::KeyEntry;
use super::ordered::Ordered;
use super::outbox::OutboxEntry;
use hosting_domain::admission;
use hosting_domain::domain::analytics::{
    AnalyticsStream, Figures, MAX_LISTED_STREAMS, Window, next_whole_minute,
};
use hosting_domain::domain::idempotency::RETENTION;
use hosting_domain::domain::room_cleanup::RoomCleanup;
use hosting_domain::domain::stream::Transition;
use hosting_domain::domain::{
    ApiKey, Brand, Creator, EventType, Stream, StreamEvent, StreamStatus, Webhook,
};
use hosting_domain::ports::*;

/// The store's maps. Hashed with foldhash rather than SipHash: every request looks up a few
/// (its brand's indexes, its rate-limit count), and their keys are the product's own ids.
pub(super) type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

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
    brand_streams: Map<BrandKey, BrandStreams>,
    streams_by_room: Map<String, Uuid>,
    /// Active streams by deadline, as the DynamoDB store's deadline index holds them.
    deadlines: BTreeSet<(DateTime<Utc>, Uuid)>,
    /// Pending room cleanups by stream, and by when they are due.
    room_cleanups: Map<Uuid, RoomCleanup>,
    room_cleanups_due: BTreeSet<(DateTime<Utc>, Uuid)>,
    /// Streams' scripts, apart from the streams.
    scripts: Map<Uuid, String>,
    pub(super) webhooks: Map<Uuid, Webhook>,
    /// Each webhook's delivery log.
    pub(super) delivery_logs: Map<Uuid, super::webhooks::DeliveryLogState>,
    /// Delivery slots held, by (brand, slot): (holder, held until).
    pub(super) delivery_slots: Map<(String, u32), (String, DateTime<Utc>)>,
    /// Events not yet relayed (and those set aside), by id.
    pub(super) outbox: BTreeMap<String, OutboxEntry>,
    /// Every event ever emitted, for tests and the local server's log.
    emitted: Vec<StreamEvent>,
    provider_events: Map<String, DateTime<Utc>>,
    pub(super) idempotency: Map<String, KeyEntry>,
}

/// One brand's indexes of its streams, held together: a page or an analytics window looks
/// the brand up once and finds them side by side in memory, not in a structure per index
/// spread over every brand's (BENCHMARKS.md, "What one request costs").
#[derive(Default)]
struct BrandStreams {
    /// In creation order: what the DynamoDB store's positions give.
    all: Ordered,
    /// Per status (at [`status_slot`]), in creation order.
    by_status: [Ordered; StreamStatus::ALL.len()],
    /// Analytics aggregates per minute of creation: every stream's creation figures, and the
    /// final figures of those that finished (see [`StreamStore::analytics_window`]).
    aggregates: Aggregates,
}

/// Where a status's index sits in [`BrandStreams::by_status`].
fn status_slot(status: StreamStatus) -> usize {
    status as usize
}

impl BrandStreams {
    fn of_status(&self, status: StreamStatus) -> &Ordered {
        &self.by_status[status_slot(status)]
    }

    fn of_status_mut(&mut self, status: StreamStatus) -> &mut Ordered {
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
        self.index_stream(&kept);
        self.streams.insert(kept.id, kept);
    }

    /// The indexes of `brand_id`'s streams, created if it has none yet.
    fn brand_streams_mut(&mut self, brand_id: &str) -> &mut BrandStreams {
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
    fn aggregate(&mut self, stream: &Stream, figures: &Figures, add: bool) {
        self.brand_streams_mut(&stream.brand_id).aggregates.add(
            minute_of(stream.created_at),
            figures,
            add,
        );
    }

    /// What a stream as stored adds to the aggregates: its creation figures, and its final
    /// figures once it finished.
    fn stored_figures(stream: &Stream) -> Figures {
        if stream.status.is_active() {
            Figures::created(stream)
        } else {
            Figures::of(stream)
        }
    }

    fn index_stream(&mut self, stream: &Stream) {
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
    fn reindex_status(&mut self, stream: &Stream, from: StreamStatus) {
        let key = (stream.created_at, stream.id);
        let brand = self.brand_streams_mut(&stream.brand_id);
        brand.of_status_mut(from).remove(&key);
        brand.of_status_mut(stream.status).insert(key);
    }

    /// Moves a stream in the due index from `old` to `new` ([`Stream::next_due`]).
    fn reindex_due(&mut self, id: Uuid, old: Option<DateTime<Utc>>, new: Option<DateTime<Utc>>) {
        if let Some(due) = old {
            self.deadlines.remove(&(due, id));
        }
        if let Some(due) = new {
            self.deadlines.insert((due, id));
        }
    }

    fn release_slot(&mut self, brand_id: &str) {
        if let Some(count) = self.active.get_mut(brand_id) {
            *count = count.saturating_sub(1);
        }
    }

    fn emit(&mut self, event: StreamEvent) {
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
    fn put_room_cleanup(&mut self, cleanup: &RoomCleanup) {
        self.remove_room_cleanup(cleanup.stream_id);
        self.room_cleanups_due
            .insert((cleanup.due_at, cleanup.stream_id));
        self.room_cleanups
            .insert(cleanup.stream_id, cleanup.clone());
    }

    fn remove_room_cleanup(&mut self, stream_id: Uuid) {
        if let Some(old) = self.room_cleanups.remove(&stream_id) {
            self.room_cleanups_due.remove(&(old.due_at, stream_id));
        }
    }

    /// Records a provider event id as seen at `at`; `false` when it was seen already.
    fn first_sighting(&mut self, event_id: Option<&str>, at: DateTime<Utc>) -> bool {
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

/// The in-memory store.
///
/// Reads share the state's lock and writes hold it alone, so concurrent reads never wait on
/// each other. The rate-limit counts, which every request writes, have a lock of their own:
/// counting a read does not hold up the reads of other requests (BENCHMARKS.md, "Throughput").
#[derive(Clone, Default)]
pub struct MemoryStore {
    state: Arc<RwLock<State>>,
    rate_windows: Arc<Mutex<RateWindows>>,
    pub(super) outbox_ready: Arc<Notify>,
    fail: Arc<std::sync::atomic::AtomicBool>,
    requests: Arc<std::sync::atomic::AtomicU64>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one store request, and refuses it while the store is set to fail.
    fn admit(&self) -> StoreResult<()> {
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

    fn read_state(&self) -> RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write_state(&self) -> RwLockWriteGuard<'_, State> {
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

#[async_trait]
impl StreamStore for MemoryStore {
    async fn create_stream(
        &self,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateStreamOutcome> {
        admission::admitted().await;
        let mut state = self.lock()?;
        if !state.holds(binding) {
            return Ok(CreateStreamOutcome::KeyLost);
        }
        let active = state.active.entry(stream.brand_id.clone()).or_insert(0);
        if *active >= max_active {
            return Ok(CreateStreamOutcome::ConcurrencyLimit);
        }
        *active += 1;
        let mut stored = stream.clone();
        if let Some((newest_at, newest_id)) = state
            .brand_streams
            .get(stream.brand_id.as_str())
            .and_then(|brand| brand.all.last())
        {
            stored.place_after(newest_at, newest_id);
        }
        state.keep_stream(&stored);
        state.bind(binding, stored.id.to_string());
        if let Some(event_type) = announce {
            state.emit(StreamEvent::new(event_type, &stored, stored.created_at));
            self.outbox_ready.notify_one();
        }
        Ok(CreateStreamOutcome::Created(Box::new(stored)))
    }

    async fn get_stream(&self, stream_id: Uuid) -> StoreResult<Option<Stream>> {
        Ok(self.read()?.streams.get(&stream_id).cloned())
    }

    async fn stream_script(&self, stream_id: Uuid) -> StoreResult<Option<String>> {
        Ok(self.read()?.scripts.get(&stream_id).cloned())
    }

    async fn find_stream_by_room(&self, room_name: &str) -> StoreResult<Option<Stream>> {
        let state = self.read()?;
        Ok(state
            .streams_by_room
            .get(room_name)
            .and_then(|id| state.streams.get(id))
            .cloned())
    }

    async fn list_streams(
        &self,
        brand_id: &str,
        status: Option<StreamStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<StreamPage> {
        admission::admitted().await;
        let state = self.read()?;
        let Some(brand) = state.brand_streams.get(brand_id) else {
            return Ok(StreamPage {
                streams: Vec::new(),
                total: 0,
            });
        };
        let ordered = match status {
            None => &brand.all,
            Some(status) => brand.of_status(status),
        };
        Ok(StreamPage {
            streams: ordered
                .newest(offset, limit)
                .map(|id| state.streams[id].clone())
                .collect(),
            total: ordered.len() as u64,
        })
    }

    async fn analytics_window(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
        _now: DateTime<Utc>,
    ) -> StoreResult<Window> {
        admission::admitted().await;
        let state = self.read()?;
        let whole = next_whole_minute(since);
        let mut window = Window::default();
        let count = |window: &mut Window, stream: &Stream, figures: Figures| {
            window.figures.add(&figures);
            if stream.status == StreamStatus::Live {
                window.live_now += 1;
            }
        };
        let Some(brand) = state.brand_streams.get(brand_id) else {
            return Ok(window);
        };
        // Whole minutes from the aggregates: every stream's creation, finished streams' final
        // figures.
        window.figures = brand.aggregates.since(minute_of(whole));
        // The partial minute, one by one.
        for id in brand.all.between(since, whole) {
            let stream = &state.streams[id];
            count(&mut window, stream, Figures::of(stream));
        }
        window.streams = brand
            .all
            .since(since)
            .take(MAX_LISTED_STREAMS)
            .map(|id| AnalyticsStream::of(&state.streams[id]))
            .collect();
        // Active streams of the whole minutes: their viewers and time as they are now.
        for status in [StreamStatus::Preparing, StreamStatus::Live] {
            for id in brand.of_status(status).since(whole) {
                let stream = &state.streams[id];
                count(&mut window, stream, Figures::finished(stream));
            }
        }
        Ok(window)
    }

    async fn apply_transition(
        &self,
        current: &Stream,
        transition: Transition,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
        cleanup: Option<&RoomCleanup>,
    ) -> StoreResult<Outcome<(Stream, StreamEvent)>> {
        let mut state = self.lock()?;
        // The stored stream decides, as DynamoDB's condition on its status does.
        let Some(mut stream) = state.streams.get(&current.id).cloned() else {
            return Ok(Outcome::Stale);
        };
        let (from, old_due) = (stream.status, stream.next_due());
        if !stream.apply(transition, at) {
            return Ok(Outcome::Stale);
        }
        if !state.first_sighting(dedupe, at) {
            return Ok(Outcome::Duplicate);
        }
        state.streams.insert(stream.id, stream.clone());
        state.reindex_status(&stream, from);
        state.reindex_due(stream.id, old_due, stream.next_due());
        if !stream.status.is_active() {
            state.release_slot(&stream.brand_id);
            state.aggregate(&stream, &Figures::finished(&stream), true);
        }
        if let Some(cleanup) = cleanup {
            state.put_room_cleanup(cleanup);
        }
        let event = StreamEvent::new(transition.event_type(), &stream, at);
        state.emit(event.clone());
        self.outbox_ready.notify_one();
        Ok(Outcome::Applied((stream, event)))
    }

    async fn update_stream_host(
        &self,
        current: &Stream,
        updated: &Stream,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
    ) -> StoreResult<Outcome<Stream>> {
        let mut state = self.lock()?;
        let Some(stored) = state.streams.get(&current.id) else {
            return Ok(Outcome::Stale);
        };
        if (stored.status, stored.revision) != (current.status, current.revision) {
            return Ok(Outcome::Stale);
        }
        let old_due = stored.next_due();
        if !state.first_sighting(dedupe, at) {
            return Ok(Outcome::Duplicate);
        }
        // Only what a host change changes; the viewer count may have moved meanwhile.
        let Some(stored) = state.streams.get_mut(&current.id) else {
            return Ok(Outcome::Stale);
        };
        stored.agents = updated.agents.clone();
        stored.dispatches = updated.dispatches;
        stored.next_dispatch_at = updated.next_dispatch_at;
        stored.host_lost_at = updated.host_lost_at;
        stored.reconnect_until = updated.reconnect_until;
        stored.revision = updated.revision;
        let stored = stored.clone();
        state.reindex_due(stored.id, old_due, stored.next_due());
        Ok(Outcome::Applied(stored))
    }

    async fn adjust_viewer_count(
        &self,
        stream: &Stream,
        change: ViewerChange,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
    ) -> StoreResult<Outcome<()>> {
        let mut state = self.lock()?;
        if state
            .streams
            .get(&stream.id)
            .is_none_or(|s| s.status != StreamStatus::Live)
        {
            return Ok(Outcome::Stale);
        }
        if !state.first_sighting(dedupe, at) {
            return Ok(Outcome::Duplicate);
        }
        let Some(stream) = state.streams.get_mut(&stream.id) else {
            return Ok(Outcome::Stale);
        };
        stream.viewer_count = match change {
            ViewerChange::By(delta) => stream.viewer_count.saturating_add_signed(delta),
            ViewerChange::To(count) => count,
        };
        Ok(Outcome::Applied(()))
    }

    async fn overdue_streams(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Stream>> {
        let state = self.read()?;
        Ok(state
            .deadlines
            .iter()
            .take_while(|(deadline, _)| *deadline < now)
            .take(limit)
            .filter_map(|(_, id)| state.streams.get(id).cloned())
            .collect())
    }

    async fn due_room_cleanups(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<RoomCleanup>> {
        let state = self.read()?;
        Ok(state
            .room_cleanups_due
            .iter()
            .take_while(|(due_at, _)| *due_at < now)
            .take(limit)
            .filter_map(|(_, id)| state.room_cleanups.get(id).cloned())
            .collect())
    }

    async fn put_room_cleanup(&self, cleanup: &RoomCleanup) -> StoreResult<()> {
        self.lock()?.put_room_cleanup(cleanup);
        Ok(())
    }

    async fn settle_room_cleanup(
        &self,
        read: &RoomCleanup,
        next: Option<&RoomCleanup>,
    ) -> StoreResult<()> {
        let mut state = self.lock()?;
        // As DynamoDB's condition: only the record as it was read is settled.
        if state.room_cleanups.get(&read.stream_id) != Some(read) {
            return Ok(());
        }
        match next {
            Some(next) => state.put_room_cleanup(next),
            None => state.remove_room_cleanup(read.stream_id),
        }
        Ok(())
    }
}
