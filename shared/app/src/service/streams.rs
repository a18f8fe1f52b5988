//! Start, list, get and end streams (docs/streams.md; docs/idempotency.md; docs/lifecycle.md,
//! "Atomicity").

use std::time::Duration;

use serde_json::{Map, Value};
use uuid::Uuid;

use crate::app::App;
use crate::metrics::{self, Metric};
use crate::service::creators;
use crate::service::idempotency::{self, Answer, Begin, Held};
use hosting_domain::API_PREFIX;
use hosting_domain::Caller;
use hosting_domain::account::LIVE_COMMERCE;
use hosting_domain::destination::{new_destinations, parse_destinations};
use hosting_domain::error::{ApiError, ApiResult, RoomError};
use hosting_domain::event::EventType;
use hosting_domain::idempotency::{Endpoint, StoredAnswer};
use hosting_domain::ports::{CreateStreamOutcome, Timer, ViewerAccess};
use hosting_domain::recording::parse_record;
use hosting_domain::stream::ListQuery;
use hosting_domain::stream::{
    MAX_ACTIVE_STREAMS, StreamCreated, StreamDetail, StreamEnded, StreamList, StreamSummary,
    Transition,
};
use hosting_domain::validation::{PLATFORMS, StartStreamRequest};
use hosting_domain::{Stream, StreamStatus, TimerKind};

/// Platforms each vertical permits.
pub(crate) fn platform_permitted(vertical: &str, platform: &str) -> bool {
    vertical == LIVE_COMMERCE && PLATFORMS.contains(&platform)
}

/// `POST /streams`, with its `Idempotency-Key` when one was sent (docs/idempotency.md):
/// checked with the body, then looked up before anything else, so a replay takes no slot and is
/// not checked again.
pub async fn start(
    app: &App,
    caller: &Caller,
    body: &Map<String, Value>,
    key: Option<&[u8]>,
) -> ApiResult<Answer> {
    let request = StartStreamRequest::parse(body, caller.environment)?;
    let key = idempotency::parse_key(key)?;
    let held = match idempotency::begin(app, caller, Endpoint::StartStream, key, body).await? {
        Begin::Run(held) => held,
        Begin::Replay(answer) => return Ok(answer),
        Begin::Rebuild {
            key_id,
            resource_id,
        } => return rebuild(app, caller, &key_id, &resource_id).await,
    };
    let outcome = start_new(app, caller, request, held.as_ref())
        .await
        .map(|(stream, created)| Answer::fresh(created_answer(&stream, &created)));
    idempotency::finish(app, held, &outcome).await;
    outcome
}

/// A 201 as sent: the body and the new stream's `Location`.
fn created_answer(stream: &Stream, created: &StreamCreated) -> StoredAnswer {
    StoredAnswer {
        status: 201,
        body: serde_json::to_string(created).unwrap_or_default(),
        location: Some(format!("{API_PREFIX}/streams/{}", stream.id)),
        sealed_body: None,
    }
}

/// The answer of a start whose key is bound to `stream_id` but whose answer was never
/// recorded (its process died, or the write failed): a start still launching is in use; a
/// launch that failed answers its `502`; a stream that got going answers its `201` (a live
/// stream with a new viewer token).
async fn rebuild(app: &App, caller: &Caller, key_id: &str, stream_id: &str) -> ApiResult<Answer> {
    let id = Uuid::parse_str(stream_id).map_err(|_| ApiError::IdempotencyKeyInUse)?;
    let Some(stream) = app
        .streams()
        .get_stream(id)
        .await?
        .filter(|s| s.brand_id == caller.brand.id)
    else {
        return Err(ApiError::IdempotencyKeyInUse);
    };
    let stored = match stream.status {
        StreamStatus::Preparing => return Err(ApiError::IdempotencyKeyInUse),
        StreamStatus::Error if !stream.test && stream.started_at.is_none() => {
            idempotency::error_answer(&ApiError::LaunchFailed(RoomError(
                "the launch did not complete".into(),
            )))
        }
        _ => {
            let access = match (stream.test, &app.rooms, &stream.room_name) {
                (false, Some(rooms), Some(room)) => Some(
                    rooms
                        .viewer_access(room, viewer_token_lifetime(app, &stream))
                        .await
                        .map_err(ApiError::LaunchFailed)?,
                ),
                _ => None,
            };
            // As the start answered it: a live key's stream was `preparing` then.
            let as_started = Stream {
                status: if stream.test {
                    StreamStatus::Live
                } else {
                    StreamStatus::Preparing
                },
                ..stream.clone()
            };
            created_answer(&stream, &created(&as_started, access))
        }
    };
    Ok(idempotency::replay_rebuilt(app, key_id, stored).await)
}

