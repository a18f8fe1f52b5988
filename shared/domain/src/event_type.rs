//! The types of the events the API sends, and the names webhooks subscribe to (docs/webhooks.md,
//! "Events"). Below the entities and the events: a stream names the type its transitions
//! send, a webhook the types it wants, and neither needs the events themselves.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventType {
    #[serde(rename = "stream.started")]
    StreamStarted,
    #[serde(rename = "stream.ended")]
    StreamEnded,
    #[serde(rename = "stream.error")]
    StreamError,
    #[serde(rename = "stream.destination_active")]
    DestinationActive,
    #[serde(rename = "stream.destination_failed")]
    DestinationFailed,
    #[serde(rename = "stream.recording_ready")]
    RecordingReady,
    #[serde(rename = "stream.recording_failed")]
    RecordingFailed,
    /// A clip was cut and can be downloaded (docs/clips.md).
    #[serde(rename = "stream.clip_ready")]
    ClipReady,
    /// A clip could not be cut.
    #[serde(rename = "stream.clip_failed")]
    ClipFailed,
    /// The service disabled one of the brand's webhooks (docs/webhooks.md, "Endpoint health").
    #[serde(rename = "webhook.disabled")]
    WebhookDisabled,
    /// A scheduled show's stream was started (docs/shows.md).
    #[serde(rename = "show.started")]
    ShowStarted,
    /// A scheduled show could not be started.
    #[serde(rename = "show.failed")]
    ShowFailed,
    /// A scheduled show starts in `remind_minutes_before` minutes.
    #[serde(rename = "show.reminder")]
    ShowReminder,
    /// The event `POST /webhooks/{id}/test` sends; nobody subscribes to it.
    #[serde(rename = "webhook.test")]
    WebhookTest,
}

/// The types a webhook subscribes to: a plain string enumeration of [`EventType::ALL`]
/// (`webhook.test` is no subscription).
impl JsonSchema for EventType {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EventType".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Self::ALL.iter().map(|t| t.as_str()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

impl EventType {
    /// The types a webhook subscribes to.
    pub const ALL: [EventType; 13] = [
        EventType::StreamStarted,
        EventType::StreamEnded,
        EventType::StreamError,
        EventType::DestinationActive,
        EventType::DestinationFailed,
        EventType::RecordingReady,
        EventType::RecordingFailed,
        EventType::ClipReady,
        EventType::ClipFailed,
        EventType::WebhookDisabled,
        EventType::ShowStarted,
        EventType::ShowFailed,
        EventType::ShowReminder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::StreamStarted => "stream.started",
            EventType::StreamEnded => "stream.ended",
            EventType::StreamError => "stream.error",
            EventType::DestinationActive => "stream.destination_active",
            EventType::DestinationFailed => "stream.destination_failed",
            EventType::RecordingReady => "stream.recording_ready",
            EventType::RecordingFailed => "stream.recording_failed",
            EventType::ClipReady => "stream.clip_ready",
            EventType::ClipFailed => "stream.clip_failed",
            EventType::WebhookDisabled => "webhook.disabled",
            EventType::ShowStarted => "show.started",
            EventType::ShowFailed => "show.failed",
            EventType::ShowReminder => "show.reminder",
            EventType::WebhookTest => "webhook.test",
        }
    }

    /// A subscribable type by name (never `webhook.test`).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}
