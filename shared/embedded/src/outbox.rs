//! The embedded outbox: events waiting to be relayed, claimed one by one as in DynamoDB.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::EmbeddedStore;
use hosting_domain::StreamEvent;
use hosting_domain::ports::{Outbox, RelayClaim, SetAsideEvent, StoreResult};

pub(super) struct OutboxEntry {
    pub(super) event: StreamEvent,
    /// When a relay may take it: its creation, then the time of its retry.
    pub(super) due: DateTime<Utc>,
    pub(super) claim: Option<(String, DateTime<Utc>)>,
    pub(super) attempts: u32,
    pub(super) set_aside: Option<(String, DateTime<Utc>)>,
}

#[async_trait]
impl Outbox for EmbeddedStore {
    async fn pending_events(
        &self,
        due_by: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<StreamEvent>> {
        let state = self.read()?;
        let mut due: Vec<&OutboxEntry> = state
            .outbox
            .values()
            .filter(|entry| entry.set_aside.is_none() && entry.due <= due_by)
            .collect();
        due.sort_by(|a, b| (a.due, &a.event.id).cmp(&(b.due, &b.event.id)));
        Ok(due
            .into_iter()
            .take(limit)
            .map(|entry| entry.event.clone())
            .collect())
    }

    async fn claim_event(
        &self,
        event_id: &str,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> StoreResult<Option<RelayClaim>> {
        let mut state = self.lock()?;
        let Some(entry) = state.outbox.get_mut(event_id) else {
            return Ok(None);
        };
        let held = entry.claim.as_ref().is_some_and(|(_, until)| *until > now);
        if entry.set_aside.is_some() || held || entry.due > now {
            return Ok(None);
        }
        let token = Uuid::new_v4().to_string();
        entry.claim = Some((token.clone(), lease_until));
        entry.attempts += 1;
        Ok(Some(RelayClaim {
            token,
            attempt: entry.attempts,
        }))
    }

    async fn mark_relayed(&self, event_id: &str, claim: &RelayClaim) -> StoreResult<()> {
        let mut state = self.lock()?;
        if state
            .outbox
            .get(event_id)
            .is_some_and(|entry| entry.claim.as_ref().is_some_and(|(t, _)| *t == claim.token))
        {
            state.outbox.remove(event_id);
        }
        Ok(())
    }

    async fn relay_failed(
        &self,
        event_id: &str,
        claim: &RelayClaim,
        error: &str,
        retry_at: Option<DateTime<Utc>>,
    ) -> StoreResult<()> {
        let mut state = self.lock()?;
        let Some(entry) = state
            .outbox
            .get_mut(event_id)
            .filter(|entry| entry.claim.as_ref().is_some_and(|(t, _)| *t == claim.token))
        else {
            return Ok(());
        };
        entry.claim = None;
        match retry_at {
            Some(retry_at) => entry.due = retry_at,
            None => entry.set_aside = Some((error.to_owned(), Utc::now())),
        }
        Ok(())
    }

    async fn set_aside_events(&self, limit: usize) -> StoreResult<Vec<SetAsideEvent>> {
        let state = self.read()?;
        let mut set_aside: Vec<SetAsideEvent> = state
            .outbox
            .values()
            .filter_map(|entry| {
                let (error, at) = entry.set_aside.clone()?;
                Some(SetAsideEvent {
                    event: entry.event.clone(),
                    attempts: entry.attempts,
                    error,
                    set_aside_at: at,
                })
            })
            .collect();
        set_aside.sort_by(|a, b| (a.set_aside_at, &a.event.id).cmp(&(b.set_aside_at, &b.event.id)));
        set_aside.truncate(limit);
        Ok(set_aside)
    }

    async fn requeue_event(&self, event_id: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        let mut state = self.lock()?;
        let Some(entry) = state
            .outbox
            .get_mut(event_id)
            .filter(|entry| entry.set_aside.is_some())
        else {
            return Ok(false);
        };
        entry.set_aside = None;
        entry.attempts = 0;
        entry.due = now;
        self.outbox_ready.notify_one();
        Ok(true)
    }
}
