//! The ports the application needs from its backends. Each method is one atomic operation, so
//! that an adapter maps it to one store request or transaction: embedded adapters live in
//! the `hosting-embedded` crate, AWS adapters in `hosting-aws`.
//!
//! Reads whose cost grows with what they return (pages, windows, lists, the delivery log)
//! wait for the admission of the request they serve ([`crate::admission::admitted`]) before
//! making those reads; what they read first to find them may go alongside the request's
//! rate-limit count.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::delivery_log::{AttemptFilter, DeliveredEvent, DeliveryAttempt};
use crate::domain::idempotency::StoredAnswer;
use crate::domain::room_cleanup::RoomCleanup;
use crate::domain::stream::Transition;
use crate::domain::webhook::WebhookChanges;
use crate::domain::{
    ApiKey, Brand, Creator, EventType, Stream, StreamEvent, StreamStatus, TimerKind, Webhook,
};
use crate::error::{RoomError, StoreError};

pub type StoreResult<T> = Result<T, StoreError>;

#[async_trait]
pub trait AccountStore: Send + Sync {
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKey>>;
    async fn get_brand(&self, brand_id: &str) -> StoreResult<Option<Brand>>;
}

#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Counts one request of `brand_id` in the window starting at `window_start` and returns
    /// the window's count including it.
    async fn count_request(&self, brand_id: &str, window_start: DateTime<Utc>) -> StoreResult<u64>;
}

#[async_trait]
pub trait CreatorStore: Send + Sync {
    async fn list_creators(&self) -> StoreResult<Vec<Creator>>;
    async fn get_creator(&self, creator_id: &str) -> StoreResult<Option<Creator>>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateStreamOutcome {
    /// The stream as stored; see [`StreamStore::create_stream`].
    Created(Box<Stream>),
    /// The brand already had `max_active` streams in `preparing` or `live`; nothing was written.
    ConcurrencyLimit,
    /// The idempotency key is no longer held by this request; nothing was written.
    KeyLost,
}

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

/// An idempotency key bound in the same atomic step as a creation (docs/idempotency.md, "Binding"):
/// the key this request holds, to be bound to what it creates, with the answer when it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyBinding {
    pub key_id: String,
    pub token: String,
    pub answer: Option<StoredAnswer>,
    pub at: DateTime<Utc>,
}

/// Where an idempotency key stands for a request that brings it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyHold {
    /// The key was free (or its last holder lapsed with nothing created): this request holds it.
    Acquired { token: String },
    /// Another request holds it and has not created anything (yet).
    Held { fingerprint: String },
    /// Bound to what an earlier request created, with its answer once recorded.
    Bound {
        fingerprint: String,
        resource_id: String,
        answer: Option<StoredAnswer>,
    },
}

#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Takes the key until `hold_until` unless it is held or bound; see [`KeyHold`].
    async fn hold_idempotency_key(
        &self,
        key_id: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        hold_until: DateTime<Utc>,
    ) -> StoreResult<KeyHold>;
    /// Lets the key go, when this request created nothing.
    async fn release_idempotency_key(&self, key_id: &str, token: &str) -> StoreResult<()>;
    /// Records the answer of a bound key, unless one is recorded already.
    async fn record_idempotent_answer(
        &self,
        key_id: &str,
        answer: &StoredAnswer,
    ) -> StoreResult<()>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamPage {
    pub streams: Vec<Stream>,
    pub total: u64,
}

