//! The AI host in the room (docs/lifecycle.md, "The show goes on"; docs/livekit.md, "One host"
//! and "Read-backs"): the host joining and leaving, dispatch retries while preparing and in a
//! reconnect window, the window itself, and the room read back from LiveKit. Every change is
//! stored before anything acts on it: a dispatch or a read-back is claimed on the stream before
//! LiveKit is called, and a window is opened on the stream before the host is dispatched again,
//! so a process that dies in between leaves the sweep and the timers what they need.

use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, Utc};

use crate::app::App;
use crate::metrics::{self, Metric};
use crate::service::streams;
use hosting_domain::error::StoreError;
use hosting_domain::host::Departure;
use hosting_domain::ports::{Outcome, ProviderEvent, RoomHost, ViewerChange};
use hosting_domain::{Stream, StreamStatus, TimerKind, Transition};

/// Attempts at a change whose stream keeps changing under it.
const UPDATE_ATTEMPTS: usize = 5;

/// A host as a webhook or a read-back names it: its participant id, and the identity
/// `RemoveParticipant` takes.
#[derive(Debug, Clone, Copy)]
pub struct Host<'a> {
    pub sid: &'a str,
    pub identity: &'a str,
}

impl<'a> Host<'a> {
    pub fn of_event(event: &'a ProviderEvent) -> Self {
        Host {
            sid: &event.participant,
            identity: &event.identity,
        }
    }

    fn of_room(host: &'a RoomHost) -> Self {
        Host {
            sid: &host.sid,
            identity: &host.identity,
        }
    }
}

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
        && (a.host_lost_at, a.reconnect_until, a.host_check_at)
            == (b.host_lost_at, b.reconnect_until, b.host_check_at)
        && a.agents == b.agents
}

/// Dispatches the host again when a retry is due. The retry is claimed on the stream (the count
/// of dispatches, the next retry time, the read-back after it) before LiveKit is called, so
/// racing sweeps and timers dispatch once, and a dispatch that fails or never happens is simply
/// the next retry's to make. Before dispatching, the room is read: a host already there is
/// taken as joined (its join was lost), a room LiveKit closed is created again with the host's
/// dispatch, and otherwise every earlier dispatch is deleted first, so one dispatch is the only
/// one (docs/livekit.md, "One host"). `true` when this call claimed one.
pub async fn dispatch_again(app: &App, stream: &Stream) -> Result<bool, StoreError> {
    let now = app.clock.now();
    let (retry, check) = (app.config.dispatch_retry, app.config.host_readback);
    let Outcome::Applied((_, claimed)) = update(app, stream, None, |s| {
        s.with_dispatch_claimed(now, retry, check)
    })
    .await?
    else {
        return Ok(false);
    };
    metrics::count(Metric::DispatchRetries);
    streams::schedule_kinds(
        app,
        &claimed,
        &[TimerKind::DispatchRetry, TimerKind::HostReadback],
    )
    .await;
    match redispatch(app, &claimed).await {
        Ok(Redispatch::Dispatched) => {
            tracing::info!(stream_id = %claimed.id, status = claimed.status.as_str(), dispatches = claimed.dispatches, "host dispatched again");
        }
        Ok(Redispatch::HostPresent) => {
            tracing::info!(stream_id = %claimed.id, "no dispatch: the host is in the room already");
        }
        Ok(Redispatch::RoomGone) => {
            tracing::info!(stream_id = %claimed.id, "no dispatch: LiveKit closed the room");
        }
        Err(error) => {
            metrics::count(Metric::DispatchRetryFailures);
            tracing::warn!(stream_id = %claimed.id, error = %error, next = ?claimed.next_dispatch_at, "dispatch retry failed");
        }
    }
    Ok(true)
}

/// What a claimed dispatch retry found and did.
enum Redispatch {
    Dispatched,
    HostPresent,
    RoomGone,
}

