//! Webhooks, their delivery logs, each brand's delivery slots and its parked deliveries.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::StreamEvent;
use crate::Webhook;
use crate::delivery_log::{AttemptFilter, DeliveredEvent, DeliveryAttempt};
use crate::webhook::{DisabledReason, WebhookChanges};

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
    Updated(Box<Webhook>),
    /// No such webhook for the brand; nothing was written.
    Absent,
    /// A rotation found another secret than the one it replaces (a rotation raced it);
    /// nothing was written.
    SecretChanged,
}

/// A webhook disabled by the service (docs/webhooks.md, "Endpoint health").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDisable {
    pub brand_id: String,
    pub webhook_id: Uuid,
    pub reason: DisabledReason,
    /// The run of failures as read: disabling for `failing` requires it unchanged. When
    /// `None` (a first failure that is a `410`), the run starts at `at`.
    pub failing_since: Option<DateTime<Utc>>,
    pub at: DateTime<Utc>,
    /// Its `webhook.disabled`, written with the change.
    pub event: StreamEvent,
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
    /// Starts the webhook's run of failures at `at`, unless one has already started; nothing
    /// when the webhook is absent.
    async fn mark_webhook_failing(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Ends the webhook's run of failures (a success); nothing when the webhook is absent.
    async fn clear_webhook_failing(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()>;
    /// Disables the webhook as `disable` says and writes its `webhook.disabled` event to the
    /// outbox in the same atomic step, only while the webhook is active and (for `failing`)
    /// its run of failures still began when `disable` read it: `false`, with nothing written,
    /// when either no longer holds (another attempt disabled it first, a success or a `PATCH`
    /// came between).
    async fn disable_webhook(&self, disable: &WebhookDisable) -> StoreResult<bool>;
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
    /// Frees the slot `holder` took unless the brand has deliveries parked (its wake-up is
    /// set, [`ParkedDeliveryStore`]), checked at the instant of the release: `false` then, and
    /// the slot stays held, to be handed to one of them. A delivery parked after the release
    /// finds the slot free. `true` also when the slot was no longer theirs.
    async fn release_delivery_slot_unless_parked(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
    ) -> StoreResult<bool>;
    /// Holds the slot `holder` took until `until`; `false` when it is no longer theirs.
    async fn extend_delivery_slot(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
        until: DateTime<Utc>,
    ) -> StoreResult<bool>;
}

/// A brand's slots and wake-up as read after a write (see [`ParkedDeliveryStore`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrandDeliveryState {
    /// Slots free at the time of the read.
    pub free_slots: u32,
    /// When the sweep looks at the brand's parked deliveries next; `None` when nothing asks it to.
    pub wake_due: Option<DateTime<Utc>>,
}

/// A parked delivery, claimed for queuing: `key` names it for [`ParkedDeliveryStore::remove_parked_deliveries`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkedDelivery {
    pub key: String,
    pub delivery: Delivery,
}

/// What [`ParkedDeliveryStore::claim_parked_deliveries`] claims, and until when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParkedClaim {
    pub limit: usize,
    pub offset: usize,
    pub now: DateTime<Utc>,
    pub until: DateTime<Utc>,
}

/// A brand's wake-up: the sweep's reminder that the brand has parked deliveries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkedWake {
    pub brand_id: String,
    pub due: DateTime<Utc>,
}

/// Deliveries waiting for one of their brand's slots, kept off the shared queue in their
/// brand's own list until a slot frees (docs/webhooks.md, "Fair delivery").
#[async_trait]
pub trait ParkedDeliveryStore: Send + Sync {
    /// Adds `deliveries` (all of `brand_id`) to the end of the brand's list, then reads, after
    /// that write, how many of its `slots` are free at `now` and its wake-up: a slot freed while
    /// they were written is seen here, so no wake-up is lost between the two.
    async fn park_deliveries(
        &self,
        brand_id: &str,
        deliveries: &[Delivery],
        slots: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<BrandDeliveryState>;
    /// How many of the brand's `slots` are free at `now`, and its wake-up, read consistently.
    async fn brand_delivery_state(
        &self,
        brand_id: &str,
        slots: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<BrandDeliveryState>;
    /// Claims up to `limit` of the brand's parked deliveries, oldest first, that no one else
    /// holds a claim on, until `until` (a claim that ran out is taken over); `offset` skips that
    /// many of the oldest claimable ones when more are parked, so that concurrent claimers
    /// rarely contend for the same. Also says whether any delivery stays parked beyond those
    /// claimed (claimed by another included). Reads a bounded number of items.
    async fn claim_parked_deliveries(
        &self,
        brand_id: &str,
        claim: ParkedClaim,
    ) -> StoreResult<(Vec<ParkedDelivery>, bool)>;
    /// Removes claimed deliveries once they are on the queue or delivered.
    async fn remove_parked_deliveries(&self, brand_id: &str, keys: &[String]) -> StoreResult<()>;
    /// Sets the brand's wake-up to `due`.
    async fn set_parked_wake(&self, brand_id: &str, due: DateTime<Utc>) -> StoreResult<()>;
    /// Wake-ups due by `now`, at most about `limit`.
    async fn due_parked_wakes(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<ParkedWake>>;
    /// Clears `wake` if it is still as read; `false` when it changed.
    async fn clear_parked_wake(&self, wake: &ParkedWake) -> StoreResult<bool>;
}
