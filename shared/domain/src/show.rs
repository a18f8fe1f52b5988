//! Scheduled shows: a show is its own resource that becomes a stream at its time, started as
//! `POST /streams` would start it, in the key mode it was made with. The stream's state machine
//! is untouched.

use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::{ApiError, ApiResult};
use crate::validation::present;

/// How far ahead a show may be scheduled.
pub const MAX_DAYS_AHEAD: i64 = 30;
/// `remind_minutes_before`: a JSON integer in this range.
pub const REMIND_MINUTES_RANGE: std::ops::RangeInclusive<i64> = 1..=1440;
/// `SHOW_MIN_LEAD_SECS` when unset.
pub const DEFAULT_MIN_LEAD_SECS: u64 = 60;
/// How late a start may be before it counts as late in the metrics.
pub const LATE_AFTER: TimeDelta = TimeDelta::seconds(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShowStatus {
    Scheduled,
    /// Claimed by one starter until `claim_until`; a starter that died is taken over after it.
    Starting,
    Started,
    Failed,
    Cancelled,
}

impl ShowStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ShowStatus::Scheduled => "scheduled",
            ShowStatus::Starting => "starting",
            ShowStatus::Started => "started",
            ShowStatus::Failed => "failed",
            ShowStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Scheduled,
            Self::Starting,
            Self::Started,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
    }
}

/// Why a show failed: the error envelope's `code` and `message` the same `POST /streams` would
/// have got at its time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShowError {
    pub code: String,
    pub message: String,
}

/// A scheduled show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Show {
    /// Shown as `shw_` and its 32 lowercase hex digits ([`Show::public_id`]); the timers of
    /// its start and reminder are keyed on it as a stream's are on the stream's.
    pub id: Uuid,
    pub brand_id: String,
    pub status: ShowStatus,
    pub starts_at: DateTime<Utc>,
    pub remind_minutes_before: Option<u32>,
    /// The `POST /streams` body as checked, destination keys taken out (kept apart until the
    /// show starts or is cancelled, never shown).
    pub stream: Map<String, Value>,
    pub stream_id: Option<Uuid>,
    pub error: Option<ShowError>,
    pub created_at: DateTime<Utc>,
    /// The mode of the key it was made with: a test key's show starts a test stream.
    pub test: bool,
    /// Whether no reminder is left to send: none was asked for, its moment had passed when the
    /// show was scheduled, or `show.reminder` was written.
    pub reminded: bool,
    /// While `starting`: until when its starter holds it.
    pub claim_until: Option<DateTime<Utc>>,
}

/// The id of `shw_` and 32 lowercase hex digits; `None` for anything else (absent, then).
pub fn parse_show_id(id: &str) -> Option<Uuid> {
    let hex = id.strip_prefix("shw_")?;
    let in_form = hex.len() == 32
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    in_form.then(|| Uuid::parse_str(hex).ok()).flatten()
}

/// `starts_at`: a date-time at least `min_lead` and at most [`MAX_DAYS_AHEAD`] days after
/// `now`. `None` when absent (a missing field, checked with the others).
pub fn parse_starts_at(
    body: &Map<String, Value>,
    now: DateTime<Utc>,
    min_lead: TimeDelta,
) -> ApiResult<Option<DateTime<Utc>>> {
    let Some(value) = present(body, "starts_at") else {
        return Ok(None);
    };
    let invalid = || {
        ApiError::InvalidFields(format!(
            "starts_at must be a date-time at least {} seconds and at most {MAX_DAYS_AHEAD} days ahead.",
            min_lead.num_seconds()
        ))
    };
    let at = value
        .as_str()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|at| at.with_timezone(&Utc))
        .ok_or_else(invalid)?;
    if at < now + min_lead || at > now + TimeDelta::days(MAX_DAYS_AHEAD) {
        return Err(invalid());
    }
    Ok(Some(at))
}

/// `remind_minutes_before`: absent or `null` for none, else a JSON integer from 1 to 1440.
pub fn parse_remind_minutes(body: &Map<String, Value>) -> ApiResult<Option<u32>> {
    let Some(value) = present(body, "remind_minutes_before") else {
        return Ok(None);
    };
    value
        .as_i64()
        .filter(|minutes| REMIND_MINUTES_RANGE.contains(minutes))
        .map(|minutes| Some(minutes as u32))
        .ok_or_else(|| {
            ApiError::InvalidFields(
                "remind_minutes_before must be a whole number from 1 to 1440.".into(),
            )
        })
}

impl Show {
    /// `shw_` and 32 lowercase hex digits.
    pub fn public_id(&self) -> String {
        format!("shw_{}", self.id.simple())
    }

