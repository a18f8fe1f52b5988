//! The ports the application needs from its backends. Each method is one atomic operation, so
//! that an adapter maps it to one store request or transaction: embedded adapters live in
//! [`crate::memory`], AWS adapters beside them.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::stream::Transition;
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
    async fn create_stream(
        &self,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
    ) -> StoreResult<CreateStreamOutcome>;

    async fn get_stream(&self, stream_id: Uuid) -> StoreResult<Option<Stream>>;

    async fn find_stream_by_room(&self, room_name: &str) -> StoreResult<Option<Stream>>;

    /// The brand's streams, newest first (`created_at`, then `id`, descending), optionally of
    /// one status; `total` counts every match.
    async fn list_streams(
        &self,
        brand_id: &str,
        status: Option<StreamStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<StreamPage>;

    /// The brand's streams created at or after `since`, newest first.
    async fn streams_created_since(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<Stream>>;

    /// Applies `transition` to `current` (the stream as the caller read it) if the stored
    /// stream is still in the status the transition leaves: in one atomic step, the stream
    /// update, the release of its active slot when it leaves `preparing` or `live`, and its
    /// event in the outbox. `None` when the stream is gone or has moved on.
    async fn apply_transition(
        &self,
        current: &Stream,
        transition: Transition,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<(Stream, StreamEvent)>>;

    /// Adds `delta` to a live stream's viewer count, never going below zero.
    async fn adjust_viewer_count(&self, stream: &Stream, delta: i64)
    -> StoreResult<Option<Stream>>;
}

#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Stores `webhook` unless its brand already holds `max` webhooks; `false` then.
    async fn create_webhook(&self, webhook: &Webhook, max: usize) -> StoreResult<bool>;
    /// Newest first.
    async fn list_webhooks(&self, brand_id: &str) -> StoreResult<Vec<Webhook>>;
    async fn get_webhook(&self, webhook_id: Uuid) -> StoreResult<Option<Webhook>>;
    /// Deletes the brand's webhook if it exists; nothing otherwise.
    async fn delete_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()>;
    async fn deactivate_webhook(&self, webhook_id: Uuid) -> StoreResult<()>;
}

/// Events written with their transitions, waiting to be handed to the delivery queue.
#[async_trait]
pub trait Outbox: Send + Sync {
    /// Oldest first.
    async fn pending_events(&self, limit: usize) -> StoreResult<Vec<StreamEvent>>;
    async fn mark_relayed(&self, event_ids: &[String]) -> StoreResult<()>;
}

#[async_trait]
pub trait ProviderEventLog: Send + Sync {
    /// Records a room-provider event id; `true` the first time it is seen.
    async fn first_sighting(&self, event_id: &str, at: DateTime<Utc>) -> StoreResult<bool>;
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
    + ProviderEventLog
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
        + ProviderEventLog
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

/// One-shot timers that call back into [`crate::service::timers::fire`]. Scheduling the same
/// (stream, kind) twice keeps one timer.
#[async_trait]
pub trait Timers: Send + Sync {
    async fn schedule(&self, timer: Timer) -> StoreResult<()>;
    async fn cancel(&self, stream_id: Uuid, kind: TimerKind) -> StoreResult<()>;
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
    fn viewer_access(
        &self,
        room_name: &str,
        valid_for: Duration,
    ) -> Result<ViewerAccess, RoomError>;
    async fn delete_room(&self, room_name: &str) -> Result<(), RoomError>;
}

/// One delivery of one event to one webhook. The body, and so the event id, is the same on
/// every attempt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Delivery {
    pub event_id: String,
    pub event_type: crate::domain::EventType,
    pub webhook_id: Uuid,
    /// 1 for the first attempt.
    pub attempt: u32,
    pub body: String,
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
    async fn dead_letter(&self, dead: DeadLetter) -> StoreResult<()>;
}
