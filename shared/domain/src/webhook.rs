use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::clock::timestamp;
use crate::event_type::EventType;
use crate::sealed::StoredSecret;
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
    /// The `whsec_` secret, sealed (docs/security.md, "Secrets at rest").
    pub secret: StoredSecret,
    pub active: bool,
    pub created_at: DateTime<Utc>,
    /// The secret the last rotation replaced, signing beside the current one until
    /// `previous_secret_expires_at`.
    #[serde(default)]
    pub previous_secret: Option<StoredSecret>,
    #[serde(default)]
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub secret_rotated_at: Option<DateTime<Utc>>,
    /// The Ed25519 private key of `v1a` signatures ([`SIGNING_KEY_PREFIX`]), sealed like the
    /// secret. `None` only for a webhook registered before key pairs existed, until its next
    /// rotation.
    #[serde(default)]
    pub signing_key: Option<StoredSecret>,
    /// The private key the last rotation replaced, signing until `previous_secret_expires_at`.
    #[serde(default)]
    pub previous_signing_key: Option<StoredSecret>,
    /// The current key pair's public key (`whpk_`), stored in the clear beside its sealed
    /// private key so that showing it needs no decrypt. `None` on a webhook written before
    /// it was stored: then read from a plain private key.
    #[serde(default)]
    pub public_key: Option<String>,
    /// The first failed attempt of the current run of failures (docs/webhooks.md, "Endpoint
    /// health"); `None` after any success.
    #[serde(default)]
    pub failing_since: Option<DateTime<Utc>>,
    /// Why an inactive webhook is off; `None` while active.
    #[serde(default)]
    pub disabled_reason: Option<DisabledReason>,
}

/// Why a webhook is disabled (docs/webhooks.md, "Endpoint health").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DisabledReason {
    /// Every attempt failed for `WEBHOOK_DISABLE_AFTER_SECS`.
    Failing,
    /// The receiver answered `410 Gone`.
    Gone,
    /// `PATCH` with `active: false`.
    Manual,
}

impl DisabledReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DisabledReason::Failing => "failing",
            DisabledReason::Gone => "gone",
            DisabledReason::Manual => "manual",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Failing, Self::Gone, Self::Manual]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

impl Webhook {
    pub fn wants(&self, event_type: EventType) -> bool {
        self.active && self.events.contains(&event_type)
    }

    /// The secrets that sign a delivery at `now`: the current one, then the previous one while
    /// its overlap lasts. Never more than two.
    pub fn signing_secrets(&self, now: DateTime<Utc>) -> Vec<&StoredSecret> {
        let mut secrets = vec![&self.secret];
        if let (Some(previous), Some(expires_at)) =
            (&self.previous_secret, self.previous_secret_expires_at)
            && now < expires_at
        {
            secrets.push(previous);
        }
        secrets
    }

    /// The private keys that sign a delivery's `v1a` at `now`, like [`Self::signing_secrets`].
    pub fn signing_keys(&self, now: DateTime<Utc>) -> Vec<&StoredSecret> {
        let mut keys: Vec<&StoredSecret> = self.signing_key.iter().collect();
        if let (Some(previous), Some(expires_at)) =
            (&self.previous_signing_key, self.previous_secret_expires_at)
            && now < expires_at
        {
            keys.push(previous);
        }
        keys
    }

    /// `whpk_` and the base64 of the current public key.
    pub fn public_key(&self) -> Option<String> {
        match (&self.public_key, &self.signing_key) {
            (Some(stored), _) => Some(stored.clone()),
            (None, Some(StoredSecret::Plain(key))) => public_key(key),
            (None, _) => None,
        }
    }

    /// Whether the service disables this webhook for an attempt that failed at `at`: it has
    /// failed without a success since `failing_since`, at least `disable_after` ago.
    pub fn fails_too_long(&self, at: DateTime<Utc>, disable_after: TimeDelta) -> bool {
        self.failing_since
            .is_some_and(|since| at - since >= disable_after)
    }

    pub fn apply(&mut self, changes: &WebhookChanges) {
        if let Some(url) = &changes.url {
            self.url = url.clone();
        }
        if let Some(events) = &changes.events {
            self.events = events.clone();
        }
        match changes.active {
            // Enabling clears what disabled it, and the run of failures.
            Some(true) => {
                self.active = true;
                self.disabled_reason = None;
                self.failing_since = None;
            }
            // Disabling by hand; a webhook already off keeps its reason.
            Some(false) => {
                self.active = false;
                self.disabled_reason.get_or_insert(DisabledReason::Manual);
            }
            None => {}
        }
        if let Some(rotation) = &changes.rotation {
            self.secret = rotation.secret.clone();
            self.signing_key = Some(rotation.signing_key.clone());
            self.public_key = Some(rotation.public_key.clone());
            self.previous_signing_key = rotation.previous_signing_key.clone();
            self.previous_secret = Some(rotation.previous.clone());
            self.previous_secret_expires_at = Some(rotation.replaced_expires_at);
            self.secret_rotated_at = Some(rotation.rotated_at);
        }
    }
}

