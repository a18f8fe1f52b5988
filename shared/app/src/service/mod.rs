//! The operations of the API. Handlers parse HTTP and call these; these hold the rules.

pub mod analytics;
pub mod clips;
pub mod creators;
pub mod destinations;
pub mod host;
pub mod idempotency;
mod new_stream;
pub mod provider_events;
pub mod recordings;
pub mod rooms;
mod show_changes;
pub mod shows;
pub mod streams;
pub mod test_helpers;
pub mod timers;
pub mod webhooks;

use chrono::{DateTime, Utc};

use crate::app::App;
use hosting_domain::{RoomCleanup, Stream, Transition};

use hosting_domain::ports::{Outcome, StoreResult};

/// A status change that applied, with the pending cleanup of the room it wrote when it
/// finished the stream.
pub(crate) struct Applied {
    pub stream: Stream,
    pub cleanup: Option<RoomCleanup>,
}

/// Every status change goes through here: the store applies it atomically (with the room
/// cleanup of a stream it finishes), and one that applied is counted by type.
pub(crate) async fn apply_transition(
    app: &App,
    stream: &Stream,
    transition: Transition,
    at: DateTime<Utc>,
    dedupe: Option<&str>,
) -> StoreResult<Outcome<Applied>> {
    let cleanup = (!transition.to().is_active())
        .then(|| rooms::for_finished(app, stream, at))
        .flatten();
    let outcome = app
        .streams()
        .apply_transition(stream, transition, at, dedupe, cleanup.as_ref())
        .await?;
    if let Outcome::Applied((after, _)) = &outcome {
        crate::metrics::transition(transition);
        destinations::count_failures(stream, after);
    }
    Ok(outcome.map(|(stream, _event)| Applied {
        cleanup: cleanup.map(|cleanup| cleanup.of_stored(&stream)),
        stream,
    }))
}
