//! Destinations (docs/destinations.md): the egress that pushes a live stream to the brand's
//! channels, started, changed and followed. Every change is written to the stream before anything
//! acts on it, as the host's are: an owed egress start is claimed on the stream before it is
//! requested, so racing timers and sweeps request it once, and a process that dies in between
//! leaves the claim to lapse and the start to the next attempt. Stopping is the room cleanup's
//! first step (`rooms.rs`).

use uuid::Uuid;

use crate::app::App;
use crate::metrics::{self, Metric};
use crate::service::{rooms, streams};
use hosting_domain::destination::{
    Destination, DestinationStatus, MAX_EGRESS_RESTARTS, ReportedName, StreamKeys, match_report,
};
use hosting_domain::error::StoreError;
use hosting_domain::ports::{EgressError, EgressReport, Outcome, OutputState};
use hosting_domain::recording::NO_FILE;
use hosting_domain::stream::{EGRESS_CALL_TIMEOUT, EgressKind};
use hosting_domain::{Stream, StreamEvent, StreamStatus, TimerKind};

/// The stream's destination keys in the clear: the egress requests and LiveKit's reports on
/// them need them (docs/security.md, "Secrets at rest").
pub(crate) async fn opened_stream_keys(
    app: &App,
    stream_id: uuid::Uuid,
) -> Result<StreamKeys, StoreError> {
    let sealed = app.stream_keys().stream_keys(stream_id).await?;
    app.secrets().open_stream_keys(&sealed).await
}

/// Attempts at a change whose stream keeps changing under it.
const UPDATE_ATTEMPTS: usize = 8;

/// Applies `change` to the stream as stored, reading it again and recomputing when it changed
/// since it was read, with the events of the destinations it moves and `added_key` in the same
/// atomic step; the stream before and after. `Stale` when `change` has nothing to do.
pub(crate) async fn change(
    app: &App,
    stream: &Stream,
    dedupe: Option<&str>,
    added_key: Option<(&str, &hosting_domain::sealed::StoredSecret)>,
    change: impl Fn(&Stream) -> Option<Stream>,
) -> Result<Outcome<(Stream, Stream)>, StoreError> {
    let mut current = stream.clone();
    for _ in 0..UPDATE_ATTEMPTS {
        let Some(updated) = change(&current) else {
            return Ok(Outcome::Stale);
        };
        let now = app.clock.now();
        let events = StreamEvent::of_change(None, &current, &updated, now);
        match app
            .streams()
            .update_stream_destinations(&current, &updated, now, dedupe, &events, added_key)
            .await?
        {
            Outcome::Applied(stored) => {
                count_failures(&current, &stored);
                return Ok(Outcome::Applied((current, stored)));
            }
            Outcome::Duplicate => return Ok(Outcome::Duplicate),
            Outcome::Stale => match app.streams().get_stream(current.id).await? {
                // This very change, applied by an attempt whose answer was lost.
                Some(fresh)
                    if fresh.revision == updated.revision
                        && fresh.destinations == updated.destinations
                        && fresh.egress == updated.egress =>
                {
                    return Ok(Outcome::Applied((current, fresh)));
                }
                Some(fresh) => current = fresh,
                None => return Ok(Outcome::Stale),
            },
        }
    }
    Err(StoreError::Backend(format!(
        "stream {}: it kept changing while its destinations changed",
        stream.id
    )))
}

/// Counts the destinations that turned `failed` between `before` and `after`.
pub(crate) fn count_failures(before: &Stream, after: &Stream) {
    for destination in after.evented_destination_changes(before) {
        if destination.status == DestinationStatus::Failed {
            metrics::count(Metric::DestinationFailures);
        }
    }
}

