//! Scheduled shows in the embedded store (docs/shows.md), with the same atomicity as the
//! DynamoDB store's.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::store::{EmbeddedStore, State};
use hosting_domain::destination::SealedStreamKeys;
use hosting_domain::ports::*;
use hosting_domain::show::{Show, ShowError, ShowStatus};
use hosting_domain::{EventType, Stream, StreamEvent};
use hosting_support::admission;

impl State {
    /// Keeps `show`, moving its place in the due moments (its next one, as the DynamoDB
    /// store's due index holds it) and in its brand's lists.
    fn keep_show(&mut self, show: &Show) {
        if let Some(before) = self.shows.get(&show.id) {
            if let Some(at) = before.next_moment() {
                self.shows_due.remove(&(at, before.id));
            }
            let place = (before.starts_at, before.id);
            for filter in [None, Some(before.status)] {
                if let Some(order) = self.show_order.get_mut(&(before.brand_id.clone(), filter)) {
                    order.remove(&place);
                }
            }
        }
        for filter in [None, Some(show.status)] {
            self.show_order
                .entry((show.brand_id.clone(), filter))
                .or_default()
                .insert((show.starts_at, show.id));
        }
        if let Some(at) = show.next_moment() {
            self.shows_due.insert((at, show.id));
        }
        self.shows.insert(show.id, show.clone());
    }

    fn scheduled_show(&mut self, brand_id: &str, show_id: Uuid) -> Result<Show, ShowChange> {
        match self.shows.get(&show_id).filter(|s| s.brand_id == brand_id) {
            None => Err(ShowChange::Absent),
            Some(show) if show.status != ShowStatus::Scheduled => Err(ShowChange::NotScheduled),
            Some(show) => Ok(show.clone()),
        }
    }

    /// Whether `show` is still claimed as it was read.
    fn still_claimed(&self, show: &Show) -> bool {
        self.shows.get(&show.id).is_some_and(|stored| {
            stored.status == ShowStatus::Starting && stored.claim_until == show.claim_until
        })
    }
}

