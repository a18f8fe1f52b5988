//! Scheduled shows (docs/shows.md), on both backends: the service driven directly
//! (`service`), the endpoints' checks (`checks`), pages (`lists`), changes and cancellation
//! (`changes`), starts by timer and by sweep with every refusal (`starts`), and, on DynamoDB,
//! the Scheduler's schedules and the store under faults (`aws`).

use chrono::TimeDelta;
use serde_json::{Value, json};

use crate::common::*;

mod aws;
mod changes;
mod checks;
mod lists;
mod on_time;
mod service;
mod starts;

/// A valid `POST /streams` body plus `starts_at` an hour ahead, with `overrides` (a `null`
/// removes the field).
fn show_body(api: &TestApp, overrides: Value) -> Value {
    let mut body = json!({
        "creator_id": CREATOR_AVA, "product_name": "Glow Serum", "platform": "tiktok",
        "duration_minutes": 30,
        "starts_at": (api.now() + TimeDelta::hours(1)).to_rfc3339(),
    });
    for (k, v) in overrides.as_object().unwrap() {
        if v.is_null() {
            body.as_object_mut().unwrap().remove(k);
        } else {
            body[k] = v.clone();
        }
    }
    body
}

/// `starts_at` `minutes` from the test's now.
fn at(api: &TestApp, minutes: i64) -> Value {
    json!((api.now() + TimeDelta::minutes(minutes)).to_rfc3339())
}

/// Schedules a show; its answer.
async fn schedule(api: &TestApp, key: &str, overrides: Value) -> Response {
    api.post("/shows", key, show_body(api, overrides)).await
}

/// Schedules a show that must be accepted; its id.
async fn scheduled(api: &TestApp, key: &str, overrides: Value) -> String {
    let r = schedule(api, key, overrides).await;
    r.assert_status(201);
    r.body["show_id"].as_str().unwrap().to_owned()
}

async fn show(api: &TestApp, key: &str, id: &str) -> Value {
    let r = api.get(&format!("/shows/{id}"), key).await;
    r.assert_status(200);
    r.body
}

fn uuid_of(id: &str) -> uuid::Uuid {
    uuid::Uuid::parse_str(id.strip_prefix("shw_").unwrap()).unwrap()
}

/// The events of `event_type` written so far about the show `id`.
async fn show_events(api: &TestApp, event_type: &str, id: &str) -> Vec<Value> {
    api.emitted_events()
        .await
        .into_iter()
        .filter(|e| e.event_type.as_str() == event_type)
        .map(|e| serde_json::from_str::<Value>(&e.body).unwrap())
        .filter(|body| body["data"]["show"]["show_id"] == id)
        .collect()
}
