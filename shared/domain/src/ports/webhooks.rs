//! Webhooks, their delivery logs and each brand's delivery slots.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::Webhook;
use crate::delivery_log::{AttemptFilter, DeliveredEvent, DeliveryAttempt};
use crate::webhook::WebhookChanges;

use super::*;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateWebhookOutcome {
    Created,
    /// The brand already holds the most webhooks it may; nothing was written.
    Limit,
    /// The idempotency key is no longer held by this request; nothing was written.
    KeyLost,
}

/// The result of [`WebhookStore::update_webhook`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookUpdate {
    /// The webhook as it is after the change.
    Updated(Webhook),
    /// No such webhook for the brand; nothing was written.
    Absent,
    /// A rotation found another secret than the one it replaces (a rotation raced it);
    /// nothing was written.
    SecretChanged,
}

#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Stores `webhook` unless its brand already holds `max` webhooks, binding `binding`'s
    /// idempotency key to it in the same step.
    async fn create_webhook(
        &self,
        webhook: &Webhook,
        max: usize,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateWebhookOutcome>;
    /// Newest first. Read consistently: a webhook is listed as soon as its registration answered.
    /// Read once the request is admitted.
    async fn list_webhooks(&self, brand_id: &str) -> StoreResult<Vec<Webhook>>;
    async fn get_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<Option<Webhook>>;
    /// Deletes the brand's webhook if it exists; nothing otherwise.
    async fn delete_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()>;
    async fn deactivate_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()>;
    /// Applies `changes` to the brand's webhook in one atomic step: only the fields they name
    /// (so a concurrent `410` deactivation is not undone by an unrelated change), and a
    /// rotation only while the secret is still the one it replaces.
    async fn update_webhook(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        changes: &WebhookChanges,
    ) -> StoreResult<WebhookUpdate>;
}

/// Each webhook's delivery log: its attempts, the events as delivered, and its failed
/// deliveries for `redeliver`.
#[async_trait]
pub trait DeliveryLogStore: Send + Sync {
    /// Adds one attempt of `event` to its webhook's delivery log, which keeps each attempt for
    /// [`crate::delivery_log::RETENTION`], and keeps the event's body for sending it
    /// again. An attempt that ends its delivery failed makes the event one of the webhook's
    /// failed deliveries, until [`DeliveryLogStore::take_failed_deliveries`] takes it.
    async fn record_attempt(
        &self,
        attempt: &DeliveryAttempt,
        event: &DeliveredEvent,
    ) -> StoreResult<()>;
    /// A page of the brand's webhook's log, newest first: at most `limit` attempts matching
    /// `filter`, made at or after `since`, and placed before `after` (the
    /// [`DeliveryAttempt::position`] of the previous page's last) when given. Reads about
    /// `limit` records, whatever the log holds.
    async fn delivery_attempts(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        filter: &AttemptFilter,
        since: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<DeliveryAttempt>>;
    /// The event as delivered to the brand's webhook, if one of its attempts was made at or
    /// after `since`.
    async fn delivered_event(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        event_id: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Option<DeliveredEvent>>;
    /// Takes up to `limit` of the brand's webhook's failed deliveries of events created at or
    /// after `since`, oldest first, for a while: each is given to one caller only, who then
    /// settles it (queued) or puts it back. Also whether there were more than `limit` in the
    /// range. Reads about `limit` records.
    async fn take_failed_deliveries(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<(Vec<DeliveredEvent>, bool)>;
    /// Forgets failed deliveries whose redelivery is queued: they are failed deliveries again
    /// only when it ends failed.
    async fn settle_failed_deliveries(&self, events: &[DeliveredEvent]) -> StoreResult<()>;
    /// Puts back failed deliveries whose redelivery could not be queued.
    async fn restore_failed_deliveries(&self, events: &[DeliveredEvent]) -> StoreResult<()>;
}

/// Each brand's delivery slots: what keeps one brand's slow receivers from taking every worker.
#[async_trait]
pub trait DeliverySlotStore: Send + Sync {
    /// Takes one of the brand's `slots` delivery slots for `holder` until `until` (a slot whose
    /// holder's time ran out, `now` or earlier, is free again): the slot's number, or `None`
    /// when every one is held. What keeps one brand's slow receivers from taking every worker.
    async fn acquire_delivery_slot(
        &self,
        brand_id: &str,
        slots: u32,
        holder: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<u32>>;
    /// Frees the slot `holder` took; nothing when it is no longer theirs.
    async fn release_delivery_slot(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
    ) -> StoreResult<()>;
}
