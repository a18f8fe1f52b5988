//! `PATCH /shows/{id}` (docs/shows.md): the fields sent over the show's, checked as at
//! scheduling, only while the show is `scheduled`.

use chrono::TimeDelta;
use serde_json::{Map, Value};

use super::new_stream::check_vertical;
use super::shows::{arm_timers, shown_fields};
use super::streams::platform_permitted;
use crate::app::App;
use crate::service::creators;
use hosting_domain::Caller;
use hosting_domain::TimerKind;
use hosting_domain::account::KeyEnvironment;
use hosting_domain::destination::{new_destinations, parse_destinations};
use hosting_domain::error::{ApiError, ApiResult};
use hosting_domain::recording::parse_record;
use hosting_domain::show::{
    Show, ShowStatus, ShowView, parse_remind_minutes, parse_show_id, parse_starts_at,
};
use hosting_domain::validation::{StartStreamRequest, present};

/// The fields `PATCH /shows/{id}` takes: the timing and the stream's.
const CHANGEABLE: [&str; 10] = [
    "starts_at",
    "remind_minutes_before",
    "creator_id",
    "product_name",
    "platform",
    "duration_minutes",
    "script",
    "vertical",
    "destinations",
    "record",
];

/// `PATCH /shows/{id}`, only while `scheduled`: the fields sent replace the show's (a field
/// sent as `null` counts as absent), and the show as changed is checked as `POST /shows`
/// checks a show, in the same order.
pub async fn change(
    app: &App,
    caller: &Caller,
    id: &str,
    body: &Map<String, Value>,
    min_lead: TimeDelta,
) -> ApiResult<ShowView> {
    use hosting_domain::ports::ShowChange;
    let id = parse_show_id(id).ok_or(ApiError::NotFound)?;
    let show = app
        .shows()
        .get_show(&caller.brand.id, id)
        .await?
        .filter(|show| show.status == ShowStatus::Scheduled)
        .ok_or(ApiError::NotFound)?;
    if !CHANGEABLE[..10]
        .iter()
        .any(|field| present(body, field).is_some())
    {
        return Err(ApiError::MissingFields(
            "Send at least one of: starts_at, remind_minutes_before, or a stream field.".into(),
        ));
    }
    let environment = if show.test {
        KeyEnvironment::Test
    } else {
        KeyEnvironment::Live
    };
    // The stream's fields as they will be: the show's, with those sent over them.
    let (_, script) = app.show_starts().show_inputs(show.id).await?;
    let mut merged = show.stream.clone();
    merged.remove("destinations");
    merged.remove("record");
    if let Some(script) = &script {
        merged.insert("script".into(), script.clone().into());
    }
    for field in &CHANGEABLE[2..8] {
        if let Some(value) = present(body, field) {
            merged.insert((*field).into(), value.clone());
        }
    }
    let request = StartStreamRequest::parse(&merged, environment)?;
    let starts_at = parse_starts_at(body, app.clock.now(), min_lead)?.unwrap_or(show.starts_at);
    let remind = match present(body, "remind_minutes_before") {
        Some(_) => parse_remind_minutes(body)?,
        None => show.remind_minutes_before,
    };
    let vertical = check_vertical(caller.brand.vertical.as_str(), &request)?;
    if present(body, "creator_id").is_some() && !creators::exists(app, &request.creator_id).await? {
        return Err(ApiError::InvalidCreator);
    }
    let (destinations, sealed_keys) = match present(body, "destinations") {
        Some(value) => {
            let parsed = parse_destinations(Some(value), |platform| {
                platform_permitted(vertical, platform)
            })?;
            let (destinations, keys) = new_destinations(parsed);
            (
                destinations,
                Some(app.secrets().seal_stream_keys(&keys).await?),
            )
        }
        None => (
            serde_json::from_value(show.stream.get("destinations").cloned().unwrap_or_default())
                .unwrap_or_default(),
            None,
        ),
    };
    let record = match present(body, "record") {
        Some(value) => parse_record(Some(value))?,
        None => show.stream.get("record") == Some(&Value::Bool(true)),
    };
    let mut changed = Show {
        starts_at,
        remind_minutes_before: remind,
        stream: shown_fields(&request, &destinations, record),
        reminded: false,
        ..show.clone()
    };
    // A reminder already sent is not sent again for the same moment.
    changed.reminded =
        (show.reminded && starts_at == show.starts_at && remind == show.remind_minutes_before)
            || !changed.reminder_pending(app.clock.now());
    let script_change = present(body, "script").map(|_| request.script.as_deref());
    match app
        .shows()
        .update_scheduled_show(&changed, sealed_keys.as_ref(), script_change)
        .await?
    {
        ShowChange::Changed(stored) => {
            if stored.reminded
                && let Err(err) = app.timers.cancel(stored.id, TimerKind::ShowReminder).await
            {
                tracing::warn!(show_id = %stored.public_id(), error = %err, "reminder timer not cancelled; it finds nothing to send");
            }
            arm_timers(app, &stored).await;
            Ok(ShowView::from(&*stored))
        }
        ShowChange::Absent | ShowChange::NotScheduled => Err(ApiError::NotFound),
    }
}
