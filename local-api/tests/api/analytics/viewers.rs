//! Viewer counts of a live stream move its analytics while it is live, and are final once it ends.

use chrono::Duration;
use serde_json::{Value, json};

use crate::common::fake_livekit::signed_webhook;
use crate::common::*;

fn participant(kind: &str, room: &str, agent: bool, id: &str) -> Value {
    crate::common::fake_livekit::participant_event(kind, room, agent.then_some("AGENT"), id)
}

/// Viewer counts of a live stream move its analytics while it is live; the count it ends with
/// is final, and viewers leaving afterwards change nothing.
#[tokio::test]
async fn viewer_counts_change_on_a_live_stream() {
    let fake = crate::common::fake_livekit::FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let r = api
        .start(&Keys::live_a(), json!({"duration_minutes": 60}))
        .await;
    r.assert_status(201);
    let room = r.body["room_name"].as_str().unwrap().to_owned();
    let send = |event: Value| {
        let api = &api;
        async move {
            api.post_livekit(&signed_webhook(&event))
                .await
                .assert_status(200)
        }
    };
    let figures = || {
        let api = &api;
        async move {
            let b = api.get("/analytics", &Keys::live_a()).await.body;
            (
                b["total_viewers"].as_u64().unwrap(),
                b["live_now"].as_u64().unwrap(),
                b["total_minutes"].as_u64().unwrap(),
                b["streams"][0]["viewer_count"].as_u64().unwrap(),
            )
        }
    };
    assert_eq!(figures().await, (0, 0, 0, 0));
    send(participant("participant_joined", &room, true, "EV_agent")).await;
    for i in 0..3 {
        send(participant(
            "participant_joined",
            &room,
            false,
            &format!("EV_j{i}"),
        ))
        .await;
    }
    assert_eq!(figures().await, (3, 1, 0, 3));
    send(participant("participant_left", &room, false, "EV_l0")).await;
    assert_eq!(figures().await, (2, 1, 0, 2));
    api.advance(Duration::minutes(7));
    send(participant(
        "participant_left",
        &room,
        true,
        "EV_agent_left",
    ))
    .await;
    assert_eq!(figures().await, (2, 0, 7, 2));
    // After the end: nothing moves.
    for (kind, id) in [
        ("participant_left", "EV_l1"),
        ("participant_joined", "EV_j9"),
    ] {
        api.post_livekit(&signed_webhook(&participant(kind, &room, false, id)))
            .await;
    }
    assert_eq!(figures().await, (2, 0, 7, 2));
}
