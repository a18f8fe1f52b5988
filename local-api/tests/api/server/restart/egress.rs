//! Destinations across a killed process (docs/destinations.md, "Going live" and "Ending"): one
//! killed after the agent joined and before its egress started still gets it started, and one
//! killed while stopping it at the end still gets it stopped, by the next process, from the
//! store.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{environment, start_server};
use crate::common::fake_livekit::{
    FakeLiveKit, START_EGRESS, STOP_EGRESS, agent_joined, signed_webhook,
};
use crate::common::*;

const DESTINATIONS: &str = r#"[
    {"platform": "youtube", "ingest_url": "rtmp://a.rtmp.youtube.com/live2", "stream_key": "kill-key-0001"},
    {"platform": "tiktok", "ingest_url": "rtmps://push-rtmp.tiktokcdn.com/live", "stream_key": "kill-key-0002"}]"#;

/// A live-key stream with two destinations whose agent joined: (id, room).
async fn live_with_destinations(server: &super::Server) -> (String, String) {
    let destinations: serde_json::Value = serde_json::from_str(DESTINATIONS).unwrap();
    let (status, created) = server
        .call(
            "POST",
            "/streams",
            &Keys::live_a(),
            Some(
                json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick",
                "duration_minutes": 30, "destinations": destinations}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["stream_id"].as_str().unwrap().to_owned();
    let room = created["room_name"].as_str().unwrap().to_owned();
    let (event, token) = signed_webhook(&agent_joined(&room, &format!("EV_join_{id}")));
    let webhook = format!(
        "{}/livekit/webhook",
        server.base.trim_end_matches("/api/v1")
    );
    let answer = reqwest::Client::new()
        .post(webhook)
        .header("authorization", token)
        .body(event)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    (id, room)
}

async fn wait_until(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_an_egress_owed_when_its_process_was_killed_starts_after_the_restart() {
    let livekit = FakeLiveKit::start().await;
    let environment = environment(&livekit).await;
    // The egress start hangs: the process is killed in it, after the agent joined.
    livekit.hang(START_EGRESS);
    let server = start_server(&environment);
    let (_, room) = live_with_destinations(&server).await;
    wait_until("the attempt", Duration::from_secs(10), || {
        livekit.count(START_EGRESS) == 1
    })
    .await;
    server.kill();
    assert!(livekit.egresses().is_empty());

    // The next process starts it once the killed attempt's claim (20 s) has lapsed.
    livekit.heal(START_EGRESS);
    let _server = start_server(&environment);
    wait_until("the egress", Duration::from_secs(45), || {
        livekit
            .egresses()
            .values()
            .any(|e| e.room == room && e.running)
    })
    .await;
    let egress = livekit
        .egresses()
        .into_values()
        .find(|e| e.room == room)
        .unwrap();
    assert_eq!(
        egress.urls,
        [
            "rtmp://a.rtmp.youtube.com/live2/kill-key-0001",
            "rtmps://push-rtmp.tiktokcdn.com/live/kill-key-0002"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_an_egress_whose_stop_was_killed_is_stopped_after_the_restart() {
    let livekit = FakeLiveKit::start().await;
    let environment = environment(&livekit).await;
    let server = start_server(&environment);
    let (id, room) = live_with_destinations(&server).await;
    wait_until("the egress", Duration::from_secs(10), || {
        livekit
            .egresses()
            .values()
            .any(|e| e.room == room && e.running)
    })
    .await;
    // LiveKit refuses the stop; the process dies right after the end.
    livekit.fail(STOP_EGRESS);
    let (status, ended) = server
        .call("DELETE", &format!("/streams/{id}"), &Keys::live_a(), None)
        .await;
    assert_eq!(status, 200, "{ended}");
    server.kill();
    assert!(
        livekit
            .egresses()
            .values()
            .any(|e| e.room == room && e.running)
    );
    assert!(
        livekit.rooms().contains(&room),
        "no room deleted before its egress stopped"
    );

    livekit.heal(STOP_EGRESS);
    let server = start_server(&environment);
    wait_until("the stop and the deletion", Duration::from_secs(30), || {
        livekit.egresses().values().all(|e| !e.running) && !livekit.rooms().contains(&room)
    })
    .await;
    let (_, detail) = server
        .call("GET", &format!("/streams/{id}"), &Keys::live_a(), None)
        .await;
    assert_eq!(detail["status"], "ended");
    let statuses: Vec<&str> = detail["destinations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ended", "ended"]);
}