/// An attempt at the egress start a live stream is owed (going live, a restart, a destination
/// added with none running): whichever of its two egresses is missing, the destinations' and
/// the recording's, each its own `StartRoomCompositeEgress`; `true` when this call claimed it.
pub async fn start_owed(app: &App, stream: &Stream) -> Result<bool, StoreError> {
    let now = app.clock.now();
    let Outcome::Applied((_, claimed)) = change(app, stream, None, None, |s| {
        s.with_egress_start_claimed(now)
    })
    .await?
    else {
        return Ok(false);
    };
    // Should this process die in the attempt, the claim lapses and the timer or the sweep
    // makes the next one.
    streams::schedule_kinds(app, &claimed, &[TimerKind::EgressStart]).await;
    let keys = opened_stream_keys(app, claimed.id).await?;
    let (sent, urls): (Vec<String>, Vec<String>) = if claimed.egress.id.is_none() {
        claimed
            .destinations
            .iter()
            .filter(|d| d.in_egress())
            .filter_map(|d| Some((d.destination_id.clone(), keys.output_url(d)?)))
            .unzip()
    } else {
        Default::default()
    };
    let file = claimed
        .egress
        .recording
        .as_ref()
        .and_then(|r| r.file_to_start())
        .map(|f| f.key.clone());
    if urls.is_empty() && file.is_none() {
        // Every destination was removed or failed meanwhile, or airs already, and nothing
        // is left to record: nothing to start.
        change(app, &claimed, None, None, |s| {
            let mut next = s.clone();
            next.egress.due_at = None;
            next.egress.since = None;
            next.egress.attempts = 0;
            next.revision += 1;
            (s.egress.due_at.is_some()).then_some(next)
        })
        .await?;
        return Ok(true);
    }
    let mut started: Vec<(EgressKind, String)> = Vec::with_capacity(2);
    let mut failure = None;
    let requests = [
        (EgressKind::Destinations, urls, None),
        (EgressKind::Recording, Vec::new(), file),
    ];
    for (kind, urls, file) in requests {
        if urls.is_empty() && file.is_none() {
            continue;
        }
        match start_one(app, &claimed, urls, file.as_deref()).await {
            Ok(egress_id) => {
                metrics::count(Metric::EgressStarts);
                started.push((kind, egress_id));
            }
            Err(err) => {
                failure.get_or_insert(err);
            }
        }
    }
    let retry_for = app.config.egress_start_retry;
    // What started is read back from LiveKit from one reconcile period on, whatever it reports.
    let check_at = app.clock.now()
        + chrono::TimeDelta::from_std(app.config.egress_reconcile).unwrap_or_default();
    let kept = change(app, &claimed, None, None, |s| {
        let mut next = match &failure {
            None => s.with_egresses_started(&started),
            Some(_) => s.with_egress_start_failed(app.clock.now(), retry_for, &started),
        }?;
        if !started.is_empty() && next.egress.check_at.is_none_or(|at| at > check_at) {
            next.egress.check_at = Some(check_at);
        }
        Some(next)
    })
    .await;
    let kept = match kept {
        Ok(kept) => kept,
        Err(err) => {
            // Not recorded: the next attempt starts others, so these are stopped (should that
            // fail too, the room's cleanup stops every egress of the room).
            if let Some(rooms) = &app.rooms {
                for (_, egress_id) in &started {
                    let _ = tokio::time::timeout(EGRESS_CALL_TIMEOUT, rooms.stop_egress(egress_id))
                        .await;
                }
            }
            return Err(err);
        }
    };
    let Outcome::Applied((_, live)) = kept else {
        // The stream finished while they started: stopped with its room.
        if !started.is_empty() {
            stop_with_room(app, claimed.id, &started).await?;
        }
        return Ok(true);
    };
    for (kind, egress_id) in &started {
        tracing::info!(stream_id = %live.id, egress_id = %egress_id, kind = ?kind, destinations = sent.len(), "egress started");
    }
    if let Some(err) = failure {
        let error = keys.redact(&err.to_string(), &claimed.destinations);
        if live.egress.due_at.is_none() {
            metrics::count(Metric::EgressStartFailures);
            tracing::error!(stream_id = %live.id, error = %error, "egress start gave up: what it was for failed with egress_unavailable");
        } else {
            tracing::warn!(stream_id = %live.id, error = %error, retry_at = ?live.egress.due_at, "egress start failed; retried");
            streams::schedule_kinds(app, &live, &[TimerKind::EgressStart]).await;
        }
    }
    if let Some((_, egress_id)) = started
        .iter()
        .find(|(kind, _)| *kind == EgressKind::Destinations)
    {
        reconcile_outputs(app, &live, egress_id, &sent).await?;
    }
    Ok(true)
}

/// One `StartRoomCompositeEgress` of the stream's room, pushing to `urls` or writing `file`.
async fn start_one(
    app: &App,
    stream: &Stream,
    urls: Vec<String>,
    file: Option<&str>,
) -> Result<String, EgressError> {
    match (&app.rooms, &stream.room_name) {
        (Some(rooms), Some(room)) => {
            tokio::time::timeout(EGRESS_CALL_TIMEOUT, rooms.start_egress(room, urls, file))
                .await
                .unwrap_or_else(|_| {
                    Err(EgressError::Failed(format!(
                        "StartRoomCompositeEgress: no answer within {} s",
                        EGRESS_CALL_TIMEOUT.as_secs()
                    )))
                })
        }
        _ => Err(EgressError::Failed(
            "no room provider is configured".to_owned(),
        )),
    }
}

