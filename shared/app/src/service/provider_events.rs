//! Events from the room provider (docs/livekit.md, "Event mapping"; docs/lifecycle.md, "Why a
//! stream ended" and "The show goes on"), matched to a stream by room name and deduplicated by
//! event id. Each maps to a conditional transition or a viewer count change, so a replayed or
//! racing event changes nothing twice (docs/lifecycle.md, "Atomicity").

use crate::app::App;
use crate::service::host::{self, Host};
use crate::service::rooms;
use hosting_domain::StreamStatus;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{Outcome, ProviderEvent, ProviderEventKind, ViewerChange};
use hosting_domain::stream::Transition;

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
    // A viewer's join or leave is the busiest event of a show and needs no count (the floor at
    // zero is taken where the count is read): its read leaves the count out.
    let found = if matches!(
        event.kind,
        ProviderEventKind::ViewerJoined | ProviderEventKind::ViewerLeft
    ) {
        app.streams()
            .find_stream_by_room_uncounted(&event.room_name)
            .await?
    } else {
        app.streams().find_stream_by_room(&event.room_name).await?
    };
    let Some(stream) = found else {
        return Ok(Handled::NoChange);
    };
    let dedupe = Some(event.id.as_str()).filter(|id| !id.is_empty());
    let now = app.clock.now();
    // Someone (a host agent dispatched late, anyone) joined the room of a finished stream:
    // LiveKit created it again for them. It is deleted again; the stream stays as it is.
    if !stream.status.is_active()
        && matches!(
            event.kind,
            ProviderEventKind::AgentJoined
                | ProviderEventKind::OtherAgentJoined
                | ProviderEventKind::ViewerJoined
                | ProviderEventKind::UnknownParticipantJoined
        )
    {
        rooms::seen_in_use(app, &stream).await?;
        return Ok(Handled::NoChange);
    }
    let outcome = match event.kind {
        ProviderEventKind::AgentJoined if stream.status == StreamStatus::Preparing => {
            host::went_live(app, &stream, Host::of_event(event), now, dedupe).await?
        }
        ProviderEventKind::AgentJoined => {
            host::agent_joined(app, &stream, Host::of_event(event), dedupe).await?
        }
        ProviderEventKind::AgentLeft if stream.status == StreamStatus::Live => {
            host::agent_left(app, &stream, event, dedupe).await?
        }
        ProviderEventKind::AgentLeft => Outcome::Stale,
        ProviderEventKind::RoomFinished => {
            host::finish(app, &stream, Transition::RoomFinished, dedupe).await?
        }
        ProviderEventKind::ViewerJoined => {
            app.streams()
                .adjust_viewer_count(&stream, ViewerChange::By(1), now, dedupe)
                .await?
        }
        ProviderEventKind::ViewerLeft => {
            app.streams()
                .adjust_viewer_count(&stream, ViewerChange::By(-1), now, dedupe)
                .await?
        }
        ProviderEventKind::Egress => match &event.egress {
            Some(report) => super::destinations::apply_report(app, &stream, report, dedupe).await?,
            None => Outcome::Stale,
        },
        // The egress's recorder, an avatar or a stray agent is neither a viewer nor the host.
        ProviderEventKind::EgressParticipant
        | ProviderEventKind::OtherAgentJoined
        | ProviderEventKind::OtherAgentLeft
        | ProviderEventKind::UnknownParticipantJoined
        | ProviderEventKind::Other => Outcome::Stale,
    };
    Ok(match outcome {
        Outcome::Applied(()) => Handled::Applied,
        Outcome::Duplicate => Handled::Duplicate,
        Outcome::Stale => Handled::NoChange,
    })
}
