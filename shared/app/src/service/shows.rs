//! Scheduled shows (docs/shows.md): schedule, read, change and cancel a show, and start it at
//! its time through `POST /streams`' own creation path.

use std::time::Duration;

use chrono::TimeDelta;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::new_stream::{NewStream, check_vertical, new_stream};
use super::streams::{create_and_launch, platform_permitted};
use crate::app::App;
use crate::metrics::{self, Metric};
use crate::service::creators;
use crate::service::idempotency::{self, Answer, Begin, Held};
use hosting_domain::API_PREFIX;
use hosting_domain::Caller;
use hosting_domain::account::KeyEnvironment;
use hosting_domain::destination::{Destination, new_destinations, parse_destinations};
use hosting_domain::error::{ApiError, ApiResult, StoreError};
use hosting_domain::event::EventType;
use hosting_domain::idempotency::{Endpoint, StoredAnswer};
use hosting_domain::paging::limit_and_offset;
use hosting_domain::ports::{CreateShowOutcome, ShowPage, ShowStart, Timer};
use hosting_domain::recording::parse_record;
use hosting_domain::show::{
    Show, ShowError, ShowList, ShowStatus, ShowView, parse_remind_minutes, parse_show_id,
    parse_starts_at,
};
use hosting_domain::stream::MAX_ACTIVE_STREAMS;
use hosting_domain::validation::{StartStreamRequest, missing_fields, present};
use hosting_domain::{Stream, StreamEvent, StreamStatus, TimerKind};

/// How long a starter holds a show: longer than a live start's launch takes.
fn claim_for(app: &App) -> TimeDelta {
    TimeDelta::from_std(app.config.launch_timeout + Duration::from_secs(30))
        .unwrap_or(TimeDelta::MAX)
}

/// `POST /shows`: the missing fields (the stream's and `starts_at`), the stream's constraints,
/// `starts_at` and `remind_minutes_before`, the `Idempotency-Key`, then the checks that read
/// (vertical, creator, destinations, record). The concurrency limit is the start's.
pub async fn schedule(
    app: &App,
    caller: &Caller,
    body: &Map<String, Value>,
    key: Option<&[u8]>,
    min_lead: TimeDelta,
) -> ApiResult<Answer> {
    let mut missing = StartStreamRequest::missing_fields(body, caller.environment);
    if present(body, "starts_at").is_none() {
        missing.push("starts_at");
    }
    if !missing.is_empty() {
        return Err(missing_fields(&missing));
    }
    let request = StartStreamRequest::parse(body, caller.environment)?;
    let starts_at = parse_starts_at(body, app.clock.now(), min_lead)?
        .ok_or_else(|| missing_fields(&["starts_at"]))?;
    let remind = parse_remind_minutes(body)?;
    let key = idempotency::parse_key(key)?;
    let held = match idempotency::begin(app, caller, Endpoint::ScheduleShow, key, body).await? {
        Begin::Run(held) => held,
        Begin::Replay(answer) => return Ok(answer),
        // The answer is bound with the show: a bound key always has one.
        Begin::Rebuild { .. } => return Err(ApiError::IdempotencyKeyInUse),
    };
    let outcome = create(app, caller, request, starts_at, remind, held.as_ref()).await;
    idempotency::finish(app, held, &outcome).await;
    outcome
}

async fn create(
    app: &App,
    caller: &Caller,
    request: StartStreamRequest,
    starts_at: chrono::DateTime<chrono::Utc>,
    remind: Option<u32>,
    held: Option<&Held>,
) -> ApiResult<Answer> {
    let vertical = check_vertical(caller.brand.vertical.as_str(), &request)?;
    if !creators::exists(app, &request.creator_id).await? {
        return Err(ApiError::InvalidCreator);
    }
    let destinations = parse_destinations(request.destinations.as_ref(), |platform| {
        platform_permitted(vertical, platform)
    })?;
    let (destinations, keys) = new_destinations(destinations);
    let keys = app.secrets().seal_stream_keys(&keys).await?;
    let record = parse_record(request.record.as_ref())?;
    let mut show = Show {
        id: Uuid::new_v4(),
        brand_id: caller.brand.id.clone(),
        status: ShowStatus::Scheduled,
        starts_at,
        remind_minutes_before: remind,
        stream: shown_fields(&request, &destinations, record),
        stream_id: None,
        error: None,
        created_at: app.clock.now(),
        test: caller.is_test(),
        reminded: false,
        claim_until: None,
    };
    // A reminder whose moment has already passed is never sent: nothing is left to send.
    show.reminded = !show.reminder_pending(show.created_at);
    let answer = StoredAnswer {
        status: 201,
        body: serde_json::to_string(&ShowView::from(&show)).unwrap_or_default(),
        location: Some(format!("{API_PREFIX}/shows/{}", show.public_id())),
        sealed_body: None,
    };
    let binding = held.map(|held| held.binding(app, Some(answer.clone())));
    match app
        .shows()
        .create_show(&show, &keys, request.script.as_deref(), binding.as_ref())
        .await?
    {
        CreateShowOutcome::Created => {}
        CreateShowOutcome::KeyLost => return Err(ApiError::IdempotencyKeyInUse),
    }
    arm_timers(app, &show).await;
    Ok(Answer::fresh(answer))
}