/// After a start: destinations added while it was in flight are added to the egress, and those
/// removed meanwhile are taken out of it (`UpdateStream`), so the egress pushes to exactly the
/// destinations that are `starting` or `active`. An addition LiveKit refuses fails its
/// destination.
async fn reconcile_outputs(
    app: &App,
    stream: &Stream,
    egress_id: &str,
    sent: &[String],
) -> Result<(), StoreError> {
    let added: Vec<&Destination> = stream
        .destinations
        .iter()
        .filter(|d| d.in_egress() && !sent.contains(&d.destination_id))
        .collect();
    let removed: Vec<&Destination> = stream
        .destinations
        .iter()
        .filter(|d| d.status == DestinationStatus::Removed && sent.contains(&d.destination_id))
        .collect();
    let Some(rooms) = app
        .rooms
        .as_ref()
        .filter(|_| !added.is_empty() || !removed.is_empty())
    else {
        return Ok(());
    };
    let keys = opened_stream_keys(app, stream.id).await?;
    let urls = |list: &[&Destination]| -> Vec<String> {
        list.iter().filter_map(|d| keys.output_url(d)).collect()
    };
    let updated = tokio::time::timeout(
        EGRESS_CALL_TIMEOUT,
        rooms.update_egress_outputs(egress_id, urls(&added), urls(&removed)),
    )
    .await
    .unwrap_or_else(|_| {
        Err(EgressError::Failed(format!(
            "UpdateStream: no answer within {} s",
            EGRESS_CALL_TIMEOUT.as_secs()
        )))
    });
    let Err(err) = updated else {
        return Ok(());
    };
    let error = keys.redact(&err.to_string(), &stream.destinations);
    tracing::warn!(stream_id = %stream.id, error = %error, "outputs changed during the egress start not applied to it");
    let now = app.clock.now();
    let added: Vec<String> = added.iter().map(|d| d.destination_id.clone()).collect();
    change(app, stream, None, None, |s| {
        let mut next = s.clone();
        let mut moved = false;
        for destination in &mut next.destinations {
            if added.contains(&destination.destination_id) {
                moved |= destination.advance(DestinationStatus::Failed, now, Some(&error));
            }
        }
        moved.then(|| {
            next.revision += 1;
            next
        })
    })
    .await?;
    Ok(())
}

/// Egresses started for a stream that finished meanwhile: its room's cleanup, made again
/// with them to stop first.
async fn stop_with_room(
    app: &App,
    stream_id: Uuid,
    started: &[(EgressKind, String)],
) -> Result<(), StoreError> {
    let Some(stream) = app.streams().get_stream(stream_id).await? else {
        return Ok(());
    };
    if stream.status.is_active() {
        return Ok(());
    }
    tracing::warn!(stream_id = %stream.id, "egress started for a finished stream; stopped with its room");
    rooms::stop_with_room(app, &stream, started).await
}

/// LiveKit's report on an egress (`egress_started`, `egress_updated`, `egress_ended`): each
/// output's state moves its destination forward, and an egress that ended while the stream is
/// live is started again for the destinations not yet final, at most
/// [`MAX_EGRESS_RESTARTS`] times.
pub async fn apply_report(
    app: &App,
    stream: &Stream,
    report: &EgressReport,
    dedupe: Option<&str>,
) -> Result<Outcome<()>, StoreError> {
    if stream.destinations.is_empty() && stream.egress.recording.is_none() {
        return Ok(Outcome::Stale);
    }
    let keys = opened_stream_keys(app, stream.id).await?;
    let now = app.clock.now();
    let outcome = change(app, stream, dedupe, None, |s| {
        reported(s, report, &keys, now)
    })
    .await?;
    if let Outcome::Applied((before, after)) = &outcome
        && after.egress.due_at.is_some()
        && before.egress.due_at.is_none()
    {
        if report.limit_reached {
            tracing::info!(stream_id = %after.id, "egress reached LiveKit's time limit; started again");
        } else {
            tracing::warn!(stream_id = %after.id, restarts = after.egress.restarts, "egress ended while live; started again");
        }
        streams::schedule_kinds(app, after, &[TimerKind::EgressStart]).await;
    }
    Ok(outcome.map(drop))
}

/// The file of the egress that ended in `report`: `ready` when it completed, or reached
/// LiveKit's time limit, with a file (`duration` in nanoseconds, shown in whole seconds), else
/// `failed` with its error; `true` when it moved.
fn recorded(
    next: &mut Stream,
    report: &EgressReport,
    keys: &StreamKeys,
    now: chrono::DateTime<chrono::Utc>,
) -> bool {
    let written = (report.complete || report.limit_reached)
        .then(|| report.files.first())
        .flatten()
        .map(|file| (file.size_bytes, file.duration_nanos / 1_000_000_000));
    let error = report
        .error
        .as_deref()
        .map(|e| keys.redact(e, &next.destinations))
        .unwrap_or_else(|| NO_FILE.to_owned());
    next.recording_ended(&report.egress_id, written, &error, now)
}

