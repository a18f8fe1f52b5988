//! Scheduled shows (docs/shows.md).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::destination::SealedStreamKeys;
use crate::show::{Show, ShowError, ShowStatus};
use crate::{EventType, Stream, StreamEvent};

use super::*;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateShowOutcome {
    Created,
    /// The idempotency key is no longer held by this request; nothing was written.
    KeyLost,
}

/// What a change of a `scheduled` show found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShowChange {
    /// The show as it is after the change.
    Changed(Box<Show>),
    /// No such show for the brand; nothing was written.
    Absent,
    /// The show is no longer `scheduled`; nothing was written.
    NotScheduled,
}

/// A page of a brand's shows, soonest `starts_at` first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowPage {
    pub shows: Vec<Show>,
    pub total: u64,
}

/// What starting a claimed show's stream found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShowStart {
    /// The stream is stored and the show records its id, still `starting` until the launch
    /// ends (a test stream's show is `started` at once).
    Created(Box<Stream>),
    /// The brand had every active slot taken: nothing was written.
    ConcurrencyLimit,
    /// Another starter's claim holds the show now: nothing was written.
    NotClaimed,
}

#[async_trait]
pub trait ShowStore: Send + Sync {
    /// Stores `show` (`scheduled`), its destinations' keys and its script apart from it, and
    /// its due entries (the start, and the reminder when one is pending), binding `binding`'s
    /// idempotency key to it in the same step.
    async fn create_show(
        &self,
        show: &Show,
        keys: &SealedStreamKeys,
        script: Option<&str>,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateShowOutcome>;

    async fn get_show(&self, brand_id: &str, show_id: Uuid) -> StoreResult<Option<Show>>;

    /// The brand's shows, soonest `starts_at` first (then `id`), optionally of one status;
    /// `total` counts every match. Reads a number of items bounded by `limit` plus a constant,
    /// whatever the brand holds.
    async fn list_shows(
        &self,
        brand_id: &str,
        status: Option<ShowStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<ShowPage>;

    /// Replaces a `scheduled` show with `changed` (same id and brand), and its keys and script
    /// when given, moving its due entries with it; only while it is still `scheduled`.
    async fn update_scheduled_show(
        &self,
        changed: &Show,
        keys: Option<&SealedStreamKeys>,
        script: Option<Option<&str>>,
    ) -> StoreResult<ShowChange>;

    /// `scheduled` → `cancelled`, erasing its keys and script and its due entries.
    async fn cancel_show(&self, brand_id: &str, show_id: Uuid) -> StoreResult<ShowChange>;
}

/// What starts a show on time and reminds of it: the schedule's and the sweep's side of the
/// shows (docs/shows.md, "How a show starts"), apart from the brand's own calls.
#[async_trait]
pub trait ShowStartStore: Send + Sync {
    /// Claims a show for its start until `until`: `scheduled` and due at `now`, or `starting`
    /// under a claim that ran out. `None` when another starter holds it or it is settled.
    async fn claim_show(
        &self,
        brand_id: &str,
        show_id: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Show>>;

    /// The show's destinations' keys and script, for its start.
    async fn show_inputs(&self, show_id: Uuid) -> StoreResult<(SealedStreamKeys, Option<String>)>;

    /// Creates `stream` for the claimed `show` (taking one of its brand's `max_active` slots),
    /// records its id on the show, and erases the show's keys, in one atomic step; with
    /// `announce`, the stream's event too. Only while `show` is still claimed as read.
    async fn start_show_stream(
        &self,
        show: &Show,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
    ) -> StoreResult<ShowStart>;

    /// Settles a claimed show: `started` (with `error: None`) or `failed` (with its error),
    /// its keys erased, its due entries removed, and `event` written, in one atomic step;
    /// `false` when the claim no longer holds.
    async fn settle_show(
        &self,
        show: &Show,
        error: Option<&ShowError>,
        event: &StreamEvent,
    ) -> StoreResult<bool>;

    /// Marks the reminder sent and writes `event`, only while the show is `scheduled` and not
    /// yet reminded; `false` otherwise.
    async fn remind_show(&self, show: &Show, event: &StreamEvent) -> StoreResult<bool>;

    /// Shows whose start or reminder is due at `now`, at most about `limit`.
    async fn due_shows(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Show>>;

    /// The show, whatever its brand: what a timer, which knows only the id, reads.
    async fn find_show(&self, show_id: Uuid) -> StoreResult<Option<Show>>;
}