/// The stream's fields as the show shows them: as given, each destination as a `pending` one
/// with its key's last 4 characters, never the script.
pub(super) fn shown_fields(
    request: &StartStreamRequest,
    destinations: &[Destination],
    record: bool,
) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("creator_id".into(), request.creator_id.clone().into());
    fields.insert("product_name".into(), request.product_name.clone().into());
    fields.insert("platform".into(), request.platform.clone().into());
    if let Some(minutes) = request.duration_minutes {
        fields.insert("duration_minutes".into(), minutes.into());
    }
    if let Some(vertical) = &request.vertical {
        fields.insert("vertical".into(), vertical.clone().into());
    }
    fields.insert(
        "destinations".into(),
        serde_json::to_value(destinations).unwrap_or_default(),
    );
    fields.insert("record".into(), record.into());
    fields
}

/// Arms the show's start and its reminder when one is pending. Best effort: both are stored
/// on the show, and the sweep acts on them if a timer is lost.
pub(super) async fn arm_timers(app: &App, show: &Show) {
    let reminder = (!show.reminded)
        .then(|| show.reminder_at())
        .flatten()
        .map(|at| (TimerKind::ShowReminder, at));
    for (kind, due_at) in [(TimerKind::ShowStart, show.starts_at)]
        .into_iter()
        .chain(reminder)
    {
        let timer = Timer {
            stream_id: show.id,
            kind,
            due_at,
        };
        if let Err(err) = app.timers.schedule(timer).await {
            tracing::warn!(show_id = %show.public_id(), timer = kind.as_str(), error = %err, "show timer not armed; the sweep covers it");
        }
    }
}

/// `GET /shows/{id}`: absent, another brand's, or an id not in form is `404`.
pub async fn get(app: &App, caller: &Caller, id: &str) -> ApiResult<ShowView> {
    let id = parse_show_id(id).ok_or(ApiError::NotFound)?;
    app.shows()
        .get_show(&caller.brand.id, id)
        .await?
        .map(|show| ShowView::from(&show))
        .ok_or(ApiError::NotFound)
}

/// `GET /shows`: soonest first; `status` (an unknown one matches nothing), `limit` and
/// `offset` as `GET /streams` takes them.
pub async fn list(
    app: &App,
    caller: &Caller,
    status: Option<&str>,
    limit: Option<&str>,
    offset: Option<&str>,
) -> ApiResult<ShowList> {
    let (limit, offset) = limit_and_offset(limit, offset);
    let status = status.map(ShowStatus::parse);
    let page = match status {
        Some(None) => ShowPage {
            shows: Vec::new(),
            total: 0,
        },
        status => {
            app.shows()
                .list_shows(
                    &caller.brand.id,
                    status.flatten(),
                    limit as usize,
                    usize::try_from(offset).unwrap_or(usize::MAX),
                )
                .await?
        }
    };
    Ok(ShowList {
        shows: page.shows.iter().map(ShowView::from).collect(),
        total: page.total,
        limit,
        offset,
    })
}

pub use super::show_changes::change;

/// `DELETE /shows/{id}`: `cancelled`, only while `scheduled`.
pub async fn cancel(app: &App, caller: &Caller, id: &str) -> ApiResult<ShowView> {
    use hosting_domain::ports::ShowChange;
    let id = parse_show_id(id).ok_or(ApiError::NotFound)?;
    match app.shows().cancel_show(&caller.brand.id, id).await? {
        ShowChange::Changed(show) => {
            for kind in [TimerKind::ShowStart, TimerKind::ShowReminder] {
                if let Err(err) = app.timers.cancel(show.id, kind).await {
                    tracing::warn!(show_id = %show.public_id(), error = %err, "show timer not cancelled; it finds the show cancelled");
                }
            }
            Ok(ShowView::from(&*show))
        }
        ShowChange::Absent | ShowChange::NotScheduled => Err(ApiError::NotFound),
    }
}

