//! What a fired stream timer does (decisions.md section 3). Each fires a conditional
//! transition, so a timer that lost a race with another trigger changes nothing.

use crate::app::App;
use crate::domain::TimerKind;
use crate::domain::stream::Transition;
use crate::error::StoreError;
use crate::ports::Timer;
use crate::service::streams;

/// Applies a due timer; `true` when it changed the stream.
pub async fn fire(app: &App, timer: &Timer) -> Result<bool, StoreError> {
    let transition = match timer.kind {
        TimerKind::PreparingTimeout => Transition::PreparingTimedOut,
        TimerKind::DurationEnd => Transition::DurationElapsed,
    };
    let Some(current) = app.store.get_stream(timer.stream_id).await? else {
        return Ok(false);
    };
    let Some((stream, _event)) = app
        .store
        .apply_transition(&current, transition, app.clock.now())
        .await?
    else {
        return Ok(false);
    };
    tracing::info!(stream_id = %stream.id, timer = timer.kind.as_str(), status = stream.status.as_str(), "timer fired");
    streams::after_final(app, &stream).await;
    Ok(true)
}
