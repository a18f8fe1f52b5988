//! Each kill: mid-launch, with a duration timer pending, with a room deletion failed, and in a reconnect window.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::{
    PREPARING_TIMEOUT_SECS, SLACK, SWEEP_INTERVAL_SECS, delivered, environment, register,
    start_server, three_starts_fit, wait_until_gone,
};
use crate::common::fake_livekit::{FakeLiveKit, agent_joined, signed_webhook};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_start_killed_while_livekit_hangs_ends_in_error_after_a_restart() {
    let livekit = FakeLiveKit::start().await;
    livekit.hang("livekit.RoomService/CreateRoom");
    let environment = environment(&livekit).await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let server = start_server(&environment);
    register(&server, &receiver, json!(["stream.error"])).await;

    // The start hangs in CreateRoom; the process is killed there, holding its key.
    let start = json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick", "duration_minutes": 30});
    let (base, key, body) = (server.base.clone(), Keys::live_a(), start.to_string());
    let hanging = tokio::spawn(async move {
        reqwest::Client::new()
            .post(format!("{base}/streams"))
            .header("authorization", format!("Bearer {key}"))
            .header("idempotency-key", "launch-1")
            .body(body)
            .send()
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !livekit.methods().iter().any(|m| m.ends_with("CreateRoom")) {
        assert!(
            Instant::now() < deadline,
            "the launch never reached CreateRoom"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill();
    assert!(
        hanging.await.unwrap().is_err(),
        "no answer from a killed process"
    );

    let server = start_server(&environment);
    let (_, list) = server
        .call("GET", "/streams?status=preparing", &Keys::test_a(), None)
        .await;
    let id = list["streams"][0]["id"]
        .as_str()
        .expect("the stream, still preparing")
        .to_owned();
    // Its key is bound to the stream; while it is preparing, its start may still be running.
    let live_key = Keys::live_a();
    let retry = || server.start_with_key(&live_key, "launch-1", &start);
    let (status, body, _) = retry().await;
    assert!(
        status == 409 || (status == 502 && body["error"]["code"] == "launch_failed"),
        "{status} {body}"
    );
    let detail = server
        .wait_for_status(
            &id,
            "error",
            Duration::from_secs(PREPARING_TIMEOUT_SECS + SWEEP_INTERVAL_SECS) + SLACK * 2,
        )
        .await;
    // Ended as of its deadline, however late the sweep found it.
    let late = at(&detail, "ended_at") - at(&detail, "created_at");
    assert_eq!(
        late.to_std().unwrap(),
        Duration::from_secs(PREPARING_TIMEOUT_SECS),
        "ended {late} after creation"
    );
    // The room its launch made before the kill is deleted.
    let room = detail["room_name"].as_str().unwrap().to_owned();
    wait_until_gone(&livekit, &room).await;
    assert_eq!(
        delivered(&receiver, "stream.error", &id).await.len(),
        1,
        "stream.error once"
    );
    // Once in error, the key answers as that start's 502 would have, and keeps answering so.
    let (status, body, replayed) = retry().await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (502, Some("launch_failed"))
    );
    assert!(replayed);
    assert_eq!(retry().await, (status, body, true));
    three_starts_fit(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_live_stream_whose_duration_timer_died_ends_after_a_restart() {
    slow_by_design(
        "a_live_stream_whose_duration_timer_died",
        "up to 2 min: a stream lives out its minute, then the sweep ends it after a restart",
    );
    let livekit = FakeLiveKit::start().await;
    let environment = environment(&livekit).await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let server = start_server(&environment);
    register(&server, &receiver, json!(["stream.ended"])).await;

    let (status, created) = server
        .call(
            "POST",
            "/streams",
            &Keys::live_a(),
            Some(json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick", "duration_minutes": 1})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let (id, room) = (
        created["stream_id"].as_str().unwrap().to_owned(),
        created["room_name"].as_str().unwrap().to_owned(),
    );
    // The agent joins: live, with its duration end on an in-process timer.
    let (event, token) = signed_webhook(&agent_joined(&room, "EV_agent"));
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
    server
        .wait_for_status(&id, "live", Duration::from_secs(5))
        .await;
    server.kill();

    let server = start_server(&environment);
    let detail = server
        .wait_for_status(
            &id,
            "ended",
            Duration::from_secs(60 + SWEEP_INTERVAL_SECS) + SLACK * 3,
        )
        .await;
    // Its live time is its duration, however late the sweep ended it.
    let lasted = at(&detail, "ended_at") - at(&detail, "started_at");
    assert_eq!(
        lasted,
        chrono::TimeDelta::seconds(60),
        "ended {lasted} after it started"
    );
    wait_until_gone(&livekit, &room).await;
    assert_eq!(
        delivered(&receiver, "stream.ended", &id).await.len(),
        1,
        "stream.ended once"
    );
    three_starts_fit(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_room_whose_deletion_failed_before_a_kill_is_deleted_after_the_restart() {
    let livekit = FakeLiveKit::start().await;
    let environment = environment(&livekit).await;
    let server = start_server(&environment);
    let (status, created) = server
        .call(
            "POST",
            "/streams",
            &Keys::live_a(),
            Some(json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick", "duration_minutes": 30})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let (id, room) = (
        created["stream_id"].as_str().unwrap().to_owned(),
        created["room_name"].as_str().unwrap().to_owned(),
    );
    let (event, token) = signed_webhook(&agent_joined(&room, "EV_agent_kill"));
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
    server
        .wait_for_status(&id, "live", Duration::from_secs(5))
        .await;

    // LiveKit refuses the deletion; the process dies right after the transition.
    livekit.fail("livekit.RoomService/DeleteRoom");
    let (status, ended) = server
        .call("DELETE", &format!("/streams/{id}"), &Keys::live_a(), None)
        .await;
    assert_eq!(status, 200, "{ended}");
    assert!(livekit.rooms().contains(&room));
    server.kill();

    // LiveKit answers again; the next process deletes the room from the pending record.
    livekit.heal("livekit.RoomService/DeleteRoom");
    let server = start_server(&environment);
    wait_until_gone(&livekit, &room).await;
    let (_, detail) = server
        .call("GET", &format!("/streams/{id}"), &Keys::live_a(), None)
        .await;
    assert_eq!(detail["status"], "ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_reconnect_window_open_at_a_kill_still_ends_at_its_end_after_a_restart() {
    const WINDOW_SECS: i64 = 4;
    let livekit = FakeLiveKit::start().await;
    let mut environment = environment(&livekit).await;
    environment
        .vars
        .push(("RECONNECT_WINDOW_SECS".into(), WINDOW_SECS.to_string()));
    let receiver = Receiver::start(Behaviour::Ok).await;
    let server = start_server(&environment);
    register(&server, &receiver, json!(["stream.error"])).await;
    let (status, created) = server
        .call(
            "POST",
            "/streams",
            &Keys::live_a(),
            Some(json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick", "duration_minutes": 30})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let (id, room) = (
        created["stream_id"].as_str().unwrap().to_owned(),
        created["room_name"].as_str().unwrap().to_owned(),
    );
    let webhook = format!(
        "{}/livekit/webhook",
        server.base.trim_end_matches("/api/v1")
    );
    let send = |event: Value| {
        let webhook = webhook.clone();
        async move {
            let (body, token) = signed_webhook(&event);
            let answer = reqwest::Client::new()
                .post(webhook)
                .header("authorization", token)
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status().as_u16(), 200);
        }
    };
    send(agent_joined(&room, "EV_agent_window")).await;
    server
        .wait_for_status(&id, "live", Duration::from_secs(5))
        .await;
    // The host's process dies a moment later: LiveKit reports it gone with SERVER_SHUTDOWN, at a
    // whole second (its `createdAt`) past the moment the stream went live.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let dropped = DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap();
    send(crate::common::fake_livekit::agent_event(
        "participant_left",
        &room,
        "PA_agent",
        Some("SERVER_SHUTDOWN"),
        "EV_agent_dropped",
        dropped,
    ))
    .await;
    assert_eq!(livekit.dispatches_made(), 2, "dispatched again at once");
    server.kill();

    // No agent comes back; the next process ends the stream at the window's end.
    let server = start_server(&environment);
    let detail = server
        .wait_for_status(
            &id,
            "error",
            Duration::from_secs(WINDOW_SECS as u64 + SWEEP_INTERVAL_SECS) + SLACK * 3,
        )
        .await;
    assert_eq!(detail["end_reason"], "host_lost");
    assert_eq!(at(&detail, "ended_at"), dropped, "as of the drop");
    wait_until_gone(&livekit, &room).await;
    assert_eq!(
        delivered(&receiver, "stream.error", &id).await.len(),
        1,
        "stream.error once"
    );
    three_starts_fit(&server).await;
}
