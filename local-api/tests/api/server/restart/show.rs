//! A scheduled show whose starter is killed between its claim and its stream's creation
//! (docs/shows.md, "The start"): the next process neither leaves it `starting` nor starts it
//! twice. Once the dead starter's claim runs out, the sweep takes it over and makes its one
//! stream; `show.started` is delivered once.

use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};

use super::{delivered, environment, register, start_server};
use crate::common::fake_livekit::FakeLiveKit;
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

/// How long the start's read of the show's keys and script is held: the kill comes inside it.
const HELD_MS: u64 = 8000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_a_show_whose_starter_was_killed_after_its_claim_starts_once_after_a_restart()
{
    let livekit = FakeLiveKit::start().await;
    let mut environment = environment(&livekit).await;
    // A claim lasts the launch timeout plus 30 s: 32 s here.
    environment
        .vars
        .push(("LAUNCH_TIMEOUT_SECS".into(), "2".into()));
    environment
        .vars
        .push(("SHOW_MIN_LEAD_SECS".into(), "1".into()));
    let table = environment
        .vars
        .iter()
        .find(|(name, _)| name == "TABLE_NAME")
        .map(|(_, table)| table.clone())
        .unwrap();
    let receiver = Receiver::start(Behaviour::Ok).await;
    let server = start_server(&environment);
    register(&server, &receiver, json!(["show.started"])).await;
    let starts_at = Utc::now() + chrono::Duration::seconds(4);
    let (status, created) = server
        .call(
            "POST",
            "/shows",
            &Keys::test_a(),
            Some(
                json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick",
                        "starts_at": starts_at.to_rfc3339()}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["show_id"].as_str().unwrap().to_owned();

    // The start claims the show, then reads its keys and script: held there, and killed.
    faults::set(&table, json!({"slow_ops": {"BatchGetItem": HELD_MS}})).await;
    let show = wait_for_show(&server, &id, "starting", Duration::from_secs(20)).await;
    assert_eq!(show["stream_id"], Value::Null);
    server.kill();
    faults::clear(&table).await;

    let server = start_server(&environment);
    let (_, streams) = server.call("GET", "/streams", &Keys::test_a(), None).await;
    assert_eq!(streams["total"], 0, "no stream was made before the kill");
    let (_, still) = server
        .call("GET", &format!("/shows/{id}"), &Keys::test_a(), None)
        .await;
    assert_eq!(
        still["status"], "starting",
        "the dead starter's claim holds"
    );

    // Its claim runs out; the sweep takes it over.
    let started = wait_for_show(&server, &id, "started", Duration::from_secs(60)).await;
    let stream_id = started["stream_id"].as_str().unwrap().to_owned();
    let deliveries = delivered(&receiver, "show.started", &id).await;
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    let (_, streams) = server.call("GET", "/streams", &Keys::test_a(), None).await;
    assert_eq!(streams["total"], 1, "{streams}");
    assert_eq!(streams["streams"][0]["id"], stream_id.as_str());
}

/// Polls a show until it has `status`; returns it.
async fn wait_for_show(server: &super::Server, id: &str, status: &str, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let (_, show) = server
            .call("GET", &format!("/shows/{id}"), &Keys::test_a(), None)
            .await;
        if show["status"] == status {
            return show;
        }
        assert!(Instant::now() < deadline, "still {show}");
        // Well under the brand's 100 requests a minute, however long it waits.
        tokio::time::sleep(Duration::from_millis(750)).await;
    }
}
