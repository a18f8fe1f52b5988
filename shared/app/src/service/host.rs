//! The AI host in the room (docs/lifecycle.md, "The show goes on"): agents joining and leaving,
//! dispatch retries while preparing and in a reconnect window, and the window itself. Every change
//! is stored before anything acts on it: a dispatch is claimed on the stream before it is made, and
//! a window is opened on the stream before the agent is dispatched again, so a process that dies in
//! between leaves the sweep and the timers what they need.

use crate::app::App;
use crate::metrics::{self, Metric};
use crate::service::streams;
use hosting_domain::error::StoreError;
use hosting_domain::host::Departure;
use hosting_domain::ports::{Outcome, ProviderEvent};
use hosting_domain::{Stream, TimerKind, Transition};

/// Attempts at a change whose stream keeps changing under it.
const UPDATE_ATTEMPTS: usize = 5;

/// Applies `change` to the stream as stored, reading it again and recomputing when it changed
/// since it was read; the stream it applied to and the result. `Stale` when `change` has
/// nothing to do.
async fn update(
    app: &App,
    stream: &Stream,
    dedupe: Option<&str>,
    change: impl Fn(&Stream) -> Option<Stream>,
) -> Result<Outcome<(Stream, Stream)>, StoreError> {
    let mut current = stream.clone();
    for _ in 0..UPDATE_ATTEMPTS {
        let Some(updated) = change(&current) else {
            return Ok(Outcome::Stale);
        };
        match app
            .streams()
            .update_stream_host(&current, &updated, app.clock.now(), dedupe)
            .await?
        {
            Outcome::Applied(stored) => return Ok(Outcome::Applied((current, stored))),
            Outcome::Duplicate => return Ok(Outcome::Duplicate),
            Outcome::Stale => match app.streams().get_stream(current.id).await? {
                // This very change, applied by an attempt whose answer was lost.
                Some(fresh) if same_host(&fresh, &updated) => {
                    return Ok(Outcome::Applied((current, fresh)));
                }
                Some(fresh) => current = fresh,
                None => return Ok(Outcome::Stale),
            },
        }
    }
    Err(StoreError::Backend(format!(
        "stream {}: it kept changing while its host changed",
        stream.id
    )))
}

/// Whether `a` and `b` are the same revision with the same host state.
fn same_host(a: &Stream, b: &Stream) -> bool {
    (a.status, a.revision, a.dispatches, a.next_dispatch_at)
        == (b.status, b.revision, b.dispatches, b.next_dispatch_at)
        && (a.host_lost_at, a.reconnect_until) == (b.host_lost_at, b.reconnect_until)
        && a.agents == b.agents
}

/// Dispatches the agent again when a retry is due: the retry is claimed on the stream (the
/// count of dispatches, the next retry time) before the dispatch is made, so racing sweeps and
/// timers dispatch once, and a dispatch that fails or never happens is simply the next retry's
/// to make. `true` when this call claimed one.
pub async fn dispatch_again(app: &App, stream: &Stream) -> Result<bool, StoreError> {
    let now = app.clock.now();
    let retry = app.config.dispatch_retry;
    let Outcome::Applied((_, claimed)) =
        update(app, stream, None, |s| s.with_dispatch_claimed(now, retry)).await?
    else {
        return Ok(false);
    };
    metrics::count(Metric::DispatchRetries);
    streams::schedule_kinds(app, &claimed, &[TimerKind::DispatchRetry]).await;
    let failure = match (&app.rooms, &claimed.room_name) {
        (Some(rooms), Some(room)) => match app.streams().stream_script(claimed.id).await {
            Ok(script) => rooms
                .dispatch_agent(room, &streams::agent_metadata(&claimed, script.as_deref()))
                .await
                .err()
                .map(|err| err.to_string()),
            Err(err) => Some(format!("its script could not be read: {err}")),
        },
        _ => Some("no room provider is configured".to_owned()),
    };
    match failure {
        None => {
            tracing::info!(stream_id = %claimed.id, status = claimed.status.as_str(), dispatches = claimed.dispatches, "agent dispatched again");
        }
        Some(error) => {
            metrics::count(Metric::DispatchRetryFailures);
            tracing::warn!(stream_id = %claimed.id, error = %error, next = ?claimed.next_dispatch_at, "dispatch retry failed");
        }
    }
    Ok(true)
}