    /// When `show.reminder` is due, if the show asks for one.
    pub fn reminder_at(&self) -> Option<DateTime<Utc>> {
        self.remind_minutes_before
            .map(|minutes| self.starts_at - TimeDelta::minutes(i64::from(minutes)))
    }

    /// Whether a reminder is still to be sent at `now`: asked for, not sent, the show still
    /// `scheduled`, and its moment not passed when it was scheduled (`scheduled_at`).
    pub fn reminder_pending(&self, scheduled_at: DateTime<Utc>) -> bool {
        self.status == ShowStatus::Scheduled
            && !self.reminded
            && self.reminder_at().is_some_and(|at| at > scheduled_at)
    }

    /// Whether a starter may claim the show at `now`: `scheduled` and due, or `starting` under
    /// a claim that ran out (its starter died).
    pub fn claimable(&self, now: DateTime<Utc>) -> bool {
        match self.status {
            ShowStatus::Scheduled => self.starts_at <= now,
            ShowStatus::Starting => self.claim_until.is_some_and(|until| until <= now),
            _ => false,
        }
    }

    /// When the show next needs the service: its reminder (while pending) or its start while
    /// `scheduled`, the end of its claim while `starting`; `None` once settled.
    pub fn next_moment(&self) -> Option<DateTime<Utc>> {
        match self.status {
            ShowStatus::Scheduled => {
                let reminder = self
                    .reminder_at()
                    .filter(|at| !self.reminded && *at < self.starts_at);
                Some(reminder.unwrap_or(self.starts_at))
            }
            ShowStatus::Starting => self.claim_until,
            _ => None,
        }
    }

    /// This change of a `scheduled` show, computed from an earlier read, laid over `stored`,
    /// the show as it is now: a reminder sent meanwhile for the same moment stays sent.
    pub fn over(&self, stored: &Show) -> Show {
        let mut changed = self.clone();
        changed.reminded |= stored.reminded && stored.reminder_at() == self.reminder_at();
        changed
    }

    /// Whether a start at `started_at` counts as late.
    pub fn late(&self, started_at: DateTime<Utc>) -> bool {
        started_at - self.starts_at > LATE_AFTER
    }
}

/// A show as every answer and event shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShowView {
    /// `shw_` and 32 lowercase hex digits.
    #[schemars(pattern("^shw_[0-9a-f]{32}$"))]
    pub show_id: String,
    pub status: ShowStatus,
    #[serde(with = "crate::clock::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub starts_at: DateTime<Utc>,
    pub remind_minutes_before: Option<u32>,
    /// The stream's fields as given to `POST /shows` (or its last `PATCH`), each destination's
    /// key shown as its `stream_key_last4`; never the script.
    #[schemars(with = "Map<String, Value>")]
    pub stream: Map<String, Value>,
    /// The stream the show started; `null` until then, and for a show that failed (a failed
    /// launch's stream, in `error`, is in `GET /streams` as `POST /streams` would have left it).
    pub stream_id: Option<Uuid>,
    /// Why it failed: the error envelope's `code` and `message`; `null` otherwise.
    pub error: Option<ShowError>,
    #[serde(with = "crate::clock::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// Whether it was made with a test key (and starts a test stream).
    pub test: bool,
}

impl From<&Show> for ShowView {
    fn from(show: &Show) -> Self {
        Self {
            show_id: show.public_id(),
            status: show.status,
            starts_at: show.starts_at,
            remind_minutes_before: show.remind_minutes_before,
            stream: show.stream.clone(),
            stream_id: show
                .stream_id
                .filter(|_| show.status == ShowStatus::Started),
            error: show.error.clone(),
            created_at: show.created_at,
            test: show.test,
        }
    }
}

