//! Webhook helpers shared by the registration, operation and delivery tests.

use std::time::Duration;

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use super::TestApp;

/// How long a test waits for a delivery.
pub const WAIT: Duration = Duration::from_secs(10);

/// Registers a webhook for `events` and returns (id, secret).
pub async fn register_webhook(
    api: &TestApp,
    key: &str,
    url: &str,
    events: Value,
) -> (String, String) {
    let r = api
        .post("/webhooks", key, json!({"url": url, "events": events}))
        .await;
    r.assert_status(201);
    (
        r.body["webhook_id"].as_str().unwrap().to_owned(),
        r.body["secret"].as_str().unwrap().to_owned(),
    )
}

/// HMAC-SHA256 of `message` with `key`, computed apart from the product's signing code.
pub fn hmac(key: &[u8], message: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(message.as_bytes());
    mac.finalize().into_bytes().to_vec()
}