/// Starts the show `show_id` if it is due (or its starter died): claims it, runs
/// `POST /streams` from the concurrency check on in its key mode with the brand's plan and
/// vertical as they stand now, and settles it `started` or `failed` with its event. `None`
/// when another starter holds it or it is settled.
pub async fn start(app: &App, show_id: Uuid) -> Result<Option<Show>, StoreError> {
    let Some(show) = app.show_starts().find_show(show_id).await? else {
        return Ok(None);
    };
    let now = app.clock.now();
    let Some(claimed) = app
        .show_starts()
        .claim_show(&show.brand_id, show.id, now, now + claim_for(app))
        .await?
    else {
        return Ok(None);
    };
    run_claimed(app, claimed).await
}

/// `POST /test_helpers/shows/{id}/start`: a scheduled test show starts now, as its time would
/// start it. A live key, a show made with a live key, an absent or foreign show, or one not
/// `scheduled` is `404`.
pub async fn start_test_show(app: &App, caller: &Caller, id: &str) -> ApiResult<ShowView> {
    if !caller.is_test() {
        return Err(ApiError::NotFound);
    }
    let id = parse_show_id(id).ok_or(ApiError::NotFound)?;
    let show = app
        .shows()
        .get_show(&caller.brand.id, id)
        .await?
        .filter(|show| show.test && show.status == ShowStatus::Scheduled)
        .ok_or(ApiError::NotFound)?;
    let now = app.clock.now();
    // Claimed as of its own time, which has not come.
    let claimed = app
        .show_starts()
        .claim_show(
            &show.brand_id,
            show.id,
            show.starts_at,
            now + claim_for(app),
        )
        .await?
        .ok_or(ApiError::NotFound)?;
    let settled = run_claimed(app, claimed).await?.ok_or(ApiError::NotFound)?;
    for kind in [TimerKind::ShowStart, TimerKind::ShowReminder] {
        if let Err(err) = app.timers.cancel(settled.id, kind).await {
            tracing::warn!(show_id = %settled.public_id(), error = %err, "show timer not cancelled; it finds the show started");
        }
    }
    Ok(ShowView::from(&settled))
}

/// A claimed show's start, settled `started` or `failed` with its event.
async fn run_claimed(app: &App, claimed: Show) -> Result<Option<Show>, StoreError> {
    let (stream, error) = match claimed.stream_id {
        // A starter died after making the stream: its state says how the start went.
        Some(stream_id) => {
            let stream = app.streams().get_stream(stream_id).await?;
            let launch_failed = stream.as_ref().is_some_and(|s| {
                !s.test && s.started_at.is_none() && s.status == StreamStatus::Error
            });
            let error = launch_failed.then(|| ShowError {
                code: "launch_failed".into(),
                message: "The launch did not complete.".into(),
            });
            (stream, error)
        }
        None => match start_stream(app, &claimed).await {
            Ok(stream) => (Some(stream), None),
            Err(StartRefused::NotClaimed) => return Ok(None),
            Err(StartRefused::Store(err)) => return Err(err),
            Err(StartRefused::Api(err, stream)) => (
                stream.map(|stream| *stream),
                Some(ShowError {
                    code: err.code().as_str().into(),
                    message: err.message(),
                }),
            ),
        },
    };
    let settled = Show {
        status: if error.is_some() {
            ShowStatus::Failed
        } else {
            ShowStatus::Started
        },
        stream_id: stream.as_ref().map(|s| s.id).or(claimed.stream_id),
        error: error.clone(),
        claim_until: None,
        ..claimed.clone()
    };
    let event_type = if error.is_some() {
        EventType::ShowFailed
    } else {
        EventType::ShowStarted
    };
    let event = StreamEvent::show(
        event_type,
        &settled,
        stream.as_ref().filter(|_| error.is_none()),
        app.clock.now(),
    );
    if !app
        .show_starts()
        .settle_show(&claimed, error.as_ref(), &event)
        .await?
    {
        return Ok(None);
    }
    metrics::count(if error.is_some() {
        Metric::ShowsFailed
    } else {
        Metric::ShowsStarted
    });
    if settled.late(app.clock.now()) {
        metrics::count(Metric::ShowsLate);
    }
    Ok(Some(settled))
}

/// Why a show's stream was not started.
enum StartRefused {
    /// Another starter holds the show now.
    NotClaimed,
    Store(StoreError),
    /// What `POST /streams` would have answered, with the stream when one was made (a live
    /// start whose launch failed).
    Api(ApiError, Option<Box<Stream>>),
}