#[async_trait]
pub trait StreamStore: Send + Sync {
    /// Creates `stream` and takes one of its brand's active slots in one atomic step, together
    /// with an event of type `announce` in the outbox when given (built from the stream as
    /// stored, as of its `created_at`); refuses when `max_active` slots are taken.
    ///
    /// The stored stream is placed after the brand's newest ([`Stream::place_after`]), so
    /// that creation order is newest-first order.
    ///
    /// With `binding`, the idempotency key is bound to the stream in the same step.
    ///
    /// It writes only once the request is admitted ([`crate::admission::admitted`]); what it
    /// reads to decide may go alongside the request's count.
    async fn create_stream(
        &self,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateStreamOutcome>;

    /// The stream, without its script (see [`StreamStore::stream_script`]).
    async fn get_stream(&self, stream_id: Uuid) -> StoreResult<Option<Stream>>;

    /// The script the stream was started with, kept apart from the stream so that no read or
    /// write of the stream carries it: only a launch needs it.
    async fn stream_script(&self, stream_id: Uuid) -> StoreResult<Option<String>>;

    async fn find_stream_by_room(&self, room_name: &str) -> StoreResult<Option<Stream>>;

    /// The brand's streams, newest first (`created_at`, then `id`, descending), optionally of
    /// one status; `total` counts every match. The page is read once the request is admitted.
    async fn list_streams(
        &self,
        brand_id: &str,
        status: Option<StreamStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<StreamPage>;

    /// The analytics window of the brand's streams created at or after `since`: the figures
    /// of all of them, how many are live, and the newest [`MAX_LISTED_STREAMS`] of them,
    /// newest first. Work is bounded whatever the window holds: finished streams are counted
    /// from aggregates that each finishing transition (and seeding) updates in its own atomic
    /// step, and only the brand's active streams, those created in the minute of `since`, and
    /// the listed ones are read one by one.
    ///
    /// [`MAX_LISTED_STREAMS`]: crate::domain::analytics::MAX_LISTED_STREAMS
    /// `now` bounds the days a store looks at (streams created after it are counted too).
    async fn analytics_window(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<crate::domain::analytics::Window>;

    /// Applies `transition` to `current` (the stream as the caller read it) if the stored
    /// stream is still in the status the transition leaves: in one atomic step, the stream
    /// update (its deadline included), the release of its active slot when it leaves
    /// `preparing` or `live`, its event in the outbox, and `dedupe` (a room-provider event id)
    /// recorded as seen, so that a provider event is applied once and a failed attempt leaves
    /// it unseen for the provider's retry; and `cleanup`, the deletion of the room of a stream
    /// the transition finishes, written pending. A transition that finishes the stream adds
    /// its final figures (its viewer count as stored, not as the caller read it) to the
    /// brand's analytics aggregates in the same step.
    async fn apply_transition(
        &self,
        current: &Stream,
        transition: Transition,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
        cleanup: Option<&RoomCleanup>,
    ) -> StoreResult<Outcome<(Stream, StreamEvent)>>;

    /// Writes `updated`, a change of `current` that is no status change (the agents in the
    /// room, a dispatch retry, a reconnect window; see [`crate::domain::host`]), if the stored
    /// stream is still `current` (its status and `revision`): with its next due time in the
    /// due index and `dedupe` recorded as [`StreamStore::apply_transition`] does. `Stale` when
    /// the stream changed since `current` was read.
    async fn update_stream_host(
        &self,
        current: &Stream,
        updated: &Stream,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
    ) -> StoreResult<Outcome<Stream>>;

    /// Changes a live stream's viewer count (only while it is `live`: a finished stream's
    /// count is final), never read below zero, recording `dedupe` in the same atomic step as
    /// [`StreamStore::apply_transition`] does. It never writes what a transition is
    /// conditional on, so a busy show's churn cannot hold up its end (docs/lifecycle.md,
    /// "Viewer counts"); `stream` is the caller's read, and `Stale` when it was not `live`.
    async fn adjust_viewer_count(
        &self,
        stream: &Stream,
        change: ViewerChange,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
    ) -> StoreResult<Outcome<()>>;

    /// Active streams with something due before `now` ([`Stream::next_due`]: a deadline, a
    /// dispatch retry, the end of a reconnect window), read from the store (never from a
    /// process's memory), at most `limit`.
    async fn overdue_streams(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Stream>>;

    /// Pending room cleanups due before `now`, soonest first, at most `limit`, read from the
    /// store (never from a process's memory).
    async fn due_room_cleanups(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<RoomCleanup>>;

    /// Makes `cleanup` its stream's pending cleanup, replacing any (a finished stream's room
    /// seen in use again).
    async fn put_room_cleanup(&self, cleanup: &RoomCleanup) -> StoreResult<()>;

    /// Replaces the pending cleanup `read` (as it was read) with `next`, or ends it when
    /// `next` is `None`. Nothing when the pending cleanup changed since it was read (re-armed
    /// by a room seen in use), so a newer one is never lost.
    async fn settle_room_cleanup(
        &self,
        read: &RoomCleanup,
        next: Option<&RoomCleanup>,
    ) -> StoreResult<()>;
}

/// A change of a live stream's viewer count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewerChange {
    /// Viewers joined (positive) or left (negative).
    By(i64),
    /// The count set outright (the test helper; never with a provider event's id).
    To(u64),
}

/// What a conditional change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<T> {
    Applied(T),
    /// The stream is gone or no longer in the status the change needs.
    Stale,
    /// The provider event was already applied.
    Duplicate,
}

impl<T> Outcome<T> {
    pub fn applied(self) -> Option<T> {
        match self {
            Outcome::Applied(value) => Some(value),
            Outcome::Stale | Outcome::Duplicate => None,
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Outcome<U> {
        match self {
            Outcome::Applied(value) => Outcome::Applied(f(value)),
            Outcome::Stale => Outcome::Stale,
            Outcome::Duplicate => Outcome::Duplicate,
        }
    }
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
    /// Adds one attempt of `event` to its webhook's delivery log, which keeps each attempt for
    /// [`crate::domain::delivery_log::RETENTION`], and keeps the event's body for sending it
    /// again. An attempt that ends its delivery failed makes the event one of the webhook's
    /// failed deliveries, until [`WebhookStore::take_failed_deliveries`] takes it.
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

/// Operator writes: seeding, brands, keys and the creators catalog.
#[async_trait]
pub trait AdminStore: Send + Sync {
    async fn put_brand(&self, brand: &Brand) -> StoreResult<()>;
    async fn put_api_key(&self, key: &ApiKey) -> StoreResult<()>;
    async fn put_creator(&self, creator: &Creator) -> StoreResult<()>;
    async fn delete_creator(&self, creator_id: &str) -> StoreResult<()>;
    /// Inserts or replaces a stream as it is (fixtures, history); active ones take a slot.
    async fn put_stream(&self, stream: &Stream) -> StoreResult<()>;

    /// Many [`AdminStore::put_stream`]s, in as few requests as the backend allows.
    async fn put_streams(&self, streams: &[Stream]) -> StoreResult<()> {
        for stream in streams {
            self.put_stream(stream).await?;
        }
        Ok(())
    }
}

/// Everything the application keeps.
pub trait Store:
    AccountStore
    + RateLimitStore
    + CreatorStore
    + StreamStore
    + WebhookStore
    + Outbox
    + IdempotencyStore
    + AdminStore
{
}

impl<T> Store for T where
    T: AccountStore
        + RateLimitStore
        + CreatorStore
        + StreamStore
        + WebhookStore
        + Outbox
        + IdempotencyStore
        + AdminStore
{
}

/// A one-shot timer of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timer {
    pub stream_id: Uuid,
    pub kind: TimerKind,
    pub due_at: DateTime<Utc>,
}

/// One-shot timers that call back into `hosting_app::service::timers::fire`. Scheduling the same
/// (stream, kind) again replaces its timer. Timers are the precise path; the deadline sweep
/// (`hosting_app::service::timers::sweep`) is the safety net when one is lost.
#[async_trait]
pub trait Timers: Send + Sync {
    async fn schedule(&self, timer: Timer) -> StoreResult<()>;
    async fn cancel(&self, stream_id: Uuid, kind: TimerKind) -> StoreResult<()>;
}

/// An event of the room provider's, as its adapter reads it (docs/livekit.md, "Event mapping").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderEventKind {
    AgentJoined,
    AgentLeft,
    /// A participant of any kind but agent (a missing kind is a standard participant).
    ViewerJoined,
    ViewerLeft,
    RoomFinished,
    /// Anything else: acknowledged, changes nothing.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderEvent {
    pub id: String,
    pub room_name: String,
    pub kind: ProviderEventKind,
    /// The participant's id (its `sid`), for participant events.
    pub participant: String,
    /// Why a participant left, as the provider names it (`CLIENT_INITIATED`, ...).
    pub disconnect_reason: Option<String>,
    /// When the provider says the event happened.
    pub created_at: Option<DateTime<Utc>>,
}

/// What a viewer needs to join a launched room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewerAccess {
    pub ws_url: String,
    pub viewer_token: String,
}

/// The real-time room provider (LiveKit).
#[async_trait]
pub trait RoomProvider: Send + Sync {
    /// Creates the room, kept open while empty (or agent-only) for `keep_open`.
    async fn create_room(&self, room_name: &str, keep_open: Duration) -> Result<(), RoomError>;
    /// Dispatches the host agent explicitly; `metadata` is handed to the agent.
    async fn dispatch_agent(&self, room_name: &str, metadata: &str) -> Result<(), RoomError>;
    /// A subscribe-only token for viewers, valid for `valid_for`.
    async fn viewer_access(
        &self,
        room_name: &str,
        valid_for: Duration,
    ) -> Result<ViewerAccess, RoomError>;
    /// Deletes the room; a room that does not exist (deleted already, or never created)
    /// counts as deleted.
    async fn delete_room(&self, room_name: &str) -> Result<(), RoomError>;
}

/// One delivery of one event to one webhook. The body, and so the event id, is the same on
/// every attempt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Delivery {
    pub event_id: String,
    pub event_type: crate::domain::EventType,
    pub brand_id: String,
    pub webhook_id: Uuid,
    /// 1 for the first attempt.
    pub attempt: u32,
    pub body: String,
    /// Times it was put back on the queue unattempted, its brand holding every delivery slot
    /// (see `hosting_app::delivery::worker::defer`); each waits longer. Absent in messages written
    /// before it existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deferrals: u32,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

/// A delivery that failed its last attempt, with everything needed to replay it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeadLetter {
    pub delivery: Delivery,
    pub last_error: String,
    pub failed_at: DateTime<Utc>,
}

/// The queue of webhook deliveries (SQS in AWS).
#[async_trait]
pub trait DeliveryQueue: Send + Sync {
    /// Makes `delivery` available to the delivery worker after `delay`.
    async fn enqueue(&self, delivery: Delivery, delay: Duration) -> StoreResult<()>;
    /// Makes every one of `deliveries` available now, in as few requests as the queue allows.
    /// On an error, some of them may have been queued.
    async fn enqueue_now(&self, deliveries: Vec<Delivery>) -> StoreResult<()> {
        for delivery in deliveries {
            self.enqueue(delivery, Duration::ZERO).await?;
        }
        Ok(())
    }
    async fn dead_letter(&self, dead: DeadLetter) -> StoreResult<()>;
}