/// An agent joined the room of a live stream: recorded, and an open reconnect window closed
/// (the stream goes on, no event).
pub async fn agent_joined(
    app: &App,
    stream: &Stream,
    participant: &str,
    dedupe: Option<&str>,
) -> Result<Outcome<()>, StoreError> {
    let outcome = update(app, stream, dedupe, |s| s.with_agent_joined(participant)).await?;
    if let Outcome::Applied((before, after)) = &outcome
        && before.host_lost_at.is_some()
        && after.host_lost_at.is_none()
    {
        metrics::count(Metric::HostReconnects);
        tracing::info!(stream_id = %after.id, "the host is back within its reconnect window");
        streams::cancel(
            app,
            after,
            &[TimerKind::DispatchRetry, TimerKind::ReconnectWindow],
        )
        .await;
    }
    Ok(outcome.map(drop))
}

/// An agent left the room of a live stream. While another agent is present, or when one with
/// its identity took its place, it is only recorded; otherwise its `disconnect_reason` decides:
/// it left (`host_left`), the room closed (`room_finished`), or it dropped, which opens a
/// reconnect window with the agent dispatched again at once.
pub async fn agent_left(
    app: &App,
    stream: &Stream,
    event: &ProviderEvent,
    dedupe: Option<&str>,
) -> Result<Outcome<()>, StoreError> {
    let participant = event.participant.as_str();
    let departure = Departure::from_disconnect_reason(event.disconnect_reason.as_deref());
    if stream.other_agent_present(participant)
        || departure == Departure::Replaced
        || stream.host_lost_at.is_some()
    {
        let outcome = update(app, stream, dedupe, |s| s.with_agent_gone(participant)).await?;
        return Ok(outcome.map(drop));
    }
    match departure {
        Departure::Left => finish(app, stream, Transition::HostLeft, dedupe).await,
        Departure::RoomClosed => finish(app, stream, Transition::RoomFinished, dedupe).await,
        Departure::Replaced | Departure::Dropped => {
            let now = app.clock.now();
            let dropped_at = event.created_at.unwrap_or(now);
            let window = app.config.reconnect_window;
            let outcome = update(app, stream, dedupe, |s| {
                if s.other_agent_present(participant) {
                    s.with_agent_gone(participant)
                } else {
                    s.with_window_opened(participant, dropped_at, window, now)
                }
            })
            .await?;
            if let Outcome::Applied((before, after)) = &outcome
                && before.host_lost_at.is_none()
                && after.host_lost_at.is_some()
            {
                metrics::count(Metric::HostDrops);
                tracing::warn!(stream_id = %after.id, reason = event.disconnect_reason.as_deref().unwrap_or(""), until = ?after.reconnect_until, "the host dropped: reconnect window open");
                streams::schedule_kinds(app, after, &[TimerKind::ReconnectWindow]).await;
                // At once: the window's first dispatch (or, for a drop reported late, its
                // lapse). Should this fail, the stored window and retry drive it.
                if let Err(err) = super::timers::act_on_due(app, after).await {
                    tracing::warn!(stream_id = %after.id, error = %err, "the host's first dispatch again failed; the sweep retries it");
                }
            }
            Ok(outcome.map(drop))
        }
    }
}

/// `transition`, ending a live stream, with its clean-up.
pub(crate) async fn finish(
    app: &App,
    stream: &Stream,
    transition: Transition,
    dedupe: Option<&str>,
) -> Result<Outcome<()>, StoreError> {
    let outcome = super::apply_transition(app, stream, transition, app.clock.now(), dedupe).await?;
    if let Outcome::Applied(applied) = &outcome {
        streams::after_final(app, applied).await;
    }
    Ok(outcome.map(drop))
}