/// Response of `GET /shows`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShowList {
    pub shows: Vec<ShowView>,
    /// Shows matching the filter, over every page.
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn starts_at_is_between_the_lead_and_thirty_days() {
        let now = at(0);
        let lead = TimeDelta::seconds(60);
        let parse = |v: Value| parse_starts_at(&body(json!({ "starts_at": v })), now, lead);
        assert_eq!(parse(json!(at(60).to_rfc3339())).unwrap(), Some(at(60)));
        assert_eq!(
            parse(json!(at(30 * 86_400).to_rfc3339())).unwrap(),
            Some(at(30 * 86_400))
        );
        for bad in [
            json!(at(59).to_rfc3339()),
            json!(at(30 * 86_400 + 1).to_rfc3339()),
            json!("tomorrow"),
            json!(1_800_000_100),
            json!("2027-01-15"),
        ] {
            assert!(matches!(parse(bad), Err(ApiError::InvalidFields(_))));
        }
        assert_eq!(parse(Value::Null).unwrap(), None);
        assert_eq!(parse_starts_at(&Map::new(), now, lead).unwrap(), None);
    }

    #[test]
    fn remind_minutes_is_an_integer_from_1_to_1440() {
        let parse = |v: Value| parse_remind_minutes(&body(json!({ "remind_minutes_before": v })));
        assert_eq!(parse(json!(1)).unwrap(), Some(1));
        assert_eq!(parse(json!(1440)).unwrap(), Some(1440));
        assert_eq!(parse(Value::Null).unwrap(), None);
        for bad in [json!(0), json!(1441), json!(1.5), json!("5"), json!(true)] {
            assert!(parse(bad).is_err());
        }
    }

    fn show(status: ShowStatus) -> Show {
        Show {
            id: Uuid::new_v4(),
            brand_id: "brand_a".into(),
            status,
            starts_at: at(3_600),
            remind_minutes_before: Some(15),
            stream: body(
                json!({"creator_id": "avt_ava000000001", "product_name": "Glow Serum",
                "platform": "tiktok", "duration_minutes": 30}),
            ),
            stream_id: None,
            error: None,
            created_at: at(0),
            test: true,
            reminded: false,
            claim_until: None,
        }
    }

    #[test]
    fn the_reminder_is_due_before_the_start_and_only_while_scheduled() {
        let scheduled = show(ShowStatus::Scheduled);
        assert_eq!(scheduled.reminder_at(), Some(at(3_600 - 15 * 60)));
        assert!(scheduled.reminder_pending(at(0)));
        // Its moment had passed when it was scheduled: none.
        assert!(!scheduled.reminder_pending(at(3_600 - 15 * 60)));
        assert!(!show(ShowStatus::Cancelled).reminder_pending(at(0)));
        let reminded = Show {
            reminded: true,
            ..scheduled.clone()
        };
        assert!(!reminded.reminder_pending(at(0)));
    }

    #[test]
    fn a_change_keeps_a_reminder_sent_meanwhile_for_the_same_moment_only() {
        let read = show(ShowStatus::Scheduled);
        let sent = Show {
            reminded: true,
            ..read.clone()
        };
        let renamed = Show {
            stream: body(json!({"product_name": "Night Cream"})),
            ..read.clone()
        };
        assert!(renamed.over(&sent).reminded);
        assert!(!renamed.over(&read).reminded);
        let moved = Show {
            starts_at: at(7_200),
            ..read.clone()
        };
        assert!(!moved.over(&sent).reminded);
        assert_eq!(moved.over(&sent).starts_at, at(7_200));
    }

    #[test]
    fn a_show_is_claimable_when_due_or_when_its_claim_ran_out() {
        let scheduled = show(ShowStatus::Scheduled);
        assert!(!scheduled.claimable(at(3_599)));
        assert!(scheduled.claimable(at(3_600)));
        let starting = Show {
            status: ShowStatus::Starting,
            claim_until: Some(at(3_700)),
            ..scheduled.clone()
        };
        assert!(!starting.claimable(at(3_699)));
        assert!(starting.claimable(at(3_700)));
        for settled in [
            ShowStatus::Started,
            ShowStatus::Failed,
            ShowStatus::Cancelled,
        ] {
            assert!(!show(settled).claimable(at(10_000)));
        }
        assert!(!scheduled.late(at(3_660)));
        assert!(scheduled.late(at(3_661)));
    }

    #[test]
    fn a_show_event_carries_the_show_and_the_stream_it_started() {
        let failed = Show {
            error: Some(ShowError {
                code: "concurrency_limit".into(),
                message: "Too many active streams.".into(),
            }),
            ..show(ShowStatus::Failed)
        };
        let event =
            crate::StreamEvent::show(crate::EventType::ShowFailed, &failed, None, at(3_600));
        let body: Value = serde_json::from_str(&event.body).unwrap();
        assert_eq!(body["type"], "show.failed");
        assert_eq!(body["test"], true);
        assert_eq!(body["data"]["show"]["show_id"], failed.public_id());
        assert_eq!(body["data"]["show"]["status"], "failed");
        assert_eq!(body["data"]["show"]["error"]["code"], "concurrency_limit");
        assert!(body["data"].get("stream").is_none());
        assert_eq!(event.stream_id, None);
    }

    #[test]
    fn show_ids_are_shw_and_32_lowercase_hex() {
        let shown = show(ShowStatus::Scheduled);
        let id = shown.public_id();
        assert_eq!(parse_show_id(&id), Some(shown.id), "{id}");
        assert_eq!(parse_show_id(&id.to_uppercase()), None);
        assert_eq!(parse_show_id("shw_123"), None);
        assert_eq!(parse_show_id(&id.replace("shw_", "str_")), None);
        assert_eq!(parse_show_id(&shown.id.to_string()), None);
    }
}
