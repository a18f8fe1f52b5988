//! Room cleanup (docs/lifecycle.md, "Room cleanup"): a finished stream's room is deleted until the
//! room provider confirms it gone. Every attempt is driven by the pending record that the finishing
//! transition wrote in its atomic step: the process that made the transition tries at once, and the
//! sweep tries every record whose retry is due, so a provider outage, a timeout or a killed process
//! only delays the deletion.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use tokio::task::JoinSet;

use crate::app::App;
use crate::metrics::{self, Metric};
use hosting_domain::error::{RoomError, StoreError};
use hosting_domain::stream::EgressKind;
use hosting_domain::{RoomCleanup, Stream};

/// Longest wait for one `DeleteRoom`; past it the attempt counts as failed and is retried.
pub const DELETE_TIMEOUT: Duration = Duration::from_secs(5);
/// Cleanups attempted per sweep, and at once: a provider that hangs on every call holds a
/// sweep for at most `SWEEP_BATCH / SWEEP_CONCURRENCY` deletion timeouts (20 s).
const SWEEP_BATCH: usize = 40;
const SWEEP_CONCURRENCY: usize = 10;

/// The cleanup a transition that finishes `stream` at `at` writes with it, first due once
/// the process making the transition has had its own attempt: none for a stream without a
/// room.
pub fn for_finished(app: &App, stream: &Stream, at: DateTime<Utc>) -> Option<RoomCleanup> {
    let cleanup = RoomCleanup::for_finished(stream, at, app.config.launch_timeout)?;
    Some(RoomCleanup {
        due_at: at + delta(DELETE_TIMEOUT),
        ..cleanup
    })
}

/// One attempt at `cleanup` as it is stored: deletes the room, then settles the record (done,
/// held for a launch still in flight, or due again later). `true` once the cleanup is done.
pub async fn attempt(app: &App, cleanup: &RoomCleanup) -> Result<bool, StoreError> {
    attempt_within(app, cleanup, DELETE_TIMEOUT).await
}

/// [`attempt`], waiting at most `limit` for the provider.
async fn attempt_within(
    app: &App,
    cleanup: &RoomCleanup,
    limit: Duration,
) -> Result<bool, StoreError> {
    let deleted = match &app.rooms {
        // Without a provider no room was ever created.
        None => Ok(()),
        Some(rooms) => stop_then_delete(rooms.as_ref(), cleanup, limit).await,
    };
    let now = app.clock.now();
    match deleted {
        Ok(()) => {
            let held = cleanup.confirmed(now);
            if held.is_none() && cleanup.erase_keys {
                // The egress is stopped and the stream over: its stream keys go before the
                // record does, so a failure here leaves the record to try again.
                app.stream_keys()
                    .erase_stream_keys(cleanup.stream_id)
                    .await?;
            }
            app.room_cleanups()
                .settle_room_cleanup(cleanup, held.as_ref())
                .await?;
            if held.is_none() {
                tracing::info!(stream_id = %cleanup.stream_id, attempts = cleanup.attempts, "room deleted");
            }
            Ok(held.is_none())
        }
        Err(err) => {
            metrics::count(Metric::RoomCleanupRetries);
            let next = cleanup.failed(now);
            tracing::warn!(stream_id = %cleanup.stream_id, attempts = next.attempts, retry_at = %next.due_at, error = %err, "room deletion failed; retried");
            app.room_cleanups()
                .settle_room_cleanup(cleanup, Some(&next))
                .await?;
            Ok(false)
        }
    }
}

/// The stream's egress stopped (`StopEgress`), then its room deleted, each within `limit`.
async fn stop_then_delete(
    rooms: &dyn hosting_domain::ports::RoomProvider,
    cleanup: &RoomCleanup,
    limit: Duration,
) -> Result<(), RoomError> {
    let no_answer = |step: &str| {
        hosting_domain::ports::EgressError::Failed(format!(
            "{step}: no answer within {:.1} s",
            limit.as_secs_f64()
        ))
    };
    let mut egresses: Vec<String> = cleanup
        .egress_id
        .iter()
        .chain(&cleanup.file_egress_id)
        .cloned()
        .collect();
    if cleanup.erase_keys {
        // A stream that had destinations: any egress of its room still running, also one a
        // start made whose id was never recorded, is stopped too.
        let running = tokio::time::timeout(limit, rooms.running_egresses(&cleanup.room_name))
            .await
            .unwrap_or_else(|_| Err(no_answer("ListEgress")))
            .map_err(|err| RoomError(format!("egresses not listed: {err}")))?;
        for id in running {
            if !egresses.contains(&id) {
                egresses.push(id);
            }
        }
    }
    for egress_id in &egresses {
        tokio::time::timeout(limit, rooms.stop_egress(egress_id))
            .await
            .unwrap_or_else(|_| Err(no_answer("StopEgress")))
            .map_err(|err| RoomError(format!("egress not stopped: {err}")))?;
    }
    tokio::time::timeout(limit, rooms.delete_room(&cleanup.room_name))
        .await
        .unwrap_or_else(|_| {
            Err(RoomError(format!(
                "DeleteRoom: no answer within {:.1} s",
                limit.as_secs_f64()
            )))
        })
}

