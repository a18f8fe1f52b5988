//! Streams: their lifecycle, pages, analytics windows and viewer counts.

use crate::analytics::minute_of;
use crate::store::EmbeddedStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use hosting_domain::analytics::{
    AnalyticsStream, Figures, MAX_LISTED_STREAMS, Window, next_whole_minute,
};
use hosting_domain::destination::SealedStreamKeys;
use hosting_domain::ports::*;
use hosting_domain::room_cleanup::RoomCleanup;
use hosting_domain::stream::Transition;
use hosting_domain::{EventType, Stream, StreamEvent, StreamStatus};
use hosting_support::admission;
use uuid::Uuid;

#[async_trait]
impl StreamStore for EmbeddedStore {
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
        let events = StreamEvent::of_creation(announce, &stored);
        if !events.is_empty() {
            for event in events {
                state.emit(event);
            }
            self.outbox_ready.notify_one();
        }
        stored.stream_keys = Default::default();
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
        let before = stream.clone();
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
        match cleanup {
            Some(cleanup) => state.put_room_cleanup(&cleanup.of_stored(&stream)),
            // No room, so no egress to stop first: the keys go with the transition.
            None if !stream.status.is_active() => {
                state.stream_keys.remove(&stream.id);
            }
            None => {}
        }
        let events = StreamEvent::of_change(Some(transition.event_type()), &before, &stream, at);
        let event = events[0].clone();
        for event in events {
            state.emit(event);
        }
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
        self.update_stream_destinations(current, updated, at, dedupe, &[], None)
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
        stored.host_check_at = updated.host_check_at;
        stored.host_lost_at = updated.host_lost_at;
        stored.reconnect_until = updated.reconnect_until;
        stored.destinations = updated.destinations.clone();
        stored.egress = updated.egress.clone();
        stored.revision = updated.revision;
        let stored = stored.clone();
        state.reindex_due(stored.id, old_due, stored.next_due());
        if let Some((destination_id, key)) = added_key {
            state
                .stream_keys
                .entry(stored.id)
                .or_default()
                .0
                .push((destination_id.to_owned(), key.clone()));
        }
        if !events.is_empty() {
            for event in events {
                state.emit(event.clone());
            }
            self.outbox_ready.notify_one();
        }
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
        // The floor at zero taken at once: every read of the count follows the change
        // (docs/lifecycle.md, "Viewer counts").
        stream.viewer_count = match change {
            ViewerChange::By(delta) => stream.viewer_count.saturating_add_signed(delta),
            ViewerChange::To(count) | ViewerChange::Reported(count) => count,
        };
        Ok(Outcome::Applied(()))
    }
}

#[async_trait]
impl StreamKeyStore for EmbeddedStore {
    async fn stream_keys(&self, stream_id: Uuid) -> StoreResult<SealedStreamKeys> {
        Ok(self
            .read()?
            .stream_keys
            .get(&stream_id)
            .cloned()
            .unwrap_or_default())
    }

    async fn erase_stream_keys(&self, stream_id: Uuid) -> StoreResult<()> {
        self.lock()?.stream_keys.remove(&stream_id);
        Ok(())
    }
}

#[async_trait]
impl StreamListStore for EmbeddedStore {
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
}
