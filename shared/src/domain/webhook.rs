use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::event::EventType;
use crate::clock::timestamp;
use crate::webhook_url::MAX_URL_CHARS;

/// Most webhooks one brand may hold.
pub const MAX_WEBHOOKS_PER_BRAND: usize = 25;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Webhook {
    pub id: Uuid,
    pub brand_id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub secret: String,
    pub active: bool,
    pub created_at: DateTime<Utc>,
}

impl Webhook {
    pub fn wants(&self, event_type: EventType) -> bool {
        self.active && self.events.contains(&event_type)
    }
}

/// `whsec_` and the standard base64 of 24 random bytes (32 characters).
pub fn generate_secret() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

// Checked in the order of decisions.md section 7.
/// Body of `POST /webhooks`.
#[derive(Debug, Clone, JsonSchema)]
pub struct RegisterWebhookRequest {
    /// HTTPS on a public host.
    #[schemars(url, length(max = MAX_URL_CHARS))]
    pub url: String,
    /// Duplicates are dropped.
    #[schemars(length(min = 1))]
    pub events: Vec<EventType>,
}

/// Response of `POST /webhooks`: the only time the secret is shown.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookRegistered {
    pub webhook_id: Uuid,
    pub url: String,
    #[schemars(length(min = 1))]
    pub events: Vec<EventType>,
    /// `whsec_` and 32 base64 characters. Shown only here: keep it.
    #[schemars(pattern("^whsec_[A-Za-z0-9+/]{32}$"))]
    pub secret: String,
    pub active: bool,
}

/// Item of `GET /webhooks`: never the secret.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookListItem {
    pub webhook_id: Uuid,
    pub url: String,
    #[schemars(length(min = 1))]
    pub events: Vec<EventType>,
    /// `false` once the receiver answered `410 Gone`.
    pub active: bool,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
}

/// Response of `DELETE /webhooks`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookDeleted {
    /// The id as sent.
    pub webhook_id: String,
    /// Always `true`: deleting is idempotent.
    pub deleted: bool,
}

/// Response of `GET /webhooks`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookList {
    pub webhooks: Vec<WebhookListItem>,
}

impl From<Webhook> for WebhookListItem {
    fn from(w: Webhook) -> Self {
        Self {
            webhook_id: w.id,
            url: w.url,
            events: w.events,
            active: w.active,
            created_at: w.created_at,
        }
    }
}