/// The finishing transition's own attempt, right after it, waiting at most `limit` (a
/// request's remaining time): failures are left to the sweep.
pub async fn attempt_after_transition(app: &App, cleanup: &RoomCleanup, limit: Duration) {
    if limit.is_zero() {
        return;
    }
    if let Err(err) = attempt_within(app, cleanup, limit.min(DELETE_TIMEOUT)).await {
        tracing::warn!(stream_id = %cleanup.stream_id, error = %err, "room cleanup not settled; the sweep retries it");
    }
}

/// A finished stream's room is in use again (an agent dispatched late, anyone joining): it is
/// deleted again, from a fresh pending record.
pub async fn seen_in_use(app: &App, stream: &Stream) -> Result<(), StoreError> {
    let now = app.clock.now();
    let Some(cleanup) = for_finished(app, stream, now) else {
        return Ok(());
    };
    tracing::warn!(stream_id = %stream.id, status = stream.status.as_str(), "room of a finished stream in use; deleted again");
    app.room_cleanups().put_room_cleanup(&cleanup).await?;
    attempt_after_transition(app, &cleanup, DELETE_TIMEOUT).await;
    Ok(())
}

/// The cleanup of a finished stream made again with egresses started after it finished
/// (`started`, by kind) to stop before its room is deleted.
pub async fn stop_with_room(
    app: &App,
    stream: &Stream,
    started: &[(EgressKind, String)],
) -> Result<(), StoreError> {
    let now = app.clock.now();
    let Some(mut cleanup) = for_finished(app, stream, now) else {
        return Ok(());
    };
    for (kind, egress_id) in started {
        match kind {
            EgressKind::Destinations => cleanup.egress_id = Some(egress_id.clone()),
            EgressKind::Recording => cleanup.file_egress_id = Some(egress_id.clone()),
        }
    }
    app.room_cleanups().put_room_cleanup(&cleanup).await?;
    attempt_after_transition(app, &cleanup, DELETE_TIMEOUT).await;
    Ok(())
}

/// Attempts the cleanups that are due; returns how many it completed. Reports how long the
/// oldest of them has been pending (zero when none is due), which the alarm watches.
pub async fn sweep(app: &App) -> Result<usize, StoreError> {
    let now = app.clock.now();
    let due = app
        .room_cleanups()
        .due_room_cleanups(now, SWEEP_BATCH)
        .await?;
    let oldest = due
        .iter()
        .map(|cleanup| now - cleanup.since)
        .max()
        .and_then(|age| age.to_std().ok())
        .unwrap_or_default();
    metrics::oldest_pending_room_cleanup_age(oldest);
    let mut done = 0;
    let mut attempts = JoinSet::new();
    for cleanup in due {
        if attempts.len() >= SWEEP_CONCURRENCY
            && let Some(finished) = attempts.join_next().await
        {
            done += tally(finished);
        }
        let app = app.clone();
        attempts.spawn(async move { attempt(&app, &cleanup).await });
    }
    while let Some(finished) = attempts.join_next().await {
        done += tally(finished);
    }
    Ok(done)
}

fn tally(finished: Result<Result<bool, StoreError>, tokio::task::JoinError>) -> usize {
    match finished {
        Ok(Ok(true)) => 1,
        Ok(Ok(false)) => 0,
        Ok(Err(err)) => {
            tracing::error!(error = %err, "room cleanup not settled; retried by the next sweep");
            0
        }
        Err(err) => {
            tracing::error!(error = %err, "room cleanup task failed");
            0
        }
    }
}

fn delta(duration: Duration) -> TimeDelta {
    TimeDelta::from_std(duration).unwrap_or(TimeDelta::MAX)
}