/// The claimed retry's calls to LiveKit; an error is the failure's text (its store errors
/// included: the next retry tries again).
async fn redispatch(app: &App, claimed: &Stream) -> Result<Redispatch, String> {
    let (Some(rooms), Some(room)) = (&app.rooms, &claimed.room_name) else {
        return Err("no room provider is configured".to_owned());
    };
    let presence = rooms
        .room_presence(room)
        .await
        .map_err(|err| err.to_string())?;
    let metadata = || async {
        match app.streams().stream_script(claimed.id).await {
            Ok(script) => Ok(streams::agent_metadata(claimed, script.as_deref())),
            Err(err) => Err(format!("its script could not be read: {err}")),
        }
    };
    match presence {
        Some(presence) => match presence.hosts.first() {
            Some(host) => {
                host_found(app, claimed, host)
                    .await
                    .map_err(|err| err.to_string())?;
                Ok(Redispatch::HostPresent)
            }
            None => {
                rooms
                    .delete_dispatches(room)
                    .await
                    .map_err(|err| err.to_string())?;
                rooms
                    .dispatch_agent(room, &metadata().await?)
                    .await
                    .map_err(|err| err.to_string())?;
                Ok(Redispatch::Dispatched)
            }
        },
        // A live stream's room closed during its window: the show is over.
        None if claimed.status == StreamStatus::Live => {
            room_gone(app, claimed)
                .await
                .map_err(|err| err.to_string())?;
            Ok(Redispatch::RoomGone)
        }
        // LiveKit closed a preparing stream's room (or never kept it): made again with the
        // stream's timeouts and the host's dispatch in it, as at the launch.
        None => {
            rooms
                .create_room(
                    room,
                    streams::room_lifetime(app, claimed),
                    &metadata().await?,
                )
                .await
                .map_err(|err| err.to_string())?;
            Ok(Redispatch::Dispatched)
        }
    }
}

/// What a host read-back did.
pub enum ReadBack {
    /// Another run had claimed it.
    NotClaimed,
    /// It applied what LiveKit reported (or the read failed): the stream is not as claimed.
    Applied,
    /// The claim was its only write: the stream as it now stands, for whatever else is due.
    Unchanged(Box<Stream>),
}

/// Reads the room back when its read-back is due: claimed on the stream first (the next one
/// set), then one read of LiveKit, applied exactly as the webhook it stands for would be. An
/// error or timeout of the read changes nothing.
pub async fn read_back(app: &App, stream: &Stream) -> Result<ReadBack, StoreError> {
    let now = app.clock.now();
    // While preparing, each read-back is followed by another until a host is there; live, at
    // the interval.
    let next = match stream.status {
        StreamStatus::Preparing => app.config.host_readback,
        _ => app.config.host_readback_interval,
    };
    let Outcome::Applied((_, claimed)) =
        update(app, stream, None, |s| s.with_host_check_claimed(now, next)).await?
    else {
        return Ok(ReadBack::NotClaimed);
    };
    // The next read-back has a timer of its own; the sweep covers it should the timer be lost.
    streams::schedule_kinds(app, &claimed, &[TimerKind::HostReadback]).await;
    let (Some(rooms), Some(room)) = (&app.rooms, &claimed.room_name) else {
        return Ok(ReadBack::Unchanged(Box::new(claimed)));
    };
    metrics::count(Metric::HostReadbacks);
    let presence = match rooms.room_presence(room).await {
        Ok(presence) => presence,
        Err(err) => {
            metrics::count(Metric::HostReadbackFailures);
            tracing::warn!(stream_id = %claimed.id, error = %err, "host read-back failed; nothing changed");
            return Ok(ReadBack::Applied);
        }
    };
    // The viewers LiveKit counts stand for joins and leaves whose webhooks were lost, before
    // any end below makes the count final (docs/lifecycle.md, "Viewer counts").
    if let (StreamStatus::Live, Some(room)) = (claimed.status, &presence) {
        let reported = ViewerChange::Reported(room.viewers);
        app.streams()
            .adjust_viewer_count(&claimed, reported, now, None)
            .await?;
    }
    match (claimed.status, presence) {
        // The dispatch retry makes the room again.
        (StreamStatus::Preparing, None) => {}
        (_, None) => {
            room_gone(app, &claimed).await?;
            return Ok(ReadBack::Applied);
        }
        (_, Some(presence)) => match kept_host(&claimed, &presence.hosts) {
            Some(host) => {
                let recorded = claimed.agents.contains(&host.sid);
                // LiveKit's list is the truth: a recorded host it does not list is gone (its
                // leave was lost), and the host it lists first is the host.
                if !recorded {
                    match claimed.status {
                        StreamStatus::Live => {
                            join_host(app, &claimed, Host::of_room(host), None, true).await?;
                        }
                        _ => host_found(app, &claimed, host).await?,
                    }
                }
                for other in presence.hosts.iter().filter(|o| o.sid != host.sid) {
                    remove_second_host(app, &claimed, Host::of_room(other)).await;
                }
                if !recorded {
                    return Ok(ReadBack::Applied);
                }
            }
            None if claimed.status == StreamStatus::Live && claimed.host_lost_at.is_none() => {
                tracing::warn!(stream_id = %claimed.id, "read-back: no host in the room");
                open_window(app, &claimed, "", now, None).await?;
                return Ok(ReadBack::Applied);
            }
            None => {}
        },
    }
    Ok(ReadBack::Unchanged(Box::new(claimed)))
}

