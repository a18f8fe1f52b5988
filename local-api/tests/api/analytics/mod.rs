//! `GET /analytics` (docs/analytics.md), over seeded history.

mod bounded_reads;
mod summary;
mod viewers;
mod windows;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use crate::common::*;

fn ids(body: &Value) -> Vec<&str> {
    body["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect()
}

/// An ended stream of brand_b created at `created`, run for one minute from its creation.
fn ended_at(id: &str, created: DateTime<Utc>, viewers: u64, platform: &str) -> Value {
    json!({"id": id, "brand_id": "brand_b", "status": "ended", "platform": platform,
           "product_name": "P", "viewer_count": viewers, "created_at": created.to_rfc3339(),
           "started_at": created.to_rfc3339(),
           "ended_at": (created + Duration::seconds(60)).to_rfc3339()})
}

fn edge_id(i: u32) -> String {
    format!("f0000000-0000-4000-8000-{i:012}")
}

/// (total_streams, total_viewers, total_minutes) of brand_b over `period`.
async fn totals(api: &TestApp, period: &str) -> (u64, u64, u64) {
    let b = api
        .get(&format!("/analytics?period={period}"), &Keys::test_b())
        .await
        .body;
    let field = |name: &str| b[name].as_u64().unwrap();
    assert_eq!(
        field("total_streams"),
        b["streams"].as_array().unwrap().len() as u64
    );
    assert_eq!(
        b["by_platform"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>(),
        field("total_streams")
    );
    (
        field("total_streams"),
        field("total_viewers"),
        field("total_minutes"),
    )
}
