//! Events from the room provider (decisions.md section 8), matched to a stream by room name
//! and deduplicated by event id. Each maps to a conditional transition or a viewer count
//! change, so a replayed or racing event changes nothing twice.

use chrono::TimeDelta;

use crate::app::App;
use crate::domain::TimerKind;
use crate::domain::stream::Transition;
use crate::error::StoreError;
use crate::service::streams;

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
}

/// What an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    Applied,
    Duplicate,
    /// Unknown room, unknown event, or a transition that no longer applies.
    NoChange,
}

pub async fn handle(app: &App, event: &ProviderEvent) -> Result<Handled, StoreError> {
    if event.kind == ProviderEventKind::Other || event.room_name.is_empty() {
        return Ok(Handled::NoChange);
    }
    let Some(stream) = app.store.find_stream_by_room(&event.room_name).await? else {
        return Ok(Handled::NoChange);
    };
    if !event.id.is_empty() && !app.store.first_sighting(&event.id, app.clock.now()).await? {
        return Ok(Handled::Duplicate);
    }
    let now = app.clock.now();
    let changed = match event.kind {
        ProviderEventKind::AgentJoined => {
            match app
                .store
                .apply_transition(&stream, Transition::AgentJoined, now)
                .await?
            {
                Some((live, _)) => {
                    app.timers
                        .cancel(live.id, TimerKind::PreparingTimeout)
                        .await?;
                    let due_at = live.started_at.unwrap_or(now)
                        + TimeDelta::minutes(i64::from(live.effective_duration_minutes()));
                    app.timers
                        .schedule(crate::ports::Timer {
                            stream_id: live.id,
                            kind: TimerKind::DurationEnd,
                            due_at,
                        })
                        .await?;
                    true
                }
                None => false,
            }
        }
        ProviderEventKind::AgentLeft | ProviderEventKind::RoomFinished => {
            match app
                .store
                .apply_transition(&stream, Transition::ProviderFinished, now)
                .await?
            {
                Some((ended, _)) => {
                    streams::after_final(app, &ended).await;
                    true
                }
                None => false,
            }
        }
        ProviderEventKind::ViewerJoined => {
            app.store.adjust_viewer_count(&stream, 1).await?.is_some()
        }
        ProviderEventKind::ViewerLeft => {
            app.store.adjust_viewer_count(&stream, -1).await?.is_some()
        }
        ProviderEventKind::Other => false,
    };
    Ok(if changed {
        Handled::Applied
    } else {
        Handled::NoChange
    })
}
