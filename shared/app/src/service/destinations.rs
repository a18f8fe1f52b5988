//! Destinations (docs/destinations.md): the egress that pushes a live stream to the brand's
//! channels, started, changed and followed. Every change is written to the stream before anything
//! acts on it, as the host's are: an owed egress start is claimed on the stream before it is
//! requested, so racing timers and sweeps request it once, and a process that dies in between
//! leaves the claim to lapse and the start to the next attempt. Stopping is the room cleanup's
//! first step (`rooms.rs`).

use serde_json::{Map, Value};
use uuid::Uuid;

use crate::app::App;
use crate::metrics::{self, Metric};
use crate::service::{rooms, streams};
use hosting_domain::Caller;
use hosting_domain::destination::{
    Destination, DestinationStatus, EGRESS_CALL_TIMEOUT, MAX_DESTINATIONS, MAX_EGRESS_RESTARTS,
    StreamKeys, new_destinations, parse_destination,
};
use hosting_domain::error::{ApiError, ApiResult, StoreError};
use hosting_domain::ports::{EgressError, EgressReport, Outcome, OutputState};
use hosting_domain::{Stream, StreamEvent, StreamStatus, TimerKind};

/// Attempts at a change whose stream keeps changing under it.
const UPDATE_ATTEMPTS: usize = 8;