pub(crate) use super::new_stream::{NewStream, check_vertical, new_stream};

/// The checks after the body's, then the stream.
async fn start_new(
    app: &App,
    caller: &Caller,
    request: StartStreamRequest,
    held: Option<&Held>,
) -> ApiResult<(Stream, StreamCreated)> {
    let brand_vertical = check_vertical(caller.brand.vertical.as_str(), &request)?;
    if !creators::exists(app, &request.creator_id).await? {
        return Err(ApiError::InvalidCreator);
    }
    let destinations = parse_destinations(request.destinations.as_ref(), |platform| {
        platform_permitted(brand_vertical, platform)
    })?;
    let (destinations, stream_keys) = new_destinations(destinations);
    let stream_keys = app.secrets().seal_stream_keys(&stream_keys).await?;
    let record = parse_record(request.record.as_ref())?;
    let stream = new_stream(
        app,
        NewStream {
            brand_id: caller.brand.id.clone(),
            vertical: brand_vertical.to_owned(),
            test: caller.is_test(),
            request,
            destinations,
            stream_keys,
            record,
        },
    );
    let binding = held.map(|held| held.binding(app, None));
    create_and_launch(app, stream, |stream, announce| async move {
        let outcome = app
            .streams()
            .create_stream(&stream, announce, MAX_ACTIVE_STREAMS, binding.as_ref())
            .await?;
        Ok(match outcome {
            CreateStreamOutcome::ConcurrencyLimit => Err(ApiError::ConcurrencyLimit),
            // Another request took the key over after this one's hold lapsed.
            CreateStreamOutcome::KeyLost => Err(ApiError::IdempotencyKeyInUse),
            CreateStreamOutcome::Created(stored) => Ok(*stored),
        })
    })
    .await
}

/// `POST /streams` from the concurrency check on: `create` stores the stream (taking a slot,
/// with the start event of a test stream), then its timers are armed and a live stream is
/// launched.
pub(crate) async fn create_and_launch<F, Fut>(
    app: &App,
    stream: Stream,
    create: F,
) -> ApiResult<(Stream, StreamCreated)>
where
    F: FnOnce(Stream, Option<EventType>) -> Fut,
    Fut: std::future::Future<Output = ApiResult<ApiResult<Stream>>>,
{
    // A test stream is live at once, so its start event is written with it.
    let announce = stream.test.then_some(EventType::StreamStarted);
    let test = stream.test;
    let stream = create(stream, announce).await??;
    // Before the launch, so a slow launch is timed out too.
    schedule_timers(app, &stream).await;
    if test {
        let created = created(&stream, None);
        return Ok((stream, created));
    }
    let created = launch(app, &stream).await?;
    Ok((stream, created))
}

