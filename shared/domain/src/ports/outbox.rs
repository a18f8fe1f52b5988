//! The outbox: events written with their transitions, waiting for the relay.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::StreamEvent;

use super::*;

/// A relay's hold on one outbox event (see [`Outbox::claim_event`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayClaim {
    pub token: String,
    /// 1 for the first relay attempt of the event.
    pub attempt: u32,
}

/// An event the relay gave up on, kept for an operator to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAsideEvent {
    pub event: StreamEvent,
    pub attempts: u32,
    pub error: String,
    pub set_aside_at: DateTime<Utc>,
}

/// Events written with their transitions, waiting to be handed to the delivery queue. Each
/// event is relayed on its own: relays claim it with a conditional write, so concurrent relays
/// never send it twice, and one that cannot be relayed never holds up another.
#[async_trait]
pub trait Outbox: Send + Sync {
    /// Pending events the relay may take at `due_by` (written, or last failed, before it),
    /// oldest first. May include events another relay holds: the claim decides.
    async fn pending_events(
        &self,
        due_by: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<StreamEvent>>;
    /// Claims a pending event until `lease_until`; `None` when it is relayed, set aside,
    /// waiting for its retry, or held by another relay whose lease has not run out.
    async fn claim_event(
        &self,
        event_id: &str,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> StoreResult<Option<RelayClaim>>;
    /// The event was handed to the delivery queue.
    async fn mark_relayed(&self, event_id: &str, claim: &RelayClaim) -> StoreResult<()>;
    /// A relay attempt failed with `error`: retried from `retry_at`, or set aside when `None`.
    async fn relay_failed(
        &self,
        event_id: &str,
        claim: &RelayClaim,
        error: &str,
        retry_at: Option<DateTime<Utc>>,
    ) -> StoreResult<()>;
    /// Events set aside, oldest first.
    async fn set_aside_events(&self, limit: usize) -> StoreResult<Vec<SetAsideEvent>>;
    /// Puts a set-aside event back in the outbox with fresh attempts; `false` when it is not
    /// set aside.
    async fn requeue_event(&self, event_id: &str, now: DateTime<Utc>) -> StoreResult<bool>;
}
