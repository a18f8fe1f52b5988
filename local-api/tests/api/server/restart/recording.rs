//! A recording across a killed process (docs/recordings.md): the process that ended a recorded
//! stream is killed before LiveKit's `egress_ended` arrives; the recording waits `processing` in
//! the store, and the next process turns it `ready` when the event comes, with a download URL,
//! or, the event lost, when it reads the egress back from LiveKit, with its event once.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{delivered, environment, register, start_server};
use crate::common::fake_livekit::{FakeLiveKit, agent_joined, egress_event, signed_webhook};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

/// Posts a LiveKit event to the server; its answer's status.
async fn post_livekit(server: &super::Server, event: &serde_json::Value) -> u16 {
    let (body, token) = signed_webhook(event);
    reqwest::Client::new()
        .post(format!(
            "{}/livekit/webhook",
            server.base.trim_end_matches("/api/v1")
        ))
        .header("authorization", token)
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// On `server`: a live-key stream recorded, its agent joined and its egress started, then
/// ended, and the process killed; the stream's id and room.
async fn recorded_ended_and_killed(
    server: super::Server,
    livekit: &FakeLiveKit,
) -> (String, String) {
    let (status, created) = server
        .call(
            "POST",
            "/streams",
            &Keys::live_a(),
            Some(
                json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick",
                "duration_minutes": 30, "record": true}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["stream_id"].as_str().unwrap().to_owned();
    let room = created["room_name"].as_str().unwrap().to_owned();
    assert_eq!(
        post_livekit(&server, &agent_joined(&room, &format!("EV_join_{id}"))).await,
        200
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !livekit
        .egresses()
        .values()
        .any(|e| e.room == room && e.running)
    {
        assert!(Instant::now() < deadline, "no egress started");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, _) = server
        .call("DELETE", &format!("/streams/{id}"), &Keys::live_a(), None)
        .await;
    assert_eq!(status, 200);
    server.kill();
    (id, room)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB, SQS and S3 (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_recording_whose_process_was_killed_before_its_file_was_reported_is_ready_after()
 {
    let livekit = FakeLiveKit::start().await;
    let environment = environment(&livekit).await;
    let server = start_server(&environment);
    let (id, room) = recorded_ended_and_killed(server, &livekit).await;

    let server = start_server(&environment);
    let (_, detail) = server
        .call("GET", &format!("/streams/{id}"), &Keys::live_a(), None)
        .await;
    assert_eq!(detail["recording"]["status"], "processing", "{detail}");
    let egress_id = livekit
        .egresses()
        .into_iter()
        .find(|(_, e)| e.room == room)
        .unwrap()
        .0;
    let mut ended = egress_event(
        "egress_ended",
        &room,
        &egress_id,
        "EGRESS_COMPLETE",
        &[],
        "EV_egress_ended",
    );
    ended["egressInfo"]["fileResults"] = json!([{"filename": format!("{id}.mp4"),
        "duration": "61000000000", "size": "7340032"}]);
    assert_eq!(post_livekit(&server, &ended).await, 200);
    let (_, detail) = server
        .call("GET", &format!("/streams/{id}"), &Keys::live_a(), None)
        .await;
    let recording = &detail["recording"];
    assert_eq!(recording["status"], "ready", "{detail}");
    assert_eq!(recording["duration_seconds"], 61);
    assert_eq!(recording["size_bytes"], 7_340_032);
    let url = recording["url"].as_str().unwrap();
    assert!(
        url.contains(&format!("recordings/brand_a/{id}.mp4")),
        "{url}"
    );
    assert!(url.contains("X-Amz-Signature="), "{url}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB, SQS and S3 (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_lost_egress_ended_is_read_back_by_the_next_process_with_its_event_once() {
    let livekit = FakeLiveKit::start().await;
    let mut environment = environment(&livekit).await;
    environment
        .vars
        .push(("EGRESS_RECONCILE_SECS".into(), "2".into()));
    let receiver = Receiver::start(Behaviour::Ok).await;
    let server = start_server(&environment);
    register(
        &server,
        &receiver,
        json!(["stream.recording_ready", "stream.recording_failed"]),
    )
    .await;
    // Ended, its egress stopped; LiveKit's `egress_ended` is lost, and so is the process.
    let (id, _) = recorded_ended_and_killed(server, &livekit).await;

    // The next process reads the egress back from LiveKit, as its webhook would have told.
    let server = start_server(&environment);
    let deadline = Instant::now() + Duration::from_secs(20);
    let detail = loop {
        let (_, detail) = server
            .call("GET", &format!("/streams/{id}"), &Keys::live_a(), None)
            .await;
        if detail["recording"]["status"] != "processing" || Instant::now() > deadline {
            break detail;
        }
        tokio::time::sleep(Duration::from_millis(750)).await;
    };
    let recording = &detail["recording"];
    assert_eq!(recording["status"], "ready", "{detail}");
    assert_eq!(recording["size_bytes"], 1_000);
    assert_eq!(
        delivered(&receiver, "stream.recording_ready", &id)
            .await
            .len(),
        1
    );
    assert!(
        delivered(&receiver, "stream.recording_failed", &id)
            .await
            .is_empty()
    );
}
