//! Webhooks: registration, listing and deletion (`POST`, `GET` and `DELETE /webhooks`,
//! docs/webhooks.md, "Registration" and "Listing and deleting"), and one webhook's operations
//! (docs/webhooks.md, "Webhook operations"): `GET` and `PATCH /webhooks/{id}` (re-enabling after `410`),
//! `POST /webhooks/{id}/rotate-secret` (both secrets sign during the overlap, in both schemes),
//! the test event, the delivery log and redelivery; endpoint health (`failing_since`,
//! disabling, `webhook.disabled`) and the `v1a` signatures verified with the public key. `403` without `webhooks:write` is checked
//! for every declared endpoint by `pipeline/auth.rs`.

mod delete;
mod deliveries;
mod health;
mod list;
mod log_cursors;
mod operations;
mod public_key;
mod redeliver;
mod register;
mod rotate;
mod secrets_at_rest;

use std::time::Duration;

use base64::Engine;
use chrono::{DateTime, Utc};
use hosting_domain::delivery_log::{DeliveredEvent, DeliveryAttempt};
use hosting_domain::event::EventType;
use serde_json::{Value, json};

use crate::common::receiver::{Hit, Receiver};
use crate::common::*;

/// Registers a webhook for `stream.started`; returns (id, secret).
async fn register(api: &TestApp, key: &str, url: &str) -> (String, String) {
    register_webhook(api, key, url, json!(["stream.started"])).await
}

async fn patch(api: &TestApp, id: &str, body: &str) -> Response {
    api.call_raw(
        "PATCH",
        &format!("/webhooks/{id}"),
        Some(&Keys::test_a()),
        Some(body),
    )
    .await
}

async fn rotate(api: &TestApp, id: &str, body: Option<&str>) -> Response {
    api.call_raw(
        "POST",
        &format!("/webhooks/{id}/rotate-secret"),
        Some(&Keys::test_a()),
        body,
    )
    .await
}

fn time(value: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(value.as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc)
}

/// The secrets that signed `hit`, among `candidates`, in header order, checked independently
/// of the product's code in both schemes (which must agree).
fn signers<'a>(hit: &Hit, candidates: &[&'a str]) -> Vec<&'a str> {
    let header = hit.header("x-service-signature");
    let mut parts = header.split(',');
    let t = parts.next().unwrap().strip_prefix("t=").unwrap().to_owned();
    let stripe: Vec<String> = parts
        .map(|p| p.strip_prefix("v1=").unwrap().to_owned())
        .collect();
    // The `v1a,` Ed25519 ones follow, one per key pair (`webhooks::public_key`).
    let standard: Vec<String> = hit
        .header("webhook-signature")
        .split(' ')
        .filter_map(|p| p.strip_prefix("v1,").map(str::to_owned))
        .collect();
    let id = hit.header("webhook-id");
    let signed_by = |secret: &str| {
        let key = base64::engine::general_purpose::STANDARD
            .decode(secret.strip_prefix("whsec_").unwrap())
            .unwrap();
        (
            hex::encode(hmac(secret.as_bytes(), &format!("{t}.{}", hit.body))),
            base64::engine::general_purpose::STANDARD
                .encode(hmac(&key, &format!("{id}.{t}.{}", hit.body))),
        )
    };
    let mut found = Vec::new();
    for (stripe_sig, standard_sig) in stripe.iter().zip(&standard) {
        let secret = candidates
            .iter()
            .find(|s| signed_by(s) == (stripe_sig.clone(), standard_sig.clone()))
            .unwrap_or_else(|| panic!("a signature by no known secret: {header}"));
        found.push(*secret);
    }
    assert_eq!(stripe.len(), standard.len(), "both schemes sign alike");
    found
}

/// Starts a test stream, returns the delivery of its `stream.started`, and ends it.
async fn next_delivery(api: &TestApp, receiver: &Receiver) -> Hit {
    let seen = receiver.hits().len();
    let stream = api.start_test_stream(&Keys::test_a()).await;
    // The previous stream's end or a late redelivery may arrive first: pick this stream's start.
    let hit = receiver
        .wait_until(WAIT, |hits| {
            hits[seen..]
                .iter()
                .find(|hit| {
                    let event: Value = serde_json::from_str(&hit.body).unwrap_or_default();
                    event["type"] == "stream.started"
                        && event["data"]["stream"]["stream_id"] == stream.as_str()
                })
                .cloned()
        })
        .await
        .unwrap_or_else(|_| panic!("no stream.started for {stream}"));
    api.delete(&format!("/streams/{stream}"), &Keys::test_a())
        .await
        .assert_status(200);
    hit
}

async fn rotated(api: &TestApp, id: &str, body: Option<Value>) -> String {
    let r = rotate(api, id, body.map(|b| b.to_string()).as_deref()).await;
    r.assert_status(200);
    r.body["secret"].as_str().unwrap().to_owned()
}

async fn send_test(api: &TestApp, id: &str) -> Response {
    api.call(
        "POST",
        &format!("/webhooks/{id}/test"),
        Some(&Keys::test_a()),
        None,
    )
    .await
}

async fn log(api: &TestApp, id: &str, query: &str) -> Value {
    let r = api
        .get(
            &format!("/webhooks/{id}/deliveries{query}"),
            &Keys::test_a(),
        )
        .await;
    r.assert_status(200);
    r.body
}

/// Waits until the webhook's log holds `n` attempts.
async fn log_of(api: &TestApp, id: &str, n: u64) -> Value {
    for _ in 0..200 {
        let body = log(api, id, "?limit=100").await;
        if body["deliveries"].as_array().unwrap().len() as u64 >= n {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the log never held {n} attempts");
}

// ---- The log at volume: cursors and recovery (ARCHITECTURE.md, "Webhook operations") ----

/// Attempt `n` of a seeded log: three attempts per event, the third succeeding, a second
/// apart from `start`.
pub(crate) fn seeded_attempt(
    webhook_id: &str,
    n: usize,
    start: DateTime<Utc>,
    ended_failed: bool,
) -> (DeliveryAttempt, DeliveredEvent) {
    let webhook_id = uuid::Uuid::parse_str(webhook_id).unwrap();
    let event_id = format!("evt_{:032x}", n / 3);
    let attempted_at = start + chrono::Duration::seconds(n as i64);
    let succeeded = !ended_failed && n % 3 == 2;
    let attempt = DeliveryAttempt {
        brand_id: "brand_a".into(),
        webhook_id,
        event_id: event_id.clone(),
        event_type: EventType::StreamStarted,
        event_created_at: start + chrono::Duration::seconds((n / 3 * 3) as i64),
        attempt: (n % 3) as u32 + 1,
        attempted_at,
        succeeded,
        response_status: Some(if succeeded { 200 } else { 500 }),
        duration_ms: 12,
        error: None,
        next_attempt_at: (!succeeded && !ended_failed)
            .then(|| attempted_at + chrono::Duration::seconds(1)),
    };
    let event = DeliveredEvent {
        brand_id: "brand_a".into(),
        webhook_id,
        event_id: event_id.clone(),
        event_type: EventType::StreamStarted,
        event_created_at: attempt.event_created_at,
        body: json!({"id": event_id, "type": "stream.started"}).to_string(),
    };
    (attempt, event)
}

const URL: &str = "https://hooks.example.com/live";

fn all_events() -> Value {
    json!(["stream.started", "stream.ended", "stream.error"])
}
