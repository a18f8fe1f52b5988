//! A webhook's delivery log (extensions.md E3): one record per attempt, kept 30 days, read
//! newest first; and what redelivery reads from it.

use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use uuid::Uuid;

use super::event::EventType;
use crate::clock::timestamp;

/// How long attempts (and so what can be redelivered) are kept.
pub const RETENTION: TimeDelta = TimeDelta::days(30);

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
    /// The delivered body, kept for redelivery; never shown.
    pub body: String,
}

impl DeliveryAttempt {
    /// The last attempt of a delivery that ended failed.
    pub fn ended_failed(&self) -> bool {
        !self.succeeded && self.next_attempt_at.is_none()
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
        }
    }
}

/// Response of `GET /webhooks/{id}/deliveries`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeliveryLog {
    pub deliveries: Vec<DeliveryLogEntry>,
    /// Attempts matching the filters, over every page.
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
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
}