async fn start_stream(app: &App, show: &Show) -> Result<Stream, StartRefused> {
    let refused = |err: ApiError| StartRefused::Api(err, None);
    let brand = app
        .accounts()
        .get_brand(&show.brand_id)
        .await
        .map_err(StartRefused::Store)?
        .ok_or_else(|| refused(ApiError::NotFound))?;
    let environment = if show.test {
        KeyEnvironment::Test
    } else {
        KeyEnvironment::Live
    };
    if environment == KeyEnvironment::Live && !brand.plan.allows_live_keys() {
        return Err(refused(ApiError::PlanRequired));
    }
    let (keys, script) = app
        .show_starts()
        .show_inputs(show.id)
        .await
        .map_err(StartRefused::Store)?;
    let mut body = show.stream.clone();
    body.remove("destinations");
    body.remove("record");
    if let Some(script) = script {
        body.insert("script".into(), script.into());
    }
    let request = StartStreamRequest::parse(&body, environment).map_err(refused)?;
    let vertical = check_vertical(brand.vertical.as_str(), &request).map_err(refused)?;
    let destinations: Vec<Destination> =
        serde_json::from_value(show.stream.get("destinations").cloned().unwrap_or_default())
            .unwrap_or_default();
    let stream = new_stream(
        app,
        NewStream {
            brand_id: show.brand_id.clone(),
            vertical: vertical.to_owned(),
            test: show.test,
            request,
            destinations,
            stream_keys: keys,
            record: show.stream.get("record") == Some(&Value::Bool(true)),
        },
    );
    let mut made = None;
    let outcome = create_and_launch(app, stream, |stream, announce| {
        let made = &mut made;
        async move {
            let outcome = app
                .show_starts()
                .start_show_stream(show, &stream, announce, MAX_ACTIVE_STREAMS)
                .await?;
            Ok(match outcome {
                ShowStart::Created(stored) => {
                    *made = Some((*stored).clone());
                    Ok(*stored)
                }
                ShowStart::ConcurrencyLimit => Err(ApiError::ConcurrencyLimit),
                ShowStart::NotClaimed => Err(ApiError::IdempotencyKeyInUse),
            })
        }
    })
    .await;
    match outcome {
        Ok((stream, _)) => Ok(stream),
        Err(ApiError::IdempotencyKeyInUse) => Err(StartRefused::NotClaimed),
        // A store that failed is no answer of `POST /streams` to settle the show with: the
        // claim stays, and once it runs out the sweep starts the show (or, when the stream
        // was made, settles it by that stream).
        Err(ApiError::Db(err)) => Err(StartRefused::Store(err)),
        Err(err) => Err(StartRefused::Api(err, made.map(Box::new))),
    }
}

/// Whatever of the show is due now: its reminder, then its start. `true` when it changed it.
pub async fn act_on_due(app: &App, show_id: Uuid) -> Result<bool, StoreError> {
    let Some(show) = app.show_starts().find_show(show_id).await? else {
        return Ok(false);
    };
    let now = app.clock.now();
    let mut changed = false;
    if show.status == ShowStatus::Scheduled
        && !show.reminded
        && show
            .reminder_at()
            .is_some_and(|at| at <= now && show.starts_at > now)
    {
        changed |= remind(app, &show).await?;
    }
    if show.claimable(now) {
        changed |= start(app, show.id).await?.is_some();
    }
    Ok(changed)
}

/// `show.reminder`, once, while the show is `scheduled`.
async fn remind(app: &App, show: &Show) -> Result<bool, StoreError> {
    let reminded = Show {
        reminded: true,
        ..show.clone()
    };
    let event = StreamEvent::show(EventType::ShowReminder, &reminded, None, app.clock.now());
    app.show_starts().remind_show(show, &event).await
}

/// The soonest moment after now and within `within` at which a show needs the service (its
/// reminder, its start, a claim's end), if any: when the local server's show sweep wakes next.
pub async fn next_moment(
    app: &App,
    within: Duration,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, StoreError> {
    let now = app.clock.now();
    let horizon = now + TimeDelta::from_std(within).unwrap_or(TimeDelta::MAX);
    Ok(app
        .show_starts()
        .due_shows(horizon, SWEEP_BATCH)
        .await?
        .iter()
        .filter_map(Show::next_moment)
        .filter(|at| *at > now)
        .min())
}

/// Shows handled per sweep pass.
const SWEEP_BATCH: usize = 100;

/// The safety net for a lost or late timer: acts on every show with something due (a start, a
/// reminder, a claim that ran out). Returns how many it changed.
pub async fn sweep(app: &App) -> Result<usize, StoreError> {
    let due = app
        .show_starts()
        .due_shows(app.clock.now(), SWEEP_BATCH)
        .await?;
    let mut changed = 0;
    for show in due {
        match act_on_due(app, show.id).await {
            Ok(true) => changed += 1,
            Ok(false) => {}
            Err(err) => {
                tracing::warn!(show_id = %show.public_id(), error = %err, "show left for the next sweep");
            }
        }
    }
    Ok(changed)
}
