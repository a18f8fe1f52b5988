//! Webhook events (docs/webhooks.md, "Events"): one per lifecycle transition, test streams
//! included.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::destination::{Destination, DestinationStatus};
use super::recording::RecordingStatus;
use super::stream::{Stream, StreamDetail};
use crate::clock::timestamp;
use crate::webhook::{Webhook, WebhookDetail};

pub use crate::event_type::EventType;

/// An event as written to the outbox, in the same atomic step as the transition that caused it.
/// `body` is the exact JSON delivered to receivers; it never changes between attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamEvent {
    pub id: String,
    pub event_type: EventType,
    pub brand_id: String,
    /// The stream the event is about; `None` for a webhook's own event (`webhook.disabled`).
    pub stream_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub body: String,
}

/// The body POSTed to webhooks: the same bytes on every attempt.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookEvent {
    /// `evt_` and 32 hex digits; deduplicate on this.
    #[schemars(pattern("^evt_[0-9a-f]{32}$"))]
    pub id: String,
    #[serde(rename = "type")]
    pub event_type: EventType,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// `v1`.
    pub api_version: &'static str,
    /// Whether the stream was started with a test key.
    pub test: bool,
    pub data: WebhookEventData,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookEventData {
    /// The stream right after the change, as `GET /streams/{id}` shows it.
    pub stream: StreamDetail,
    /// The destination whose state changed (`stream.destination_active`, `stream.destination_failed` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// The clip that was cut or could not be (`stream.clip_ready`, `stream.clip_failed` only), its `url` and `url_expires_at` `null`: read the clip for a fresh URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip: Option<crate::clip::ClipView>,
}

/// The body of `webhook.disabled`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookDisabledEvent {
    /// `evt_` and 32 hex digits; deduplicate on this.
    #[schemars(pattern("^evt_[0-9a-f]{32}$"))]
    pub id: String,
    /// `webhook.disabled`.
    #[serde(rename = "type")]
    pub event_type: EventType,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// `v1`.
    pub api_version: &'static str,
    /// Always `false`: a webhook serves both key modes.
    pub test: bool,
    pub data: WebhookDisabledData,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookDisabledData {
    /// The disabled webhook, as `GET /webhooks/{id}` shows it: never a secret or private key.
    pub webhook: WebhookDetail,
}

/// The body of `show.started`, `show.failed` and `show.reminder`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShowEvent {
    /// `evt_` and 32 hex digits; deduplicate on this.
    #[schemars(pattern("^evt_[0-9a-f]{32}$"))]
    pub id: String,
    #[serde(rename = "type")]
    pub event_type: EventType,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// `v1`.
    pub api_version: &'static str,
    /// Whether the show was made with a test key.
    pub test: bool,
    pub data: ShowEventData,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShowEventData {
    /// The show right after the change.
    pub show: crate::show::ShowView,
    /// The stream it started (`show.started` only), as `GET /streams/{id}` shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamDetail>,
}

/// `evt_` and 32 lowercase hex digits.
pub fn new_event_id() -> String {
    format!("evt_{}", Uuid::new_v4().simple())
}

impl StreamEvent {
    /// `webhook.disabled` for `webhook` as it is once disabled.
    pub fn webhook_disabled(webhook: &Webhook, at: DateTime<Utc>) -> Self {
        let id = new_event_id();
        let body = WebhookDisabledEvent {
            id: id.clone(),
            event_type: EventType::WebhookDisabled,
            created_at: at,
            api_version: "v1",
            test: false,
            data: WebhookDisabledData {
                webhook: WebhookDetail::from(webhook.clone()),
            },
        };
        Self {
            id,
            event_type: EventType::WebhookDisabled,
            brand_id: webhook.brand_id.clone(),
            stream_id: None,
            created_at: at,
            body: serde_json::to_string(&body).unwrap_or_default(),
        }
    }