/// The host of those LiveKit lists that the stream keeps: the one it recorded, else the
/// earliest joined.
fn kept_host<'a>(stream: &Stream, hosts: &'a [RoomHost]) -> Option<&'a RoomHost> {
    hosts
        .iter()
        .find(|host| stream.agents.contains(&host.sid))
        .or_else(|| hosts.first())
}

/// LiveKit no longer has a live stream's room: `ended`, `room_finished`, as of now (or, in a
/// window, its drop), as its `room_finished` webhook would have ended it.
async fn room_gone(app: &App, stream: &Stream) -> Result<(), StoreError> {
    let Some(live) = app.streams().get_stream(stream.id).await? else {
        return Ok(());
    };
    if live.status == StreamStatus::Live {
        finish(app, &live, Transition::RoomFinished, None).await?;
    }
    Ok(())
}

/// A host is in the room as LiveKit lists it: a preparing stream goes live as of the host's
/// join, and a live one records it (closing a window).
async fn host_found(app: &App, stream: &Stream, host: &RoomHost) -> Result<(), StoreError> {
    let now = app.clock.now();
    match stream.status {
        StreamStatus::Preparing => {
            let at = host
                .joined_at
                .unwrap_or(now)
                .max(stream.created_at)
                .min(now);
            went_live(app, stream, Host::of_room(host), at, None).await?;
        }
        StreamStatus::Live => {
            agent_joined(app, stream, Host::of_room(host), None).await?;
        }
        StreamStatus::Ended | StreamStatus::Error => {}
    }
    Ok(())
}

/// The host joined a preparing stream's room: `live` as of `at`, then the host recorded (also
/// when this event was applied before, so a resent event records a host a failed attempt did
/// not). A host of a stream already live is one joining it.
pub(crate) async fn went_live(
    app: &App,
    stream: &Stream,
    host: Host<'_>,
    at: DateTime<Utc>,
    dedupe: Option<&str>,
) -> Result<Outcome<()>, StoreError> {
    let outcome = super::apply_transition(app, stream, Transition::AgentJoined, at, dedupe).await?;
    let live = match &outcome {
        Outcome::Applied(applied) => {
            // The preparing and dispatch timers would find nothing to do; cancelling saves
            // their runs.
            streams::cancel(
                app,
                &applied.stream,
                &[TimerKind::PreparingTimeout, TimerKind::DispatchRetry],
            )
            .await;
            streams::schedule_timers(app, &applied.stream).await;
            Some(applied.stream.clone())
        }
        Outcome::Duplicate | Outcome::Stale => app.streams().get_stream(stream.id).await?,
    }
    .filter(|live| live.status == StreamStatus::Live);
    let Some(live) = live else {
        return Ok(outcome.map(drop));
    };
    if host.sid.is_empty() {
        return Ok(outcome.map(drop));
    }
    match outcome {
        // Another event made it live: this one is a host joining a live stream.
        Outcome::Stale => agent_joined(app, &live, host, dedupe).await,
        applied_or_seen => {
            agent_joined(app, &live, host, None).await?;
            Ok(applied_or_seen.map(drop))
        }
    }
}

/// The host joined the room of a live stream: recorded, and an open reconnect window closed
/// (the stream goes on, no event). A second host, while one is recorded, is removed from the
/// room: one host is on air.
pub async fn agent_joined(
    app: &App,
    stream: &Stream,
    host: Host<'_>,
    dedupe: Option<&str>,
) -> Result<Outcome<()>, StoreError> {
    join_host(app, stream, host, dedupe, false).await
}

