//! Each webhook's delivery log: attempts, the events as delivered, and failed deliveries.

//! Webhooks and their delivery logs in the embedded store.

use async_trait::async_trait;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::store::EmbeddedStore;
use hosting_domain::delivery_log::{
    self, AttemptFilter, AttemptStatus, DeliveredEvent, DeliveryAttempt,
};
use hosting_domain::ports::{DeliveryLogStore, StoreResult};
use hosting_support::admission;

/// One webhook's delivery log, indexed as the DynamoDB store keys it: attempts by position,
/// and the positions of each status and of each event, so a page reads about its own length.
#[derive(Default)]
pub(crate) struct DeliveryLogState {
    attempts: BTreeMap<String, DeliveryAttempt>,
    succeeded: BTreeSet<String>,
    failed_attempts: BTreeSet<String>,
    by_event: HashMap<String, BTreeSet<String>>,
    /// Each event delivered, with its latest attempt's time.
    events: HashMap<String, (DeliveredEvent, DateTime<Utc>)>,
    /// Deliveries that ended failed, by their event's creation.
    failed: BTreeMap<(DateTime<Utc>, String), DeliveredEvent>,
}

/// The positions before `after`, or all.
fn before(after: Option<&str>) -> (Bound<&str>, Bound<&str>) {
    (
        Bound::Unbounded,
        after.map_or(Bound::Unbounded, Bound::Excluded),
    )
}

impl DeliveryLogState {
    fn record(&mut self, attempt: &DeliveryAttempt, event: &DeliveredEvent) {
        let position = attempt.position();
        if attempt.succeeded {
            self.succeeded.insert(position.clone());
        } else {
            self.failed_attempts.insert(position.clone());
        }
        self.by_event
            .entry(attempt.event_id.clone())
            .or_default()
            .insert(position.clone());
        self.attempts.insert(position, attempt.clone());
        self.events.insert(
            attempt.event_id.clone(),
            (event.clone(), attempt.attempted_at),
        );
        if attempt.ended_failed() {
            self.failed.insert(
                (event.event_created_at, event.event_id.clone()),
                event.clone(),
            );
        }
    }

    /// Drops what DynamoDB's TTL would have removed by now.
    fn prune(&mut self, horizon: DateTime<Utc>) {
        while let Some(entry) = self.attempts.first_entry() {
            if entry.get().attempted_at >= horizon {
                break;
            }
            let (position, attempt) = entry.remove_entry();
            self.succeeded.remove(&position);
            self.failed_attempts.remove(&position);
            if let Some(positions) = self.by_event.get_mut(&attempt.event_id) {
                positions.remove(&position);
                if positions.is_empty() {
                    self.by_event.remove(&attempt.event_id);
                    self.events.remove(&attempt.event_id);
                }
            }
        }
        while let Some(entry) = self.failed.first_entry() {
            if entry.key().0 >= horizon {
                break;
            }
            entry.remove();
        }
    }

    fn page(
        &self,
        filter: &AttemptFilter,
        after: Option<&str>,
        limit: usize,
        keep: impl Fn(&DeliveryAttempt) -> bool,
    ) -> Vec<DeliveryAttempt> {
        let empty = BTreeSet::new();
        let positions = match (&filter.event_id, filter.status) {
            (Some(event_id), _) => self.by_event.get(event_id).unwrap_or(&empty),
            (None, Some(AttemptStatus::Succeeded)) => &self.succeeded,
            (None, Some(AttemptStatus::Failed)) => &self.failed_attempts,
            (None, None) => {
                return self
                    .attempts
                    .range::<str, _>(before(after))
                    .rev()
                    .map(|(_, a)| a)
                    .take_while(|a| keep(a))
                    .take(limit)
                    .cloned()
                    .collect();
            }
        };
        positions
            .range::<str, _>(before(after))
            .rev()
            .filter_map(|position| self.attempts.get(position))
            .take_while(|a| keep(a))
            .filter(|a| a.matches(filter))
            .take(limit)
            .cloned()
            .collect()
    }
}

#[async_trait]
impl DeliveryLogStore for EmbeddedStore {
    async fn record_attempt(
        &self,
        attempt: &DeliveryAttempt,
        event: &DeliveredEvent,
    ) -> StoreResult<()> {
        let mut state = self.lock()?;
        let log = state.delivery_logs.entry(attempt.webhook_id).or_default();
        log.prune(attempt.attempted_at - delivery_log::RETENTION);
        log.record(attempt, event);
        Ok(())
    }

    async fn delivery_attempts(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        filter: &AttemptFilter,
        since: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<DeliveryAttempt>> {
        admission::admitted().await;
        let state = self.read()?;
        let Some(log) = state.delivery_logs.get(&webhook_id) else {
            return Ok(Vec::new());
        };
        Ok(log.page(filter, after, limit, |a| {
            a.brand_id == brand_id && a.attempted_at >= since
        }))
    }

    async fn delivered_event(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        event_id: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Option<DeliveredEvent>> {
        let state = self.read()?;
        Ok(state
            .delivery_logs
            .get(&webhook_id)
            .and_then(|log| log.events.get(event_id))
            .filter(|(event, last)| event.brand_id == brand_id && *last >= since)
            .map(|(event, _)| event.clone()))
    }

    async fn take_failed_deliveries(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        since: DateTime<Utc>,
        _now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<(Vec<DeliveredEvent>, bool)> {
        let mut state = self.lock()?;
        let Some(log) = state.delivery_logs.get_mut(&webhook_id) else {
            return Ok((Vec::new(), false));
        };
        let mut keys: Vec<(DateTime<Utc>, String)> = log
            .failed
            .range((since, String::new())..)
            .filter(|(_, event)| event.brand_id == brand_id)
            .take(limit + 1)
            .map(|(key, _)| key.clone())
            .collect();
        let more = keys.len() > limit;
        keys.truncate(limit);
        let taken = keys
            .iter()
            .filter_map(|key| log.failed.remove(key))
            .collect();
        Ok((taken, more))
    }

    /// Taken ones are already out of the map (the embedded store cannot die half-way).
    async fn settle_failed_deliveries(&self, events: &[DeliveredEvent]) -> StoreResult<()> {
        let mut state = self.lock()?;
        for event in events {
            if let Some(log) = state.delivery_logs.get_mut(&event.webhook_id) {
                log.failed
                    .remove(&(event.event_created_at, event.event_id.clone()));
            }
        }
        Ok(())
    }

    async fn restore_failed_deliveries(&self, events: &[DeliveredEvent]) -> StoreResult<()> {
        let mut state = self.lock()?;
        for event in events {
            state
                .delivery_logs
                .entry(event.webhook_id)
                .or_default()
                .failed
                .insert(
                    (event.event_created_at, event.event_id.clone()),
                    event.clone(),
                );
        }
        Ok(())
    }
}
