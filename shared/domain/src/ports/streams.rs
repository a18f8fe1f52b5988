//! Streams and their room cleanups.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::destination::SealedStreamKeys;
use crate::room_cleanup::RoomCleanup;
use crate::stream::Transition;
use crate::{EventType, Stream, StreamEvent, StreamStatus};

use super::*;

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
    /// It writes only once the request is admitted (`hosting_support::admission::admitted`); what it
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

    /// [`Self::find_stream_by_room`] for a viewer's join, which needs no count: a live
    /// stream's `viewer_count` may be its stored base alone, so a store that sums the count
    /// from many items reads none of them (docs/lifecycle.md, "Viewer counts").
    async fn find_stream_by_room_uncounted(&self, room_name: &str) -> StoreResult<Option<Stream>> {
        self.find_stream_by_room(room_name).await
    }

    /// Applies `transition` to `current` (the stream as the caller read it) if the stored
    /// stream is still in the status the transition leaves: in one atomic step, the stream
    /// update (its deadline included), the release of its active slot when it leaves
    /// `preparing` or `live`, its event in the outbox, and `dedupe` (a room-provider event id)
    /// recorded as seen, so that a provider event is applied once and a failed attempt leaves
    /// it unseen for the provider's retry; and `cleanup`, the deletion of the room of a stream
    /// the transition finishes, written pending. The events of the destinations it moves
    /// ([`StreamEvent::of_change`]) follow its own; a finished stream without a room cleanup
    /// (a test stream) has its stream keys erased in the same step. A transition that finishes the stream adds
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
    /// room, a dispatch retry, a reconnect window; see [`crate::host`]), if the stored
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

    /// [`StreamStore::update_stream_host`] for a change of the destinations or the egress
    /// (docs/destinations.md): the same conditional write, with `events` (the destinations'
    /// events) in the outbox and `added_key` (a new destination's id and stream key) kept with
    /// the stream's keys, in the same atomic step.
    async fn update_stream_destinations(
        &self,
        current: &Stream,
        updated: &Stream,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
        events: &[StreamEvent],
        added_key: Option<(&str, &crate::sealed::StoredSecret)>,
    ) -> StoreResult<Outcome<Stream>>;

    /// Changes a live stream's viewer count (only while it is `live`: a finished stream's
    /// count is final), never read below zero (the floor is taken where the count is read, so
    /// a leave reads nothing first), recording `dedupe` in the same atomic step as
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
}

/// The stream keys of a stream's destinations, kept apart from the stream (docs/destinations.md):
/// only the egress requests read them, and they are erased when the stream has ended.
#[async_trait]
pub trait StreamKeyStore: Send + Sync {
    /// The stream keys of the stream's destinations, kept apart from the stream: only the
    /// egress requests need them.
    async fn stream_keys(&self, stream_id: Uuid) -> StoreResult<SealedStreamKeys>;

    /// Erases the stream's keys: its egress is stopped and it has ended.
    async fn erase_stream_keys(&self, stream_id: Uuid) -> StoreResult<()>;
}

/// Reads across many streams: a brand's pages and analytics window, and the sweep's overdue
/// streams. Each is bounded by its page or its limit, whatever the history holds.
#[async_trait]
pub trait StreamListStore: Send + Sync {
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
    /// [`MAX_LISTED_STREAMS`]: crate::analytics::MAX_LISTED_STREAMS
    /// `now` bounds the days a store looks at (streams created after it are counted too).
    async fn analytics_window(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<crate::analytics::Window>;

    /// Active streams with something due before `now` ([`Stream::next_due`]: a deadline, a
    /// dispatch retry, the end of a reconnect window), read from the store (never from a
    /// process's memory), at most `limit`.
    async fn overdue_streams(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Stream>>;
}

/// The room cleanups that outlive their streams' transitions: a finished stream's room is
/// deleted by a durable record, retried until it is gone (docs/lifecycle.md).
#[async_trait]
pub trait RoomCleanupStore: Send + Sync {
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
    /// The count as the provider reports it for the room (a read-back): what the store holds
    /// is moved to it by the difference as of the write, so a join or leave counted meanwhile
    /// is not undone (docs/lifecycle.md, "Viewer counts").
    Reported(u64),
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