/// [`agent_joined`]; with `replace`, `host` takes the place of the host recorded, which a
/// read-back found gone.
async fn join_host(
    app: &App,
    stream: &Stream,
    host: Host<'_>,
    dedupe: Option<&str>,
    replace: bool,
) -> Result<Outcome<()>, StoreError> {
    let (now, check) = (app.clock.now(), app.config.host_readback_interval);
    let second = AtomicBool::new(false);
    let outcome = update(app, stream, dedupe, |s| {
        let mut s = s.clone();
        if replace {
            s.agents.clear();
        }
        second.store(
            s.status == StreamStatus::Live && s.other_agent_present(host.sid),
            Ordering::Relaxed,
        );
        s.with_agent_joined(host.sid, now, check)
    })
    .await?;
    if second.load(Ordering::Relaxed) {
        remove_second_host(app, stream, host).await;
        return Ok(outcome.map(drop));
    }
    // A host recorded: its live read-backs start from now.
    if let Outcome::Applied((before, after)) = &outcome
        && after.host_check_at != before.host_check_at
    {
        streams::schedule_kinds(app, after, &[TimerKind::HostReadback]).await;
    }
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

/// Removes a second host from the room. Should this fail, the next read-back finds it and
/// removes it again.
async fn remove_second_host(app: &App, stream: &Stream, host: Host<'_>) {
    let (Some(rooms), Some(room)) = (&app.rooms, &stream.room_name) else {
        return;
    };
    metrics::count(Metric::SecondHostsRemoved);
    match rooms.remove_participant(room, host.identity).await {
        Ok(()) => {
            tracing::warn!(stream_id = %stream.id, participant = host.sid, "a second host joined: removed");
        }
        Err(err) => {
            tracing::warn!(stream_id = %stream.id, participant = host.sid, error = %err, "a second host could not be removed; the next read-back tries again");
        }
    }
}

/// The host left the room of a live stream. The leave of a host that is not the one recorded
/// (a second host the service removed, or one replaced) changes nothing but the record, as
/// does any leave during a window; otherwise E16's table decides: it finished (`host_left`),
/// the room closed (`room_finished`), or it dropped, which opens a reconnect window with the
/// host dispatched again at once (docs/lifecycle.md, "Disconnect reasons").
pub async fn agent_left(
    app: &App,
    stream: &Stream,
    event: &ProviderEvent,
    dedupe: Option<&str>,
) -> Result<Outcome<()>, StoreError> {
    let participant = event.participant.as_str();
    if stream.other_agent_present(participant) || stream.host_lost_at.is_some() {
        let outcome = update(app, stream, dedupe, |s| s.with_agent_gone(participant)).await?;
        return Ok(outcome.map(drop));
    }
    match Departure::of(event.disconnect_reason.as_deref(), event.finished) {
        Departure::Left => finish(app, stream, Transition::HostLeft, dedupe).await,
        Departure::RoomClosed => finish(app, stream, Transition::RoomFinished, dedupe).await,
        Departure::Dropped => {
            let now = app.clock.now();
            let dropped_at = event.created_at.unwrap_or(now);
            tracing::warn!(stream_id = %stream.id, reason = event.disconnect_reason.as_deref().unwrap_or(""), "the host dropped");
            open_window(app, stream, participant, dropped_at, dedupe).await
        }
    }
}

/// Opens the reconnect window of a live stream whose host `participant` (empty: whichever it
/// was) is gone since `dropped_at`, then acts on it at once: the window's first dispatch, or,
/// for a drop reported late, its lapse.
async fn open_window(
    app: &App,
    stream: &Stream,
    participant: &str,
    dropped_at: DateTime<Utc>,
    dedupe: Option<&str>,
) -> Result<Outcome<()>, StoreError> {
    let now = app.clock.now();
    let window = app.config.reconnect_window;
    let outcome = update(app, stream, dedupe, |s| {
        if s.other_agent_present(participant) && !participant.is_empty() {
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
        tracing::warn!(stream_id = %after.id, until = ?after.reconnect_until, "reconnect window open");
        streams::schedule_kinds(app, after, &[TimerKind::ReconnectWindow]).await;
        // Should this fail, the stored window and retry drive it. Boxed: what is due may be a
        // read-back, which may open a window.
        if let Err(err) = Box::pin(super::timers::act_on_due(app, after)).await {
            tracing::warn!(stream_id = %after.id, error = %err, "the host's first dispatch again failed; the sweep retries it");
        }
    }
    Ok(outcome.map(drop))
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