/// Whether the outputs `report` names are this stream's to follow: those of its destinations'
/// egress, or of one whose start is in flight (its id not recorded yet) that the stream never
/// used before (docs/destinations.md, "Lost, late and early reports").
fn reports_on_current_outputs(stream: &Stream, report: &EgressReport) -> bool {
    let id = report.egress_id.as_str();
    match stream.egress.id.as_deref() {
        Some(current) => current == id,
        None => {
            !stream.egress.previous.iter().any(|p| p == id)
                && !stream
                    .egress
                    .recording
                    .as_ref()
                    .is_some_and(|r| r.files.iter().any(|f| f.egress_id.as_deref() == Some(id)))
        }
    }
}

/// The stream after `report`, when it changes anything.
fn reported(
    stream: &Stream,
    report: &EgressReport,
    keys: &StreamKeys,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Stream> {
    let mut next = stream.clone();
    let mut changed = false;
    // An egress's final report writes every output `FAILED` when the egress failed and
    // `FINISHED` when it ended otherwise (livekit/egress `pkg/pipeline/controller.go`): that is
    // the egress's end, which the restart rule below decides on while the show is live. Only
    // an egress that completed (stopped on purpose) ends its outputs.
    let outputs_are_the_egress_end =
        report.ended && !report.complete && stream.status == StreamStatus::Live;
    if reports_on_current_outputs(stream, report) && !outputs_are_the_egress_end {
        // LiveKit names an output by its redacted URL (docs/destinations.md, "What LiveKit
        // reports"); final destinations have nothing left to move.
        let names: Vec<(usize, ReportedName)> = stream
            .destinations
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.status.is_final())
            .filter_map(|(index, d)| Some((index, keys.reported_name(d)?)))
            .collect();
        for output in &report.outputs {
            let Some(index) = match_report(&output.url, &names) else {
                continue;
            };
            let error = output
                .error
                .as_deref()
                .map(|e| keys.redact(e, &stream.destinations));
            let destination = &mut next.destinations[index];
            changed |= match output.state {
                OutputState::Active => destination.advance(DestinationStatus::Active, now, None),
                OutputState::Failed => destination.advance(
                    DestinationStatus::Failed,
                    now,
                    Some(error.as_deref().unwrap_or("the output failed")),
                ),
                OutputState::Finished => destination.advance(DestinationStatus::Ended, now, None),
                OutputState::Other => false,
            };
        }
    }
    if report.ended {
        changed |= recorded(&mut next, report, keys, now);
    }
    if !report.ended || stream.status != StreamStatus::Live {
        return changed.then(|| {
            next.revision += 1;
            next
        });
    }
    if let Some(kind) = stream.egress_kind(&report.egress_id) {
        let error = report
            .error
            .as_deref()
            .map(|e| keys.redact(e, &stream.destinations));
        changed |= egress_ended(&mut next, kind, report.limit_reached, error.as_deref(), now);
    }
    changed.then(|| {
        next.revision += 1;
        next
    })
}

/// What the end of the stream's current egress of `kind` does while it is live (its file's
/// result already applied): the destinations' egress is started again for the destinations not
/// yet final, at most [`MAX_EGRESS_RESTARTS`] times (then they fail with `error`); the
/// recording's goes on in a new file, as often; an end at LiveKit's time limit is started
/// again at once and counts toward neither. `true` when it changed the stream.
pub(crate) fn egress_ended(
    next: &mut Stream,
    kind: EgressKind,
    limit_reached: bool,
    error: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
) -> bool {
    if next.status != StreamStatus::Live {
        return false;
    }
    match kind {
        EgressKind::Destinations => {
            next.egress.supersede();
            if !next.destinations.iter().any(Destination::in_egress) {
                return true;
            }
            if limit_reached {
                // Not a failure: started again at once for what it carried, uncounted.
                next.owe_egress_start(now);
            } else if next.egress.restarts < MAX_EGRESS_RESTARTS {
                next.egress.restarts += 1;
                next.owe_egress_start(now);
            } else {
                let error = error.unwrap_or("the egress ended");
                for destination in &mut next.destinations {
                    if destination.in_egress() {
                        destination.advance(DestinationStatus::Failed, now, Some(error));
                    }
                }
            }
            true
        }
        EgressKind::Recording => {
            // Its file has its result; the recording goes on in a new one, unless its egress
            // ended for good too often.
            if !limit_reached && next.egress.file_restarts >= MAX_EGRESS_RESTARTS {
                return false;
            }
            if !limit_reached {
                next.egress.file_restarts += 1;
            }
            next.recording_restarted();
            next.owe_egress_start(now);
            true
        }
    }
}

mod reconcile;
mod requests;
pub use reconcile::{ActiveEgresses, check};
pub use requests::{add, fail_for_test, remove};
