//! A process killed between a dispatch and the host's join (docs/livekit.md, "Read-backs"): the
//! host joined by itself, its `participant_joined` went to a process that was no more, and the
//! next process reads the room back: live as of the host's join, no second host, no preparing
//! timeout.

use std::time::Duration;

use serde_json::json;

use super::{SLACK, environment, start_server};
use crate::common::fake_livekit::{Agents, FakeLiveKit};
use crate::common::*;

/// Long enough for the next process to start and read the room back on a machine busy with the
/// whole suite (a sweep past the deadline ends the stream first, as it should).
const PREPARING_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_process_killed_before_the_hosts_join_was_heard_reads_the_room_back() {
    let livekit = FakeLiveKit::start().await;
    livekit.agents(Agents::JoinAtOnce);
    let mut environment = environment(&livekit).await;
    environment.vars.extend([
        ("HOST_READBACK_SECS".into(), "1".into()),
        // A retry would be due before the preparing timeout: the read-back must see the host.
        ("DISPATCH_RETRY_SECS".into(), "2".into()),
        (
            "PREPARING_TIMEOUT_SECS".into(),
            PREPARING_TIMEOUT.as_secs().to_string(),
        ),
    ]);
    let server = start_server(&environment);
    let started = std::time::Instant::now();
    let (status, created) = server
        .call(
            "POST",
            "/streams",
            &Keys::live_a(),
            Some(json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick", "duration_minutes": 30})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["stream_id"].as_str().unwrap().to_owned();
    let room = created["room_name"].as_str().unwrap().to_owned();
    // The host is in the room; its webhook never reaches anyone.
    let joined_ms = livekit.hosts(&room)[0].joined_at_ms;
    assert_eq!(livekit.take_webhooks().len(), 1);
    server.kill();

    let server = start_server(&environment);
    let detail = server.wait_for_status(&id, "live", PREPARING_TIMEOUT).await;
    assert_eq!(
        at(&detail, "started_at").timestamp_millis() / 1000,
        joined_ms / 1000,
        "live as of the host's join"
    );
    // Past the preparing timeout and several retry times: still live, one host, one dispatch.
    tokio::time::sleep(PREPARING_TIMEOUT.saturating_sub(started.elapsed()) + SLACK).await;
    let (_, detail) = server
        .call("GET", &format!("/streams/{id}"), &Keys::test_a(), None)
        .await;
    assert_eq!(detail["status"], "live", "{detail}");
    assert_eq!(livekit.dispatches_made(), 1, "{:?}", livekit.calls());
    let hosts = livekit.hosts(&room);
    assert_eq!(hosts.len(), 1, "{hosts:?}; calls {:?}", livekit.calls());
}