/// The live path: room, agent dispatch and viewer token, within `LAUNCH_TIMEOUT_SECS`. Any
/// failure after the record exists moves the stream to `error` (releasing its slot) and
/// answers `502 launch_failed`; the room it may have created is deleted by the pending cleanup
/// that transition writes, tried inline only within what is left of the bound, so the answer
/// keeps to it. A launch that outlived the stream's preparing deadline answers `502` too when
/// the stream finished meanwhile, and its room is deleted again.
async fn launch(app: &App, stream: &Stream) -> ApiResult<StreamCreated> {
    let room_name = stream.room_name.clone().unwrap_or_default();
    let started = tokio::time::Instant::now();
    let opened = tokio::time::timeout(
        app.config.launch_timeout,
        open_room(app, stream, &room_name),
    )
    .await
    .unwrap_or_else(|_| {
        Err(RoomError(format!(
            "the room provider did not answer within {} s",
            app.config.launch_timeout.as_secs_f64()
        )))
    });
    match opened {
        Ok(access) => match finished_during_launch(app, stream).await? {
            None => Ok(created(stream, Some(access))),
            Some(finished) => {
                metrics::count(Metric::LaunchFailures);
                // Should this fail, the cleanup its finishing transition wrote still holds
                // past the launch's bound and deletes the room then.
                if let Err(err) = super::rooms::seen_in_use(app, &finished).await {
                    tracing::warn!(stream_id = %finished.id, error = %err, "room made after the stream finished: cleanup not re-armed");
                }
                Err(ApiError::LaunchFailed(RoomError(format!(
                    "the stream reached `{}` (its preparing timeout) before its launch completed",
                    finished.status.as_str()
                ))))
            }
        },
        Err(err) => {
            // A store failure here leaves the stream `preparing`; its deadline ends it.
            metrics::count(Metric::LaunchFailures);
            if let Some(failed) = super::apply_transition(
                app,
                stream,
                Transition::LaunchFailed,
                app.clock.now(),
                None,
            )
            .await?
            .applied()
            {
                cancel_timers(app, &failed.stream).await;
                // Only within what is left of the launch's bound: the answer must not wait
                // on a provider that hangs; the pending cleanup covers the rest.
                if let Some(cleanup) = &failed.cleanup {
                    let left = app.config.launch_timeout.saturating_sub(started.elapsed());
                    super::rooms::attempt_after_transition(app, cleanup, left).await;
                }
            }
            Err(ApiError::LaunchFailed(err))
        }
    }
}

/// The stream as stored when a launch that succeeded outlived its preparing deadline and the
/// stream finished meanwhile. Before the deadline nothing can finish a preparing stream but
/// the launch itself, so the common case costs no read.
async fn finished_during_launch(app: &App, stream: &Stream) -> ApiResult<Option<Stream>> {
    if stream
        .deadline
        .is_none_or(|deadline| app.clock.now() < deadline)
    {
        return Ok(None);
    }
    Ok(app
        .streams()
        .get_stream(stream.id)
        .await?
        .filter(|stored| !stored.status.is_active()))
}

async fn open_room(app: &App, stream: &Stream, room_name: &str) -> Result<ViewerAccess, RoomError> {
    let rooms = app
        .rooms
        .as_ref()
        .ok_or_else(|| RoomError("no room provider is configured (LIVEKIT_URL)".into()))?;
    // The host's dispatch is the room's own (docs/livekit.md, "One host").
    rooms
        .create_room(
            room_name,
            room_lifetime(app, stream),
            &agent_metadata(stream, stream.script.as_deref()),
        )
        .await?;
    rooms
        .viewer_access(room_name, viewer_token_lifetime(app, stream))
        .await
}

/// How long a stream's room stays open while empty (or holding only the host): viewers may
/// join while preparing and until the duration ends.
pub(crate) fn room_lifetime(app: &App, stream: &Stream) -> Duration {
    app.config.preparing_timeout
        + Duration::from_secs(u64::from(stream.effective_duration_minutes()) * 60)
}

/// What the agent is handed with each dispatch: the stream and its script.
pub(crate) fn agent_metadata(stream: &Stream, script: Option<&str>) -> String {
    serde_json::json!({
        "stream_id": stream.id,
        "creator_id": stream.creator_id,
        "product_name": stream.product_name,
        "platform": stream.platform,
        "duration_minutes": stream.duration_minutes,
        "script": script,
    })
    .to_string()
}

/// While viewers may join: preparing and until the duration ends, with a margin past the end
/// so a token fetched late still works to the last minute.
fn viewer_token_lifetime(app: &App, stream: &Stream) -> Duration {
    app.config.preparing_timeout
        + Duration::from_secs(u64::from(stream.effective_duration_minutes()) * 60)
        + Duration::from_secs(15 * 60)
}

