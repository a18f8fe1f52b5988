//! A webhook's delivery log (docs/webhooks.md, "Delivery log"): one record per attempt, kept 30
//! days, read newest first a page at a time by cursor; and the failed deliveries that
//! recovery sends again.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use uuid::Uuid;

use crate::clock::timestamp;
use crate::error::ApiError;
use crate::event_type::EventType;

/// How long attempts (and so what can be redelivered) are kept.
pub const RETENTION: TimeDelta = TimeDelta::days(30);

/// The most failed deliveries one `redeliver` with `since` queues; `has_more` says there are
/// others.
pub const MAX_REDELIVERIES_PER_CALL: usize = 1_000;

/// One attempt of one event to one webhook, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    pub brand_id: String,
    pub webhook_id: Uuid,
    pub event_id: String,
    pub event_type: EventType,
    pub event_created_at: DateTime<Utc>,
    /// 1 for the first attempt of a delivery (a redelivery starts again at 1).
    pub attempt: u32,
    pub attempted_at: DateTime<Utc>,
    pub succeeded: bool,
    /// `None` when no HTTP answer came.
    pub response_status: Option<u16>,
    pub duration_ms: u64,
    pub error: Option<String>,
    /// When this failure is retried; `None` once it succeeded or no retry remains.
    pub next_attempt_at: Option<DateTime<Utc>>,
}

impl DeliveryAttempt {
    /// The last attempt of a delivery that ended failed.
    pub fn ended_failed(&self) -> bool {
        !self.succeeded && self.next_attempt_at.is_none()
    }

    /// Where the attempt sits in its webhook's log: string order is time order, and no two
    /// attempts share one.
    pub fn position(&self) -> String {
        format!(
            "{}#{}#{}",
            self.attempted_at.format("%Y-%m-%dT%H:%M:%S%.6fZ"),
            self.event_id,
            self.attempt
        )
    }

    pub fn matches(&self, filter: &AttemptFilter) -> bool {
        filter
            .status
            .is_none_or(|wanted| (wanted == AttemptStatus::Succeeded) == self.succeeded)
            && filter
                .event_id
                .as_ref()
                .is_none_or(|wanted| *wanted == self.event_id)
    }
}

/// Whether `raw` has the shape of a [`DeliveryAttempt::position`] (time, event id, attempt).
fn is_position(raw: &str) -> bool {
    let mut parts = raw.splitn(3, '#');
    let (Some(time), Some(event_id), Some(attempt)) = (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    raw.len() <= 128
        && DateTime::parse_from_rfc3339(time).is_ok()
        && is_event_id_shape(event_id)
        && attempt.parse::<u32>().is_ok()
}

/// Whether `raw` could be an event id: a filter that cannot matches nothing, without a read
/// (and never reaches the store as an oversized key).
pub fn is_event_id_shape(raw: &str) -> bool {
    (1..=64).contains(&raw.len())
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

/// What a page of the log is filtered by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttemptFilter {
    pub status: Option<AttemptStatus>,
    pub event_id: Option<String>,
}

/// An event as it was delivered to a webhook: what sending it again needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveredEvent {
    pub brand_id: String,
    pub webhook_id: Uuid,
    pub event_id: String,
    pub event_type: EventType,
    pub event_created_at: DateTime<Utc>,
    pub body: String,
}

/// Where a walk of a log stands: the position of the last attempt shown, bound to the webhook
/// and the filters it was made with. Opaque to clients, and signed with a key only the service
/// holds, so a cursor that was altered, or made by anyone but the service, is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogCursor {
    #[serde(rename = "w")]
    pub webhook_id: Uuid,
    /// The raw `status` and `event_id` parameters, empty when absent.
    #[serde(rename = "s")]
    pub status: String,
    #[serde(rename = "e")]
    pub event_id: String,
    #[serde(rename = "p")]
    pub after: String,
}

/// The name of the service key that signs cursors.
pub const CURSOR_KEY_NAME: &str = "delivery-log-cursors";

/// How much of the HMAC-SHA256 a cursor carries: 128 bits, beyond guessing.
const CURSOR_TAG_BYTES: usize = 16;

fn cursor_mac(key: &[u8], payload: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(payload.as_bytes());
    mac
}

