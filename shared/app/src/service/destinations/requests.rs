//! The destination requests (docs/destinations.md, "While live" and "Test keys"): adding and
//! removing a destination of a preparing or live stream, and the test helper that fails one.

use serde_json::{Map, Value};
use uuid::Uuid;

use super::change;
use crate::app::App;
use crate::service::streams;
use hosting_domain::Caller;
use hosting_domain::destination::{
    Destination, DestinationStatus, MAX_DESTINATIONS, StreamKeys, new_destinations,
    parse_destination,
};
use hosting_domain::error::{ApiError, ApiResult};
use hosting_domain::ports::{EgressError, Outcome};
use hosting_domain::sealed::SecretScope;
use hosting_domain::stream::EGRESS_CALL_TIMEOUT;
use hosting_domain::{Stream, StreamStatus, TimerKind};

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
        super::opened_stream_keys(app, stream.id).await?
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
    // The repeat check of the body's checks, now that there is something to compare with.
    parse_destination(body, &existing, |platform| {
        streams::platform_permitted(&vertical, platform)
    })?;
    let (mut created, new_keys) = new_destinations(vec![checked]);
    let mut destination = created.remove(0);
    let (destination_id, key) = new_keys.0[0].clone();
    let sealed = app
        .secrets()
        .seal(&SecretScope::StreamKey(&destination_id), &key)
        .await?;
    let now = app.clock.now();
    let outcome = change(app, &stream, None, Some((&destination_id, &sealed)), |s| {
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
                // With no destinations' egress (a stream only recorded so far has the
                // recording's alone, to which LiveKit adds no output), one is owed.
                if s.egress.id.is_none() {
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
                    next.egress.supersede();
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
                s.with_destination_moved(
                    &destination_id,
                    DestinationStatus::Failed,
                    now,
                    Some(&error),
                )
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
        let keys = super::opened_stream_keys(app, stream.id).await?;
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
        s.status
            .is_active()
            .then(|| {
                s.with_destination_moved(destination_id, DestinationStatus::Removed, now, None)
            })
            .flatten()
    })
    .await?;
    moved(outcome, destination_id)
}

/// The destination as the change that moved it stored it; not found when nothing moved (the
/// stream or the destination had finished meanwhile).
fn moved(outcome: Outcome<(Stream, Stream)>, destination_id: &str) -> ApiResult<Destination> {
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
        (s.status == StreamStatus::Live)
            .then(|| {
                s.with_destination_moved(
                    destination_id,
                    DestinationStatus::Failed,
                    now,
                    Some(error),
                )
            })
            .flatten()
    })
    .await?;
    moved(outcome, destination_id)
}