fn created(stream: &Stream, access: Option<ViewerAccess>) -> StreamCreated {
    let live_key = access.is_some();
    let (ws_url, viewer_token) = match access {
        Some(access) => (Some(access.ws_url), Some(access.viewer_token)),
        None => (None, None),
    };
    StreamCreated {
        stream_id: stream.id,
        status: stream.status,
        room_name: stream.room_name.clone().unwrap_or_default(),
        ws_url,
        viewer_token,
        created_at: stream.created_at,
        destinations: stream.destinations.clone(),
        recording: hosting_domain::stream::recording_as_of_change(stream),
        test: stream.test,
        agent_dispatched: live_key.then_some(true),
        dispatch_method: live_key.then(|| Some("explicit".to_owned())),
    }
}

/// Arms the timers of what the stream has due: its deadline (the preparing timeout, or the
/// duration end once live), its next dispatch retry, the end of its reconnect window, an owed
/// egress start and the read-back of its host. Best effort: each time is already stored, and the sweep acts on it if a timer is lost.
pub async fn schedule_timers(app: &App, stream: &Stream) {
    let kinds = [
        TimerKind::PreparingTimeout,
        TimerKind::DurationEnd,
        TimerKind::DispatchRetry,
        TimerKind::ReconnectWindow,
        TimerKind::EgressStart,
        TimerKind::HostReadback,
    ];
    schedule_kinds(app, stream, &kinds).await;
}

/// Arms those of `kinds` that the stream has a time for.
pub(crate) async fn schedule_kinds(app: &App, stream: &Stream, kinds: &[TimerKind]) {
    let deadline = stream.deadline_timer();
    let timers = kinds.iter().filter_map(|kind| match kind {
        TimerKind::PreparingTimeout | TimerKind::DurationEnd => {
            deadline.filter(|(deadline_kind, _)| deadline_kind == kind)
        }
        TimerKind::DispatchRetry => stream.next_dispatch_at.map(|at| (*kind, at)),
        TimerKind::ReconnectWindow => stream.reconnect_until.map(|at| (*kind, at)),
        TimerKind::EgressStart => stream
            .egress
            .due_at
            .filter(|_| stream.status == StreamStatus::Live)
            .map(|at| (*kind, at)),
        TimerKind::HostReadback => stream
            .host_check_at
            .filter(|_| stream.status.is_active())
            .map(|at| (*kind, at)),
        // A show's, not a stream's (`service::shows`).
        TimerKind::ShowStart | TimerKind::ShowReminder => None,
    });
    let arms = timers.map(|(kind, due_at)| async move {
        let timer = Timer {
            stream_id: stream.id,
            kind,
            due_at,
        };
        if let Err(err) = app.timers.schedule(timer).await {
            tracing::warn!(stream_id = %stream.id, timer = kind.as_str(), error = %err, "timer not armed; the sweep covers it");
        }
    });
    futures_util::future::join_all(arms).await;
}

/// `GET /streams`.
pub async fn list(app: &App, caller: &Caller, query: ListQuery) -> ApiResult<StreamList> {
    let page = async {
        match query.status {
            Some(None) => Ok(Default::default()),
            Some(Some(status)) => list_page(app, &caller.brand.id, Some(status), &query).await,
            None => list_page(app, &caller.brand.id, None, &query).await,
        }
    };
    // The catalog (cached when warm) is read alongside the page, not after it.
    let (page, catalog) = tokio::join!(page, creators::catalog(app));
    let (page, catalog) = (page?, catalog?);
    let (streams, total) = page;
    let streams = streams
        .into_iter()
        .map(|mut stream| {
            let creator_id = stream.creator_id.take().filter(|id| catalog.contains(id));
            StreamSummary::new(stream, creator_id)
        })
        .collect();
    Ok(StreamList {
        streams,
        total,
        limit: query.limit,
        offset: query.offset,
    })
}

async fn list_page(
    app: &App,
    brand_id: &str,
    status: Option<StreamStatus>,
    query: &ListQuery,
) -> ApiResult<(Vec<Stream>, u64)> {
    let offset = usize::try_from(query.offset).unwrap_or(usize::MAX);
    let page = app
        .stream_lists()
        .list_streams(brand_id, status, query.limit as usize, offset)
        .await?;
    Ok((page.streams, page.total))
}

