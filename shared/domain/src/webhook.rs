use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::event::EventType;
use crate::clock::timestamp;
use crate::webhook_url::MAX_URL_CHARS;

/// Most webhooks one brand may hold.
pub const MAX_WEBHOOKS_PER_BRAND: usize = 25;
/// How long a rotated-out secret keeps signing, at most and by default
/// (docs/webhooks.md, "Rotate the secret").
pub const MAX_SECRET_OVERLAP_SECS: u32 = 86_400;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Webhook {
    pub id: Uuid,
    pub brand_id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub secret: String,
    pub active: bool,
    pub created_at: DateTime<Utc>,
    /// The secret the last rotation replaced, signing beside the current one until
    /// `previous_secret_expires_at`.
    #[serde(default)]
    pub previous_secret: Option<String>,
    #[serde(default)]
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub secret_rotated_at: Option<DateTime<Utc>>,
}

impl Webhook {
    pub fn wants(&self, event_type: EventType) -> bool {
        self.active && self.events.contains(&event_type)
    }

    /// The secrets that sign a delivery at `now`: the current one, then the previous one while
    /// its overlap lasts. Never more than two.
    pub fn signing_secrets(&self, now: DateTime<Utc>) -> Vec<&str> {
        let mut secrets = vec![self.secret.as_str()];
        if let (Some(previous), Some(expires_at)) =
            (&self.previous_secret, self.previous_secret_expires_at)
            && now < expires_at
        {
            secrets.push(previous);
        }
        secrets
    }

    /// Replacing the current secret with `secret` at `now`: the replaced one signs too for
    /// `overlap`, and any older one stops.
    pub fn rotation(
        &self,
        secret: String,
        overlap: TimeDelta,
        now: DateTime<Utc>,
    ) -> SecretRotation {
        SecretRotation {
            secret,
            replaced: self.secret.clone(),
            replaced_expires_at: now + overlap,
            rotated_at: now,
        }
    }

    pub fn apply(&mut self, changes: &WebhookChanges) {
        if let Some(url) = &changes.url {
            self.url = url.clone();
        }
        if let Some(events) = &changes.events {
            self.events = events.clone();
        }
        if let Some(active) = changes.active {
            self.active = active;
        }
        if let Some(rotation) = &changes.rotation {
            self.secret = rotation.secret.clone();
            self.previous_secret = Some(rotation.replaced.clone());
            self.previous_secret_expires_at = Some(rotation.replaced_expires_at);
            self.secret_rotated_at = Some(rotation.rotated_at);
        }
    }
}

/// A new current secret. Applied only while the webhook's secret is still `replaced`, so two
/// racing rotations cannot both keep the same previous secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRotation {
    pub secret: String,
    pub replaced: String,
    pub replaced_expires_at: DateTime<Utc>,
    pub rotated_at: DateTime<Utc>,
}

/// What one update changes; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookChanges {
    pub url: Option<String>,
    pub events: Option<Vec<EventType>>,
    pub active: Option<bool>,
    pub rotation: Option<SecretRotation>,
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

// Checked in this order: both fields present, then `url`, then `events`.
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

/// Response of `GET /webhooks/{id}` and `PATCH /webhooks/{id}`: never the secret.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookDetail {
    pub webhook_id: Uuid,
    pub url: String,
    #[schemars(length(min = 1))]
    pub events: Vec<EventType>,
    /// `false` once the receiver answered `410 Gone`, or after `PATCH` with `active: false`.
    pub active: bool,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// When the secret was last rotated; `null` if never.
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub secret_rotated_at: Option<DateTime<Utc>>,
}

impl From<Webhook> for WebhookDetail {
    fn from(w: Webhook) -> Self {
        Self {
            webhook_id: w.id,
            url: w.url,
            events: w.events,
            active: w.active,
            created_at: w.created_at,
            secret_rotated_at: w.secret_rotated_at,
        }
    }
}

/// Body of `PATCH /webhooks/{id}`: at least one of the three; unknown fields are ignored.
#[derive(Debug, Clone, JsonSchema)]
pub struct UpdateWebhookRequest {
    /// HTTPS on a public host, as at registration.
    #[schemars(url, length(max = MAX_URL_CHARS))]
    pub url: Option<String>,
    /// As at registration; replaces the list.
    #[schemars(length(min = 1))]
    pub events: Option<Vec<EventType>>,
    /// `true` re-enables a webhook a `410 Gone` turned off.
    pub active: Option<bool>,
}

/// Body of `POST /webhooks/{id}/rotate-secret`; the body itself is optional.
#[derive(Debug, Clone, JsonSchema)]
pub struct RotateSecretRequest {
    /// How long the replaced secret keeps signing beside the new one; 86400 when absent.
    #[schemars(range(min = 0, max = MAX_SECRET_OVERLAP_SECS))]
    pub expire_previous_in_seconds: Option<u32>,
}

/// Response of `POST /webhooks/{id}/rotate-secret`: the only time the new secret is shown.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SecretRotated {
    pub webhook_id: Uuid,
    /// `whsec_` and 32 base64 characters.
    #[schemars(pattern("^whsec_[A-Za-z0-9+/]{32}$"))]
    pub secret: String,
    /// Until then every delivery is signed with both secrets.
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub previous_secret_expires_at: DateTime<Utc>,
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
