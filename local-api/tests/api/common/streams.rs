//! Stream helpers shared across resources.

use serde_json::{Value, json};

use super::{Keys, TestApp};

/// A well-formed stream id that names no stream.
pub const ABSENT_ID: &str = "00000000-0000-4000-8000-000000000000";

/// Starts a live stream on brand A's live key; returns (stream id, room name, response body).
pub async fn start_live(api: &TestApp, duration: u32) -> (String, String, Value) {
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": duration}))
        .await;
    r.assert_status(201);
    (
        r.body["stream_id"].as_str().unwrap().to_owned(),
        r.body["room_name"].as_str().unwrap().to_owned(),
        r.body.clone(),
    )
}

/// A stream's detail as brand A's live key reads it.
pub async fn live_detail(api: &TestApp, id: &str) -> Value {
    api.get(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .body
}

/// The time in a detail's `field`.
pub fn at(detail: &Value, field: &str) -> chrono::DateTime<chrono::Utc> {
    detail[field].as_str().unwrap().parse().unwrap()
}

/// An object's field names, sorted.
pub fn field_names(v: &Value) -> Vec<String> {
    let mut names: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    names.sort();
    names
}