/// Applies `change` to the stream as stored, reading it again and recomputing when it changed
/// since it was read, with the events of the destinations it moves and `added_key` in the same
/// atomic step; the stream before and after. `Stale` when `change` has nothing to do.
pub(crate) async fn change(
    app: &App,
    stream: &Stream,
    dedupe: Option<&str>,
    added_key: Option<(&str, &str)>,
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
/// added with none running); `true` when this call claimed it.
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
    let keys = app.streams().stream_keys(claimed.id).await?;
    let urls: Vec<String> = claimed
        .destinations
        .iter()
        .filter(|d| d.in_egress())
        .filter_map(|d| keys.output_url(d))
        .collect();
    if urls.is_empty() {
        // Every destination was removed or failed meanwhile: nothing to start.
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
    let started = match (&app.rooms, &claimed.room_name) {
        (Some(rooms), Some(room)) => {
            tokio::time::timeout(EGRESS_CALL_TIMEOUT, rooms.start_egress(room, urls))
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
    };
    match started {
        Ok(egress_id) => {
            metrics::count(Metric::EgressStarts);
            let kept = change(app, &claimed, None, None, |s| {
                s.with_egress_started(&egress_id)
            })
            .await;
            let kept = match kept {
                Ok(kept) => kept,
                Err(err) => {
                    // Not recorded: the next attempt starts another, so this one is stopped
                    // (should that fail too, the room's cleanup stops every egress of the room).
                    if let Some(rooms) = &app.rooms {
                        let _ = tokio::time::timeout(
                            EGRESS_CALL_TIMEOUT,
                            rooms.stop_egress(&egress_id),
                        )
                        .await;
                    }
                    return Err(err);
                }
            };
            match kept {
                Outcome::Applied((_, live)) => {
                    tracing::info!(stream_id = %live.id, egress_id = %egress_id, destinations = live.destinations.iter().filter(|d| d.in_egress()).count(), "egress started");
                }
                // The stream finished while the egress started: stopped with its room.
                _ => stop_with_room(app, claimed.id, &egress_id).await?,
            }
        }
        Err(err) => {
            let error = keys.redact(&err.to_string(), &claimed.destinations);
            let retry_for = app.config.egress_start_retry;
            let outcome = change(app, &claimed, None, None, |s| {
                s.with_egress_start_failed(app.clock.now(), retry_for)
            })
            .await?;
            if let Outcome::Applied((_, after)) = &outcome {
                if after.egress.due_at.is_none() {
                    metrics::count(Metric::EgressStartFailures);
                    tracing::error!(stream_id = %after.id, error = %error, "egress start gave up: destinations failed with egress_unavailable");
                } else {
                    tracing::warn!(stream_id = %after.id, error = %error, retry_at = ?after.egress.due_at, "egress start failed; retried");
                    streams::schedule_kinds(app, after, &[TimerKind::EgressStart]).await;
                }
            }
        }
    }
    Ok(true)
}

/// An egress started for a stream that finished meanwhile: its room's cleanup, made again
/// with the egress to stop first.
async fn stop_with_room(app: &App, stream_id: Uuid, egress_id: &str) -> Result<(), StoreError> {
    let Some(stream) = app.streams().get_stream(stream_id).await? else {
        return Ok(());
    };
    if stream.status.is_active() {
        return Ok(());
    }
    let stream = Stream {
        egress: hosting_domain::destination::Egress {
            id: Some(egress_id.to_owned()),
            ..stream.egress.clone()
        },
        ..stream
    };
    tracing::warn!(stream_id = %stream.id, "egress started for a finished stream; stopped with its room");
    rooms::seen_in_use(app, &stream).await
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
    if stream.destinations.is_empty() {
        return Ok(Outcome::Stale);
    }
    let keys = app.streams().stream_keys(stream.id).await?;
    let now = app.clock.now();
    let outcome = change(app, stream, dedupe, None, |s| {
        reported(s, report, &keys, now)
    })
    .await?;
    if let Outcome::Applied((before, after)) = &outcome
        && after.egress.due_at.is_some()
        && before.egress.due_at.is_none()
    {
        tracing::warn!(stream_id = %after.id, restarts = after.egress.restarts, "egress ended while live; started again");
        streams::schedule_kinds(app, after, &[TimerKind::EgressStart]).await;
    }
    Ok(outcome.map(drop))
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
    for output in &report.outputs {
        let matched = stream
            .destinations
            .iter()
            .position(|d| keys.output_url(d).as_deref() == Some(output.url.as_str()));
        let Some(index) = matched else { continue };
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
    let current_egress = stream.egress.id.as_deref() == Some(report.egress_id.as_str());
    if report.ended && current_egress && stream.status == StreamStatus::Live {
        changed = true;
        next.egress.id = None;
        if next.destinations.iter().any(Destination::in_egress) {
            if next.egress.restarts < MAX_EGRESS_RESTARTS {
                next.egress.restarts += 1;
                next.owe_egress_start(now);
            } else {
                let error = report
                    .error
                    .as_deref()
                    .map(|e| keys.redact(e, &stream.destinations))
                    .unwrap_or_else(|| "the egress ended".to_owned());
                for destination in &mut next.destinations {
                    if destination.in_egress() {
                        destination.advance(DestinationStatus::Failed, now, Some(&error));
                    }
                }
            }
        }
    }
    changed.then(|| {
        next.revision += 1;
        next
    })
}

/// The stream of `id` a destination request may act on: the caller's, `preparing` or `live`.
async fn open_stream(app: &App, caller: &Caller, id: Option<Uuid>) -> ApiResult<Stream> {
    let id = id.ok_or(ApiError::NotFound)?;
    streams::find_own(app, caller, id)
        .await
        .filter(|s| s.status.is_active())
        .ok_or(ApiError::NotFound)
}

/// `POST /streams/{id}/destinations`: the body's checks, then the stream's, then the count and
/// repeats. `pending` while preparing; live, `starting` and added to the running egress (or a
/// new one), or `active` on a test stream.
pub async fn add(
    app: &App,
    caller: &Caller,
    id: Option<Uuid>,
    body: &Map<String, Value>,
) -> ApiResult<Destination> {
    let vertical = caller.brand.vertical.clone();
    // The shape, missing fields and platform first, with no repeat to compare yet.
    let checked = parse_destination(body, &[], |platform| {
        streams::platform_permitted(&vertical, platform)
    })?;
    let stream = open_stream(app, caller, id).await?;
    if stream.counted_destinations() >= MAX_DESTINATIONS {
        return Err(ApiError::InvalidFields(format!(
            "A stream has at most {MAX_DESTINATIONS} destinations."
        )));
    }
    let keys = if stream.destinations.is_empty() {
        StreamKeys::default()
    } else {
        app.streams().stream_keys(stream.id).await?
    };
    let existing: Vec<(String, String)> = stream
        .destinations
        .iter()
        .filter(|d| d.status != DestinationStatus::Removed)
        .filter_map(|d| {
            Some((
                d.ingest_url.clone(),
                keys.get(&d.destination_id)?.to_owned(),
            ))
        })
        .collect();
    if existing
        .iter()
        .any(|(url, key)| (url, key) == (&checked.ingest_url, &checked.stream_key))
    {
        return Err(ApiError::InvalidFields(
            "ingest_url and stream_key repeat another destination's.".into(),
        ));
    }
    let (mut created, new_keys) = new_destinations(vec![checked]);
    let mut destination = created.remove(0);
    let (destination_id, key) = new_keys.0[0].clone();
    let now = app.clock.now();
    let outcome = change(app, &stream, None, Some((&destination_id, &key)), |s| {
        if !s.status.is_active() || s.counted_destinations() >= MAX_DESTINATIONS {
            return None;
        }
        let mut next = s.clone();
        let mut added = destination.clone();
        if s.status == StreamStatus::Live {
            if s.test {
                added.advance(DestinationStatus::Active, now, None);
            } else {
                added.advance(DestinationStatus::Starting, now, None);
                if s.egress.id.is_none() && s.egress.due_at.is_none() {
                    next.owe_egress_start(now);
                }
            }
        }
        next.destinations.push(added);
        next.revision += 1;
        Some(next)
    })
    .await?;
    let Outcome::Applied((_, stored)) = outcome else {
        // It finished, or filled up, between the read and the write.
        return Err(ApiError::NotFound);
    };
    destination = stored
        .destination(&destination_id)
        .cloned()
        .unwrap_or(destination);
    if stored.egress.due_at.is_some() && stored.egress.id.is_none() {
        streams::schedule_kinds(app, &stored, &[TimerKind::EgressStart]).await;
    }
    if destination.status == DestinationStatus::Starting
        && let Some(egress_id) = stored.egress.id.clone()
    {
        destination = add_to_egress(app, &stored, &egress_id, destination, &key).await?;
    }
    Ok(destination)
}

/// `UpdateStream` with the new output; a failure fails the destination with its reason, and an
/// egress LiveKit no longer knows is started anew.
async fn add_to_egress(
    app: &App,
    stream: &Stream,
    egress_id: &str,
    destination: Destination,
    key: &str,
) -> ApiResult<Destination> {
    let url = hosting_domain::destination::output_url(&destination.ingest_url, key);
    let updated = match &app.rooms {
        Some(rooms) => tokio::time::timeout(
            EGRESS_CALL_TIMEOUT,
            rooms.update_egress_outputs(egress_id, vec![url], Vec::new()),
        )
        .await
        .unwrap_or_else(|_| {
            Err(EgressError::Failed(format!(
                "UpdateStream: no answer within {} s",
                EGRESS_CALL_TIMEOUT.as_secs()
            )))
        }),
        None => Err(EgressError::Failed("no room provider is configured".into())),
    };
    let now = app.clock.now();
    let destination_id = destination.destination_id.clone();
    let outcome = match updated {
        Ok(()) => return Ok(destination),
        Err(EgressError::Gone) => {
            change(app, stream, None, None, |s| {
                (s.status == StreamStatus::Live
                    && s.egress.id.as_deref() == Some(egress_id)
                    && s.egress.due_at.is_none())
                .then(|| {
                    let mut next = s.clone();
                    next.owe_egress_start(now);
                    next.revision += 1;
                    next
                })
            })
            .await?
        }
        Err(EgressError::Failed(error)) => {
            let keys = StreamKeys(vec![(destination_id.clone(), key.to_owned())]);
            let error = keys.redact(&error, std::slice::from_ref(&destination));
            tracing::warn!(stream_id = %stream.id, destination_id = %destination_id, error = %error, "output not added to the egress");
            change(app, stream, None, None, |s| {
                let mut next = s.clone();
                let moved = next.destination_mut(&destination_id)?.advance(
                    DestinationStatus::Failed,
                    now,
                    Some(&error),
                );
                moved.then(|| {
                    next.revision += 1;
                    next
                })
            })
            .await?
        }
    };
    if let Outcome::Applied((_, after)) = &outcome
        && after.egress.due_at.is_some()
    {
        streams::schedule_kinds(app, after, &[TimerKind::EgressStart]).await;
    }
    let stored = match outcome {
        Outcome::Applied((_, after)) => Some(after),
        _ => app.streams().get_stream(stream.id).await?,
    };
    Ok(stored
        .and_then(|s| s.destination(&destination_id).cloned())
        .unwrap_or(destination))
}

/// `DELETE /streams/{id}/destinations/{destination_id}`: `removed`, after `UpdateStream` takes
/// its output out of the running egress.
pub async fn remove(
    app: &App,
    caller: &Caller,
    id: Option<Uuid>,
    destination_id: &str,
) -> ApiResult<Destination> {
    let stream = open_stream(app, caller, id).await?;
    let destination = stream
        .destination(destination_id)
        .filter(|d| !d.status.is_final())
        .cloned()
        .ok_or(ApiError::NotFound)?;
    if destination.in_egress()
        && !stream.test
        && let (Some(egress_id), Some(rooms)) = (&stream.egress.id, &app.rooms)
    {
        let keys = app.streams().stream_keys(stream.id).await?;
        if let Some(url) = keys.output_url(&destination) {
            let removed = tokio::time::timeout(
                EGRESS_CALL_TIMEOUT,
                rooms.update_egress_outputs(egress_id, Vec::new(), vec![url]),
            )
            .await;
            match removed {
                Ok(Ok(()) | Err(EgressError::Gone)) => {}
                Ok(Err(EgressError::Failed(error))) => {
                    let error = keys.redact(&error, &stream.destinations);
                    tracing::warn!(stream_id = %stream.id, destination_id, error = %error, "output not taken out of the egress; it ends with the egress");
                }
                Err(_) => {
                    tracing::warn!(stream_id = %stream.id, destination_id, "UpdateStream did not answer; the output ends with the egress");
                }
            }
        }
    }
    let now = app.clock.now();
    let outcome = change(app, &stream, None, None, |s| {
        if !s.status.is_active() {
            return None;
        }
        let mut next = s.clone();
        let moved =
            next.destination_mut(destination_id)?
                .advance(DestinationStatus::Removed, now, None);
        moved.then(|| {
            next.revision += 1;
            next
        })
    })
    .await?;
    match outcome {
        Outcome::Applied((_, stored)) => stored
            .destination(destination_id)
            .cloned()
            .ok_or(ApiError::NotFound),
        _ => Err(ApiError::NotFound),
    }
}

/// `POST /test_helpers/streams/{id}/destinations/{destination_id}/fail`: a live test stream's
/// destination turns `failed` with `error`.
pub async fn fail_for_test(
    app: &App,
    stream: &Stream,
    destination_id: &str,
    error: &str,
) -> ApiResult<Destination> {
    let now = app.clock.now();
    let outcome = change(app, stream, None, None, |s| {
        if s.status != StreamStatus::Live {
            return None;
        }
        let mut next = s.clone();
        let moved = next.destination_mut(destination_id)?.advance(
            DestinationStatus::Failed,
            now,
            Some(error),
        );
        moved.then(|| {
            next.revision += 1;
            next
        })
    })
    .await?;
    match outcome {
        Outcome::Applied((_, stored)) => stored
            .destination(destination_id)
            .cloned()
            .ok_or(ApiError::NotFound),
        _ => Err(ApiError::NotFound),
    }
}
