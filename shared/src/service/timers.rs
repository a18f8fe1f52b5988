//! What ends an active stream at its deadline (decisions.md section 3): its timer, the precise
//! path, and the sweep, the safety net for a timer that was lost (a process that died with
//! its in-process timers, a schedule that was never created, an invocation that was dropped).
//! Both apply the same conditional transition, so running both changes a stream once.

use crate::app::App;
use crate::domain::Stream;
use crate::error::StoreError;
use crate::ports::Timer;
use crate::service::{rooms, streams};

/// Overdue streams handled per sweep pass.
const SWEEP_BATCH: usize = 100;

/// Applies a timer; `true` when it changed the stream. A timer that fires before its due
/// time (EventBridge Scheduler's `at()` is minute-grained) changes nothing and is armed
/// again for its due time.
pub async fn fire(app: &App, timer: &Timer) -> Result<bool, StoreError> {
    if app.clock.now() < timer.due_at {
        tracing::info!(stream_id = %timer.stream_id, timer = timer.kind.as_str(), due_at = %timer.due_at, "timer fired early; armed again");
        app.timers.schedule(*timer).await?;
        return Ok(false);
    }
    let Some(current) = app.store.get_stream(timer.stream_id).await? else {
        return Ok(false);
    };
    // The stream may have moved on, and with it its deadline (a preparing timeout is moot once
    // live): only the timer of the current deadline acts.
    if current.deadline_timer().map(|(kind, _)| kind) != Some(timer.kind) {
        return Ok(false);
    }
    end_at_deadline(app, &current).await
}

/// Ends every active stream whose deadline has passed, then attempts the room cleanups that
/// are due ([`rooms::sweep`]); returns how many streams it changed.
pub async fn sweep(app: &App) -> Result<usize, StoreError> {
    let changed = end_overdue(app).await;
    if let Err(err) = rooms::sweep(app).await {
        tracing::error!(error = %err, "room cleanup sweep failed; retried by the next sweep");
    }
    changed
}

async fn end_overdue(app: &App) -> Result<usize, StoreError> {
    let mut changed = 0;
    loop {
        let overdue = app
            .store
            .overdue_streams(app.clock.now(), SWEEP_BATCH)
            .await?;
        let count = overdue.len();
        let mut changed_now = 0;
        for stream in &overdue {
            match end_at_deadline(app, stream).await {
                Ok(true) => changed_now += 1,
                Ok(false) => {}
                Err(err) => {
                    tracing::error!(stream_id = %stream.id, error = %err, "deadline sweep could not end a stream");
                }
            }
        }
        changed += changed_now;
        if count < SWEEP_BATCH || changed_now == 0 {
            return Ok(changed);
        }
    }
}

/// The transition of `stream`'s passed deadline, with its clean-up. It happens as of the
/// deadline itself, however late the timer or the sweep runs (never later than now): a
/// stream's `ended_at`, and the live time analytics count, is its deadline.
async fn end_at_deadline(app: &App, stream: &Stream) -> Result<bool, StoreError> {
    let Some(transition) = stream.deadline_transition() else {
        return Ok(false);
    };
    let now = app.clock.now();
    let at = stream.deadline.map_or(now, |deadline| deadline.min(now));
    let Some(applied) = super::apply_transition(app, stream, transition, at, None)
        .await?
        .applied()
    else {
        return Ok(false);
    };
    tracing::info!(stream_id = %applied.stream.id, status = applied.stream.status.as_str(), "deadline reached");
    streams::after_final(app, &applied).await;
    Ok(true)
}
