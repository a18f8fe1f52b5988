//! The LiveKit part of the configuration (docs/configuration.md: `LIVEKIT_*`): its keys and
//! their secrets, which never reach a log line.

use std::fmt;
use std::sync::Arc;

use tokio::sync::watch;

use super::ConfigError;

#[derive(Clone, PartialEq, Eq)]
pub struct LiveKitConfig {
    /// As configured; `ws_url` is derived from it.
    pub url: String,
    pub api_key: String,
    pub api_secret: ApiSecret,
    pub agent_name: String,
    /// `EGRESS_LAYOUT`: the room-composite layout destinations are pushed with.
    pub egress_layout: String,
    /// `LIVEKIT_WEBHOOK_API_KEY`: the key LiveKit signs its webhooks with, when it is another.
    pub webhook_key: Option<WebhookKey>,
}

/// A key LiveKit signs its webhooks with besides the API key (LiveKit's `webhook.api_key`),
/// with its secret.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookKey {
    pub api_key: String,
    pub api_secret: ApiSecret,
}

impl fmt::Debug for WebhookKey {
    // The secret never reaches a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookKey")
            .field("api_key", &self.api_key)
            .field("api_secret", &"<redacted>")
            .finish()
    }
}

/// The LiveKit API secret: known from the start (the local server, tests), or still being read
/// while the instance already serves (in Lambda, from SSM). What signs or verifies with it
/// waits for it; nothing else does.
#[derive(Clone)]
pub struct ApiSecret(watch::Receiver<Option<Arc<str>>>);

/// Delivers a pending [`ApiSecret`] to everything waiting for it.
pub struct SecretArrival(watch::Sender<Option<Arc<str>>>);

/// The secret will never come: its read gave up (the instance stops then, see
/// docs/configuration.md).
#[derive(Debug, thiserror::Error)]
#[error("the LiveKit API secret could not be read")]
pub struct SecretUnavailable;

impl ApiSecret {
    pub fn known(secret: impl Into<Arc<str>>) -> Self {
        let (_, receiver) = watch::channel(Some(secret.into()));
        Self(receiver)
    }

    /// A secret to be delivered through the returned [`SecretArrival`].
    pub fn pending() -> (SecretArrival, Self) {
        let (sender, receiver) = watch::channel(None);
        (SecretArrival(sender), Self(receiver))
    }

    /// The secret, once it is known.
    pub async fn get(&self) -> Result<Arc<str>, SecretUnavailable> {
        let mut receiver = self.0.clone();
        let known = receiver
            .wait_for(Option::is_some)
            .await
            .map_err(|_| SecretUnavailable)?;
        known.clone().ok_or(SecretUnavailable)
    }
}

impl SecretArrival {
    pub fn deliver(self, secret: impl Into<Arc<str>>) {
        self.0.send_replace(Some(secret.into()));
    }
}

impl PartialEq for ApiSecret {
    fn eq(&self, other: &Self) -> bool {
        *self.0.borrow() == *other.0.borrow()
    }
}

impl Eq for ApiSecret {}

impl fmt::Debug for ApiSecret {
    // The secret never reaches a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Debug for LiveKitConfig {
    // The secret never reaches a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveKitConfig")
            .field("url", &self.url)
            .field("api_key", &self.api_key)
            .field("api_secret", &"<redacted>")
            .field("agent_name", &self.agent_name)
            .field("webhook_key", &self.webhook_key)
            .finish()
    }
}

/// `LIVEKIT_WEBHOOK_API_KEY` and its secret, when the key is set.
pub(super) fn webhook_key(
    get: &impl Fn(&str) -> Option<String>,
) -> Result<Option<WebhookKey>, ConfigError> {
    let Some(api_key) = get("LIVEKIT_WEBHOOK_API_KEY").filter(|key| !key.trim().is_empty()) else {
        return Ok(None);
    };
    let api_secret = get("LIVEKIT_WEBHOOK_API_SECRET").ok_or_else(|| ConfigError {
        variable: "LIVEKIT_WEBHOOK_API_SECRET",
        reason: "required with LIVEKIT_WEBHOOK_API_KEY (in Lambda, through \
                 LIVEKIT_WEBHOOK_API_SECRET_PARAMETER)"
            .into(),
    })?;
    Ok(Some(WebhookKey {
        api_key: api_key.trim().to_owned(),
        api_secret: ApiSecret::known(api_secret),
    }))
}