#[async_trait]
impl ShowStore for EmbeddedStore {
    async fn create_show(
        &self,
        show: &Show,
        keys: &SealedStreamKeys,
        script: Option<&str>,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateShowOutcome> {
        let mut state = self.lock()?;
        if !state.holds(binding) {
            return Ok(CreateShowOutcome::KeyLost);
        }
        state.keep_show(show);
        state
            .show_inputs
            .insert(show.id, (keys.clone(), script.map(str::to_owned)));
        state.bind(binding, show.public_id());
        Ok(CreateShowOutcome::Created)
    }

    async fn get_show(&self, brand_id: &str, show_id: Uuid) -> StoreResult<Option<Show>> {
        Ok(self
            .read()?
            .shows
            .get(&show_id)
            .filter(|s| s.brand_id == brand_id)
            .cloned())
    }

    async fn list_shows(
        &self,
        brand_id: &str,
        status: Option<ShowStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<ShowPage> {
        admission::admitted().await;
        let state = self.read()?;
        let Some(order) = state.show_order.get(&(brand_id.to_owned(), status)) else {
            return Ok(ShowPage {
                shows: Vec::new(),
                total: 0,
            });
        };
        Ok(ShowPage {
            total: order.len() as u64,
            shows: order
                .iter()
                .skip(offset)
                .take(limit)
                .filter_map(|(_, id)| state.shows.get(id).cloned())
                .collect(),
        })
    }

    async fn update_scheduled_show(
        &self,
        changed: &Show,
        keys: Option<&SealedStreamKeys>,
        script: Option<Option<&str>>,
    ) -> StoreResult<ShowChange> {
        let mut state = self.lock()?;
        let changed = &match state.scheduled_show(&changed.brand_id, changed.id) {
            Ok(stored) => changed.over(&stored),
            Err(change) => return Ok(change),
        };
        state.keep_show(changed);
        let inputs = state.show_inputs.entry(changed.id).or_default();
        if let Some(keys) = keys {
            inputs.0 = keys.clone();
        }
        if let Some(script) = script {
            inputs.1 = script.map(str::to_owned);
        }
        Ok(ShowChange::Changed(Box::new(changed.clone())))
    }

    async fn cancel_show(&self, brand_id: &str, show_id: Uuid) -> StoreResult<ShowChange> {
        let mut state = self.lock()?;
        let mut show = match state.scheduled_show(brand_id, show_id) {
            Ok(show) => show,
            Err(change) => return Ok(change),
        };
        show.status = ShowStatus::Cancelled;
        state.keep_show(&show);
        state.show_inputs.remove(&show_id);
        Ok(ShowChange::Changed(Box::new(show)))
    }
}

#[async_trait]
impl ShowStartStore for EmbeddedStore {
    async fn claim_show(
        &self,
        brand_id: &str,
        show_id: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Show>> {
        let mut state = self.lock()?;
        let Some(mut show) = state
            .shows
            .get(&show_id)
            .filter(|s| s.brand_id == brand_id && s.claimable(now))
            .cloned()
        else {
            return Ok(None);
        };
        show.status = ShowStatus::Starting;
        show.claim_until = Some(until);
        state.keep_show(&show);
        Ok(Some(show))
    }

    async fn show_inputs(&self, show_id: Uuid) -> StoreResult<(SealedStreamKeys, Option<String>)> {
        Ok(self
            .read()?
            .show_inputs
            .get(&show_id)
            .cloned()
            .unwrap_or_default())
    }

    async fn start_show_stream(
        &self,
        show: &Show,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
    ) -> StoreResult<ShowStart> {
        let mut state = self.lock()?;
        if !state.still_claimed(show) {
            return Ok(ShowStart::NotClaimed);
        }
        let active = state.active.entry(stream.brand_id.clone()).or_insert(0);
        if *active >= max_active {
            return Ok(ShowStart::ConcurrencyLimit);
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
        for event in StreamEvent::of_creation(announce, &stored) {
            state.emit(event);
        }
        self.outbox_ready.notify_one();
        let mut recorded = show.clone();
        recorded.stream_id = Some(stored.id);
        state.keep_show(&recorded);
        state.show_inputs.remove(&show.id);
        stored.stream_keys = Default::default();
        Ok(ShowStart::Created(Box::new(stored)))
    }

    async fn settle_show(
        &self,
        show: &Show,
        error: Option<&ShowError>,
        event: &StreamEvent,
    ) -> StoreResult<bool> {
        let mut state = self.lock()?;
        if !state.still_claimed(show) {
            return Ok(false);
        }
        let Some(mut settled) = state.shows.get(&show.id).cloned() else {
            return Ok(false);
        };
        settled.status = if error.is_some() {
            ShowStatus::Failed
        } else {
            ShowStatus::Started
        };
        settled.error = error.cloned();
        settled.claim_until = None;
        state.keep_show(&settled);
        state.show_inputs.remove(&show.id);
        state.emit(event.clone());
        self.outbox_ready.notify_one();
        Ok(true)
    }

    async fn remind_show(&self, show: &Show, event: &StreamEvent) -> StoreResult<bool> {
        let mut state = self.lock()?;
        let Some(mut stored) = state
            .shows
            .get(&show.id)
            .filter(|s| s.status == ShowStatus::Scheduled && !s.reminded)
            .cloned()
        else {
            return Ok(false);
        };
        stored.reminded = true;
        state.keep_show(&stored);
        state.emit(event.clone());
        self.outbox_ready.notify_one();
        Ok(true)
    }

    async fn due_shows(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Show>> {
        let state = self.read()?;
        let mut due: Vec<Show> = Vec::new();
        for (_, id) in state.shows_due.iter().take_while(|(at, _)| *at <= now) {
            if due.len() >= limit {
                break;
            }
            if let Some(show) = state.shows.get(id)
                && !due.iter().any(|seen| seen.id == *id)
            {
                due.push(show.clone());
            }
        }
        Ok(due)
    }

    async fn find_show(&self, show_id: Uuid) -> StoreResult<Option<Show>> {
        Ok(self.read()?.shows.get(&show_id).cloned())
    }
}