/// The caller's stream with this id; anything else, lookup failures included, is absent.
pub(crate) async fn find_own(app: &App, caller: &Caller, id: Uuid) -> Option<Stream> {
    match app.streams().get_stream(id).await {
        Ok(stream) => stream.filter(|s| s.brand_id == caller.brand.id),
        Err(err) => {
            tracing::error!(error = %err, "stream lookup failed");
            None
        }
    }
}

/// The stream as `GET /streams/{id}` shows it: `creator_id` only while that creator exists.
pub(crate) async fn detail(app: &App, stream: &Stream) -> ApiResult<StreamDetail> {
    let catalog = creators::catalog(app).await.map_err(|err| {
        tracing::error!(error = %err, "creator lookup failed");
        ApiError::NotFound
    })?;
    let creator_id = stream.creator_id.clone().filter(|id| catalog.contains(id));
    let mut detail = StreamDetail::new(stream, creator_id);
    detail.usage = Some(hosting_domain::usage::stream_usage(stream, app.clock.now()));
    Ok(detail)
}

/// `GET /streams/{id}`.
pub async fn get(app: &App, caller: &Caller, id: Uuid) -> ApiResult<StreamDetail> {
    // The catalog (cached when warm) is read alongside the stream, not after it.
    let (stream, catalog) = tokio::join!(find_own(app, caller, id), creators::catalog(app));
    let mut stream = stream.ok_or(ApiError::NotFound)?;
    let catalog = catalog.map_err(|err| {
        tracing::error!(error = %err, "creator lookup failed");
        ApiError::NotFound
    })?;
    let creator_id = stream.creator_id.take().filter(|id| catalog.contains(id));
    let recording = super::recordings::shown(app, &stream).await;
    let usage = hosting_domain::usage::stream_usage(&stream, app.clock.now());
    let mut detail = StreamDetail::from_read(stream, creator_id);
    detail.recording = recording;
    detail.usage = Some(usage);
    Ok(detail)
}

/// `DELETE /streams/{id}`: ends a live stream; anything not live is not found.
pub async fn end(app: &App, caller: &Caller, id: Uuid) -> ApiResult<StreamEnded> {
    let stream = find_own(app, caller, id)
        .await
        .filter(|s| s.status == StreamStatus::Live)
        .ok_or(ApiError::NotFound)?;
    let applied = super::apply_transition(
        app,
        &stream,
        Transition::EndRequested,
        app.clock.now(),
        None,
    )
    .await?
    .applied()
    // Someone else ended it between the read and the write.
    .ok_or(ApiError::NotFound)?;
    after_final(app, &applied).await;
    let ended = applied.stream;
    Ok(StreamEnded {
        stream_id: ended.id,
        status: ended.status,
        ended_at: ended.ended_at.unwrap_or_else(|| app.clock.now()),
    })
}

/// After a stream reached `ended` or `error`: its timers cancelled, and the first attempt at
/// its room's pending cleanup (the sweep retries it if this one fails or never runs).
pub(crate) async fn after_final(app: &App, applied: &super::Applied) {
    cancel_timers(app, &applied.stream).await;
    if let Some(cleanup) = &applied.cleanup {
        super::rooms::attempt_after_transition(app, cleanup, super::rooms::DELETE_TIMEOUT).await;
    }
}

/// A finished stream's timers would find nothing to do; cancelling saves their runs. A test
/// stream never has dispatch or window timers.
async fn cancel_timers(app: &App, stream: &Stream) {
    let kinds: &[TimerKind] = if stream.test {
        &[TimerKind::PreparingTimeout, TimerKind::DurationEnd]
    } else {
        &[
            TimerKind::PreparingTimeout,
            TimerKind::DurationEnd,
            TimerKind::DispatchRetry,
            TimerKind::ReconnectWindow,
            TimerKind::HostReadback,
        ]
    };
    cancel(app, stream, kinds).await;
}

/// Cancels these timers of the stream, best effort.
pub(crate) async fn cancel(app: &App, stream: &Stream, kinds: &[TimerKind]) {
    let cancels = kinds.iter().map(|kind| async move {
        if let Err(err) = app.timers.cancel(stream.id, *kind).await {
            tracing::warn!(stream_id = %stream.id, timer = kind.as_str(), error = %err, "timer cancel failed");
        }
    });
    futures_util::future::join_all(cancels).await;
}
