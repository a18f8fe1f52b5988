//! The operations of the API. Handlers parse HTTP and call these; these hold the rules.

pub mod analytics;
pub mod creators;
pub mod idempotency;
pub mod provider_events;
pub mod streams;
pub mod timers;
pub mod webhooks;

use chrono::{DateTime, Utc};

use crate::app::App;
use crate::domain::{Stream, StreamEvent, Transition};

use crate::ports::{Outcome, StoreResult};

/// Every status change goes through here: the store applies it atomically, and one that
/// applied is counted by type.
pub(crate) async fn apply_transition(
    app: &App,
    stream: &Stream,
    transition: Transition,
    at: DateTime<Utc>,
    dedupe: Option<&str>,
) -> StoreResult<Outcome<(Stream, StreamEvent)>> {
    let outcome = app
        .store
        .apply_transition(stream, transition, at, dedupe)
        .await?;
    if matches!(outcome, Outcome::Applied(_)) {
        crate::metrics::transition(transition);
    }
    Ok(outcome)
}
