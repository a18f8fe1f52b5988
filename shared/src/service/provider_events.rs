//! Events from the room provider (decisions.md section 8), matched to a stream by room name
//! and deduplicated by event id. Each maps to a conditional transition or a viewer count
//! change, so a replayed or racing event changes nothing twice.

use crate::app::App;
use crate::domain::TimerKind;
use crate::domain::stream::Transition;
use crate::error::StoreError;
use crate::ports::{Outcome, ProviderEvent, ProviderEventKind, ViewerChange};
use crate::service::{rooms, streams};

/// What an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    Applied,
    Duplicate,
    /// Unknown room, unknown event, or a transition that no longer applies.
    NoChange,
}

/// Applies one provider event. Its id is recorded as seen in the same atomic step as its
/// effect, so a failed attempt (answered `500`) is applied when the provider sends it again,
/// and a resent event that was applied changes nothing.
pub async fn handle(app: &App, event: &ProviderEvent) -> Result<Handled, StoreError> {
    if event.kind == ProviderEventKind::Other || event.room_name.is_empty() {
        return Ok(Handled::NoChange);
    }
    let Some(stream) = app.store.find_stream_by_room(&event.room_name).await? else {
        return Ok(Handled::NoChange);
    };
    let dedupe = Some(event.id.as_str()).filter(|id| !id.is_empty());
    let now = app.clock.now();
    // Someone (a host agent dispatched late, anyone) joined the room of a finished stream:
    // LiveKit created it again for them. It is deleted again; the stream stays as it is.
    if !stream.status.is_active()
        && matches!(
            event.kind,
            ProviderEventKind::AgentJoined | ProviderEventKind::ViewerJoined
        )
    {
        rooms::seen_in_use(app, &stream).await?;
        return Ok(Handled::NoChange);
    }
    let transition = |transition| super::apply_transition(app, &stream, transition, now, dedupe);
    let outcome = match event.kind {
        ProviderEventKind::AgentJoined => match transition(Transition::AgentJoined).await? {
            Outcome::Applied(applied) => {
                let live = applied.stream;
                // The preparing timer would find nothing to do; cancelling saves its run.
                if let Err(err) = app
                    .timers
                    .cancel(live.id, TimerKind::PreparingTimeout)
                    .await
                {
                    tracing::warn!(stream_id = %live.id, error = %err, "preparing timer not cancelled");
                }
                streams::schedule_deadline(app, &live).await;
                Outcome::Applied(())
            }
            other => other.map(drop),
        },
        ProviderEventKind::AgentLeft | ProviderEventKind::RoomFinished => {
            let finish = if event.kind == ProviderEventKind::AgentLeft {
                Transition::HostLeft
            } else {
                Transition::RoomFinished
            };
            match transition(finish).await? {
                Outcome::Applied(applied) => {
                    streams::after_final(app, &applied).await;
                    Outcome::Applied(())
                }
                other => other.map(drop),
            }
        }
        ProviderEventKind::ViewerJoined => app
            .store
            .adjust_viewer_count(&stream, ViewerChange::By(1), now, dedupe)
            .await?
            .map(drop),
        ProviderEventKind::ViewerLeft => app
            .store
            .adjust_viewer_count(&stream, ViewerChange::By(-1), now, dedupe)
            .await?
            .map(drop),
        ProviderEventKind::Other => Outcome::Stale,
    };
    Ok(match outcome {
        Outcome::Applied(()) => Handled::Applied,
        Outcome::Duplicate => Handled::Duplicate,
        Outcome::Stale => Handled::NoChange,
    })
}