impl LogCursor {
    /// `<payload>.<tag>`: the cursor as base64url JSON, and its truncated HMAC under `key`.
    pub fn encode(&self, key: &[u8]) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).unwrap_or_default());
        let tag = cursor_mac(key, &payload).finalize().into_bytes();
        format!(
            "{payload}.{}",
            URL_SAFE_NO_PAD.encode(&tag[..CURSOR_TAG_BYTES])
        )
    }

    /// The cursor in `raw`, if the service made it under `key`, for this webhook and these
    /// filters.
    pub fn decode(
        raw: &str,
        key: &[u8],
        webhook_id: Uuid,
        status: &str,
        event_id: &str,
    ) -> Result<Self, ApiError> {
        let refused = || {
            ApiError::InvalidFields(
                "cursor is not a next_cursor of this webhook's log with these filters.".into(),
            )
        };
        let (payload, tag) = raw.split_once('.').ok_or_else(refused)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| refused())?;
        if tag.len() != CURSOR_TAG_BYTES {
            return Err(refused());
        }
        cursor_mac(key, payload)
            .verify_truncated_left(&tag)
            .map_err(|_| refused())?;
        let bytes = URL_SAFE_NO_PAD.decode(payload).map_err(|_| refused())?;
        let cursor: Self = serde_json::from_slice(&bytes).map_err(|_| refused())?;
        if cursor.webhook_id != webhook_id
            || cursor.status != status
            || cursor.event_id != event_id
            || !is_position(&cursor.after)
        {
            return Err(refused());
        }
        Ok(cursor)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AttemptStatus {
    Succeeded,
    Failed,
}

impl AttemptStatus {
    /// A `status` filter; anything else matches nothing (as in `GET /streams`).
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "succeeded" => Some(AttemptStatus::Succeeded),
            "failed" => Some(AttemptStatus::Failed),
            _ => None,
        }
    }
}

/// An item of `GET /webhooks/{id}/deliveries`: never a response body, never a secret.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeliveryLogEntry {
    /// `evt_` and 32 hex digits.
    pub event_id: String,
    /// `stream.started`, `stream.ended`, `stream.error` or `webhook.test`.
    pub event_type: String,
    /// 1 for the first attempt, up to 6; 1 for a test event.
    #[schemars(range(min = 1))]
    pub attempt: u32,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub attempted_at: DateTime<Utc>,
    pub status: AttemptStatus,
    /// `null` when no HTTP answer came (timeout, refused address, connection error).
    pub response_status: Option<u16>,
    pub duration_ms: u64,
    /// A short reason for a failure with no HTTP answer, or for a refused redirect.
    pub error: Option<String>,
    /// When this failure is retried; `null` when it is the last or it succeeded.
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Only on a page filtered by `event_id`: the event's body as last delivered to this webhook,
    /// byte for byte (what was sent, never what the receiver answered). Absent once no longer
    /// kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub body: Option<Box<serde_json::value::RawValue>>,
}

impl From<&DeliveryAttempt> for DeliveryLogEntry {
    fn from(a: &DeliveryAttempt) -> Self {
        Self {
            event_id: a.event_id.clone(),
            event_type: a.event_type.as_str().to_owned(),
            attempt: a.attempt,
            attempted_at: a.attempted_at,
            status: if a.succeeded {
                AttemptStatus::Succeeded
            } else {
                AttemptStatus::Failed
            },
            response_status: a.response_status,
            duration_ms: a.duration_ms,
            error: a.error.clone(),
            next_attempt_at: a.next_attempt_at,
            body: None,
        }
    }
}

/// Response of `GET /webhooks/{id}/deliveries`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeliveryLog {
    /// Newest first.
    pub deliveries: Vec<DeliveryLogEntry>,
    pub limit: u64,
    /// The `cursor` of the next page, or `null` on the last. Valid only with the same webhook
    /// and filters.
    pub next_cursor: Option<String>,
}

/// Response of `POST /webhooks/{id}/test`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TestDelivery {
    pub event_id: String,
    /// A `2xx` within the timeout.
    pub delivered: bool,
    /// `null` when no HTTP answer came.
    pub status_code: Option<u16>,
    pub duration_ms: u64,
    pub error: Option<String>,
}

/// Body of `POST /webhooks/{id}/redeliver`: exactly one of the two.
#[derive(Debug, Clone, JsonSchema)]
pub struct RedeliverRequest {
    /// Send this event again (same id and body), as a new delivery with its own retries.
    pub event_id: Option<String>,
    /// Send again every event created since then (at most 30 days ago) whose delivery ended
    /// failed.
    pub since: Option<DateTime<Utc>>,
}

/// Response of `POST /webhooks/{id}/redeliver`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Redelivered {
    pub webhook_id: Uuid,
    pub queued: u64,
    /// With `since`: more failed deliveries match; the same call again queues the next ones.
    pub has_more: bool,
}
