//! The sample clips batch (`events/clips-sqs-batch.json`) through the clips function's handler,
//! as `sam local invoke` would send it: a job naming no clip is done, a job of a real clip cuts
//! it, and a store failure is a batch item failure for SQS to send again.

use serde_json::{Value, json};

use crate::common::*;

fn batch() -> Value {
    let path = format!(
        "{}/../events/clips-sqs-batch.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[tokio::test]
async fn a_job_of_no_clip_is_done() {
    let api = TestApp::new().await;
    let batch = serde_json::from_value(batch()).unwrap();
    let response = clips::handle(&api.runtime.app, batch).await;
    assert!(response.batch_item_failures.is_empty());
}

#[tokio::test]
async fn a_job_cuts_its_clip_and_a_store_failure_is_received_again() {
    let api = TestApp::new().await;
    let id = crate::clips::ready_recording(&api).await;
    let asked = api
        .post(
            &format!("/streams/{id}/clips"),
            &Keys::test_a(),
            json!({"start_seconds": 2, "end_seconds": 6}),
        )
        .await;
    asked.assert_status(202);
    let clip_id = asked.body["clip_id"].as_str().unwrap().to_owned();
    let mut sample = batch();
    sample["Records"][0]["body"] = json!(json!({"stream_id": id, "clip_id": clip_id}).to_string());

    api.store_outage(true).await;
    let response = clips::handle(
        &api.runtime.app,
        serde_json::from_value(sample.clone()).unwrap(),
    )
    .await;
    let failed: Vec<&str> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    assert_eq!(failed, ["c11b0000-0000-4000-8000-000000000001"]);
    api.store_outage(false).await;
    // The job comes again. A cut that claimed the clip before the store failed holds it until
    // its lease ends (on DynamoDB the outage refuses transactions only): then it is cut.
    api.advance(chrono::Duration::seconds(301));

    let response = clips::handle(&api.runtime.app, serde_json::from_value(sample).unwrap()).await;
    assert!(response.batch_item_failures.is_empty());
    let shown = api
        .get(&format!("/streams/{id}/clips/{clip_id}"), &Keys::test_a())
        .await;
    assert_eq!(shown.body["status"], "ready", "{}", shown.body);
}
