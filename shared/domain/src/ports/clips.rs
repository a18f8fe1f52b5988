//! Clips and the queue of their cuts (docs/clips.md).

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::StreamEvent;
use crate::clip::Clip;

use super::*;

/// What a clip's creation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateClipOutcome {
    Created,
    /// The stream has its `max` clips already.
    Limit,
    /// The request's idempotency key was taken over meanwhile: nothing created.
    KeyLost,
}

/// A stream's clips: at most a fixed number each, so every read of them is bounded. Every write
/// after the creation replaces the clip as read (its `version`), so a cut, a retry, a deletion
/// and an object's removal never overwrite one another.
#[async_trait]
pub trait ClipStore: Send + Sync {
    /// Creates `clip` unless its stream has `max` clips already, binding `binding` in the same
    /// atomic step.
    async fn create_clip(
        &self,
        clip: &Clip,
        max: u32,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateClipOutcome>;
    /// Every clip of the stream, oldest first (read whole, consistently).
    async fn stream_clips(&self, stream_id: Uuid) -> StoreResult<Vec<Clip>>;
    /// One clip, read consistently.
    async fn get_clip(&self, stream_id: Uuid, clip_id: &str) -> StoreResult<Option<Clip>>;
    /// Writes `next` over `read` (with `event` into the outbox in the same step), if the clip
    /// is still at `read.version`; `false` when it changed meanwhile.
    async fn replace_clip(
        &self,
        read: &Clip,
        next: &Clip,
        event: Option<&StreamEvent>,
    ) -> StoreResult<bool>;
    /// Clips owed work (`due_at`) due by `now`, soonest first, at most `limit`; a sweep's read,
    /// which a consistent read of each confirms.
    async fn due_clips(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Clip>>;
}

/// A cut to make: the clip it is of.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClipJob {
    pub stream_id: Uuid,
    pub clip_id: String,
}

/// The queue of cuts (SQS on AWS, read by the clips function). A job only points at its clip:
/// the clip's record is what makes the cut durable, and the sweep queues again any whose
/// job was lost.
#[async_trait]
pub trait ClipQueue: Send + Sync {
    async fn enqueue_cut(&self, job: ClipJob, delay: Duration) -> StoreResult<()>;
}
