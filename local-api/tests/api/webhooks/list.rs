//! `GET /webhooks`: newest first, per brand, listed as soon as registered.

use chrono::Duration;
use serde_json::json;

use super::{URL, all_events};
use crate::common::*;

#[tokio::test]
async fn list_is_newest_first_and_per_brand() {
    let api = TestApp::new().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let r = api
            .post(
                "/webhooks",
                &Keys::test_a(),
                json!({"url": format!("{URL}/{i}"), "events": ["stream.ended"]}),
            )
            .await;
        ids.push(r.body["webhook_id"].as_str().unwrap().to_owned());
        api.advance(Duration::seconds(1));
    }
    ids.reverse();
    let list = api.get("/webhooks", &Keys::test_a()).await;
    let listed: Vec<&str> = list.body["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["webhook_id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ids);
    assert_eq!(
        list.body["webhooks"][0]["created_at"],
        "2026-03-02T12:00:32.000Z"
    );
    assert_eq!(
        api.get("/webhooks", &Keys::test_b()).await.body["webhooks"],
        json!([])
    );
}

#[tokio::test]
async fn a_webhook_is_listed_as_soon_as_its_registration_answered() {
    let api = TestApp::new().await;
    // On DynamoDB, every index query answers as an index that has not caught up: a list read
    // from an index would miss the new webhook.
    if let Some(table) = api.table() {
        faults::set(table, json!({"gsi_stale": 1.0})).await;
    }
    for round in 0..3 {
        api.advance(Duration::seconds(1));
        let r = api
            .post(
                "/webhooks",
                &Keys::test_a(),
                json!({"url": format!("{URL}/{round}"), "events": all_events()}),
            )
            .await;
        r.assert_status(201);
        let id = r.body["webhook_id"].clone();
        let listed = api.get("/webhooks", &Keys::test_a()).await;
        listed.assert_status(200);
        assert_eq!(
            listed.body["webhooks"][0]["webhook_id"], id,
            "newest first, at once"
        );
        assert_eq!(listed.body["webhooks"].as_array().unwrap().len(), round + 1);
    }
    if let Some(table) = api.table() {
        faults::clear(table).await;
    }
}