    /// A show's event: `show` as it is after the change, and the stream it started.
    pub fn show(
        event_type: EventType,
        show: &crate::show::Show,
        stream: Option<&Stream>,
        at: DateTime<Utc>,
    ) -> Self {
        let id = new_event_id();
        let body = ShowEvent {
            id: id.clone(),
            event_type,
            created_at: at,
            api_version: "v1",
            test: show.test,
            data: ShowEventData {
                show: show.into(),
                stream: stream.map(|s| StreamDetail::new(s, s.creator_id.clone())),
            },
        };
        Self {
            id,
            event_type,
            brand_id: show.brand_id.clone(),
            stream_id: stream.map(|s| s.id),
            created_at: at,
            body: serde_json::to_string(&body).unwrap_or_default(),
        }
    }

    /// Whether the event is about the stream `stream_id`.
    pub fn is_about(&self, stream_id: Uuid) -> bool {
        self.stream_id == Some(stream_id)
    }

    /// The event for `stream` as it is right after the change; `creator_id` as stored.
    pub fn new(event_type: EventType, stream: &Stream, at: DateTime<Utc>) -> Self {
        Self::build(event_type, stream, None, at)
    }

    /// The event of `destination` of `stream` reaching `active` or `failed`.
    pub fn destination(stream: &Stream, destination: &Destination, at: DateTime<Utc>) -> Self {
        let event_type = if destination.status == DestinationStatus::Active {
            EventType::DestinationActive
        } else {
            EventType::DestinationFailed
        };
        Self::build(event_type, stream, Some(destination.clone()), at)
    }

    /// The events of a change from `before` to `after` made at `at`: `main` (a status
    /// change's) first, then one per destination that reached `active` or `failed`, then the
    /// recording's when it reached `ready` or `failed`.
    pub fn of_change(
        main: Option<EventType>,
        before: &Stream,
        after: &Stream,
        at: DateTime<Utc>,
    ) -> Vec<Self> {
        main.map(|event_type| Self::new(event_type, after, at))
            .into_iter()
            .chain(
                after
                    .evented_destination_changes(before)
                    .into_iter()
                    .map(|destination| Self::destination(after, destination, at)),
            )
            .chain(after.evented_recording_change(before).map(|status| {
                let event_type = if status == RecordingStatus::Ready {
                    EventType::RecordingReady
                } else {
                    EventType::RecordingFailed
                };
                Self::new(event_type, after, at)
            }))
            .collect()
    }

    /// The events a new stream is created with: `announce` (a test stream's start), then one
    /// per destination already `active` (a test stream's).
    pub fn of_creation(announce: Option<EventType>, stream: &Stream) -> Vec<Self> {
        let before = Stream {
            destinations: Vec::new(),
            ..stream.clone()
        };
        Self::of_change(announce, &before, stream, stream.created_at)
    }

    /// `stream.clip_ready` or `stream.clip_failed` of `clip` (as shown, without a URL) of
    /// `stream`.
    pub fn clip(stream: &Stream, clip: crate::clip::ClipView, at: DateTime<Utc>) -> Self {
        let event_type = if clip.status == crate::clip::ClipStatus::Ready {
            EventType::ClipReady
        } else {
            EventType::ClipFailed
        };
        Self::build_with(event_type, stream, None, Some(clip), at)
    }

    fn build(
        event_type: EventType,
        stream: &Stream,
        destination: Option<Destination>,
        at: DateTime<Utc>,
    ) -> Self {
        Self::build_with(event_type, stream, destination, None, at)
    }

    fn build_with(
        event_type: EventType,
        stream: &Stream,
        destination: Option<Destination>,
        clip: Option<crate::clip::ClipView>,
        at: DateTime<Utc>,
    ) -> Self {
        let id = new_event_id();
        let body = WebhookEvent {
            id: id.clone(),
            event_type,
            created_at: at,
            api_version: "v1",
            test: stream.test,
            data: WebhookEventData {
                stream: StreamDetail::new(stream, stream.creator_id.clone()),
                destination,
                clip,
            },
        };
        let body = serde_json::to_string(&body).unwrap_or_default();
        Self {
            id,
            event_type,
            brand_id: stream.brand_id.clone(),
            stream_id: Some(stream.id),
            created_at: at,
            body,
        }
    }
}