/// A new current secret, every secret in it sealed. Applied only while the webhook's secret is
/// still `replaced`, so two racing rotations cannot both keep the same previous secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRotation {
    pub secret: StoredSecret,
    /// The new Ed25519 private key; the replaced one signs for the same overlap.
    pub signing_key: StoredSecret,
    /// The new key's public key (`whpk_`).
    pub public_key: String,
    /// The current secret as read, which the rotation requires unchanged.
    pub replaced: StoredSecret,
    /// The replaced secret as kept beside the new one: sealed, even when it was stored plain.
    pub previous: StoredSecret,
    /// The replaced private key as kept, sealed.
    pub previous_signing_key: Option<StoredSecret>,
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

/// A stored private key is `whsk_` and the standard base64 of 64 bytes: the Ed25519 seed, then
/// its public key (the layout of Standard Webhooks' `whsk_` keys). The app makes and uses them
/// (`hosting_app::delivery::signing`); the model only reads the public half.
pub const SIGNING_KEY_PREFIX: &str = "whsk_";
pub const PUBLIC_KEY_PREFIX: &str = "whpk_";

/// The seed and the public key of a stored `whsk_` private key; `None` when it is malformed.
pub fn signing_key_parts(signing_key: &str) -> Option<([u8; 32], [u8; 32])> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(signing_key.strip_prefix(SIGNING_KEY_PREFIX)?)
        .ok()?;
    let (seed, public) = bytes.split_at_checked(32)?;
    Some((seed.try_into().ok()?, public.try_into().ok()?))
}

/// `whpk_` and the standard base64 of the 32-byte public key of a `whsk_` private key.
pub fn public_key(signing_key: &str) -> Option<String> {
    use base64::Engine;
    let (_, public) = signing_key_parts(signing_key)?;
    Some(format!(
        "{PUBLIC_KEY_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(public)
    ))
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
    /// `whpk_` and the base64 of the 32-byte Ed25519 public key that verifies `v1a`
    /// signatures. Public: it is also in the webhook's detail.
    #[schemars(pattern("^whpk_[A-Za-z0-9+/]{43}=$"))]
    pub public_key: String,
}

/// Item of `GET /webhooks`: never the secret.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebhookListItem {
    pub webhook_id: Uuid,
    pub url: String,
    #[schemars(length(min = 1))]
    pub events: Vec<EventType>,
    /// `false` once disabled (a `410 Gone`, failures for `WEBHOOK_DISABLE_AFTER_SECS`, or
    /// `PATCH`); the detail says why.
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
    /// `false` once disabled: see `disabled_reason`.
    pub active: bool,
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// When the secret was last rotated; `null` if never.
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub secret_rotated_at: Option<DateTime<Utc>>,
    /// `whpk_` and the base64 of the 32-byte Ed25519 public key that verifies the current
    /// `v1a` signature; `null` only for a webhook registered before key pairs existed, until
    /// its next rotation.
    #[schemars(pattern("^whpk_[A-Za-z0-9+/]{43}=$"))]
    pub public_key: Option<String>,
    /// The first failed attempt of the current run of failures; `null` after any success.
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub failing_since: Option<DateTime<Utc>>,
    /// Why the webhook is off: `failing` (every attempt failed for the configured time),
    /// `gone` (`410 Gone`) or `manual` (`PATCH active: false`). Absent while active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<DisabledReason>,
}

impl From<Webhook> for WebhookDetail {
    fn from(w: Webhook) -> Self {
        Self {
            public_key: w.public_key(),
            webhook_id: w.id,
            url: w.url,
            events: w.events,
            active: w.active,
            created_at: w.created_at,
            secret_rotated_at: w.secret_rotated_at,
            failing_since: w.failing_since,
            disabled_reason: w.disabled_reason,
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
    /// `true` re-enables a disabled webhook and clears `disabled_reason` and `failing_since`;
    /// `false` disables it (`disabled_reason: "manual"`).
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
    /// Until then every delivery is signed with both secrets, and both key pairs.
    #[serde(with = "timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub previous_secret_expires_at: DateTime<Utc>,
    /// The new key pair's public key (`whpk_`), as the detail now shows it.
    #[schemars(pattern("^whpk_[A-Za-z0-9+/]{43}=$"))]
    pub public_key: String,
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
