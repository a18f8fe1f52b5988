//! Destinations on DynamoDB under the faults real AWS produces (scripts/aws/fault_proxy.py):
//! throttling, internal errors, transaction conflicts, answers lost after the write applied and
//! lagging indexes. Shows with destinations go live, their egresses start (timers and sweeps
//! racing), a failure whose webhook LiveKit lost is read back, LiveKit reports on them,
//! destinations are added, and the shows end; every answer is
//! documented, and once the faults stop: every egress stopped, every room deleted, and (the drop
//! check) every stream key erased and each destination's events written once.

use chrono::Duration;

use super::*;
use crate::common::fake_livekit::{START_EGRESS, egress_event};

const FAULTS: &str = r#"{"throttling": 0.05, "internal_error": 0.03,
    "transaction_conflict": 0.08, "lost_response": 0.05, "gsi_stale": 0.2,
    "conflicts": {"hold_ms": 15}}"#;

/// Sends until the answer is not a `500 db_error` (a client retrying), checking every answer is
/// documented; the last answer.
async fn until_answered(send: impl AsyncFn() -> Response) -> Response {
    for _ in 0..30 {
        let r = send().await;
        if r.status.is_server_error() {
            assert_eq!(r.code(), "db_error", "{}", r.body);
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            continue;
        }
        return r;
    }
    panic!("never answered but 500");
}

/// Runs the timers and the sweep until `done`, as the schedule would, faults or not.
async fn settle(api: &TestApp, done: impl AsyncFn() -> bool) {
    for _ in 0..60 {
        if done().await {
            return;
        }
        api.advance(Duration::seconds(2));
        api.runtime.fire_due_timers().await;
        let _ = hosting_app::service::timers::sweep(&api.runtime.app).await;
    }
    panic!("never settled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_destinations_under_aws_faults_start_one_egress_each_and_leave_nothing() {
    let (api, fake) = app_with_livekit().await;
    let table = api.table().expect("DynamoDB").to_owned();
    crate::common::faults::set(&table, serde_json::from_str(FAULTS).unwrap()).await;

    let mut shows = Vec::new();
    for n in 0..3 {
        let body = json!({"creator_id": CREATOR_AVA, "product_name": format!("show {n}"),
            "platform": "tiktok", "duration_minutes": 30, "destinations": [
                destination("youtube", YOUTUBE_INGEST, &format!("yt-key-{n}-0001")),
                destination("tiktok", TIKTOK_INGEST, &format!("tt-key-{n}-0002"))]});
        let r = until_answered(async || {
            let request = axum::http::Request::builder()
                .method("POST")
                .uri("/api/v1/streams")
                .header("authorization", format!("Bearer {}", Keys::live_a()))
                .header("idempotency-key", format!("faulty-show-{n}"))
                .body(axum::body::Body::from(body.to_string()))
                .unwrap();
            api.send(request).await
        })
        .await;
        if r.status == 409 {
            continue;
        }
        r.assert_status(201);
        let id = r.body["stream_id"].as_str().unwrap().to_owned();
        let room = r.body["room_name"].as_str().unwrap().to_owned();
        let join = crate::common::fake_livekit::agent_joined(&room, &format!("EV_join_{n}"));
        api.post_livekit_until_accepted(&join, |_| {}).await;
        shows.push((id, room, n));
    }
    assert!(!shows.is_empty());
    // The egresses start, timers and sweeps racing each other under faults.
    settle(&api, async || {
        shows
            .iter()
            .all(|(_, room, _)| fake.running_egress(room).is_some())
    })
    .await;
    // YouTube's output fails and LiveKit's webhook is lost: read back under the same faults.
    for (_, room, n) in &shows {
        let egress = fake.running_egress(room).unwrap();
        let yt = output(YOUTUBE_INGEST, &format!("yt-key-{n}-0001"));
        fake.fail_output(&egress, &yt, "stream key rejected");
    }
    api.advance(Duration::seconds(61));
    settle(&api, async || {
        let mut failed = true;
        for (id, _, _) in &shows {
            let stored = api.runtime.app.streams().get_stream(id.parse().unwrap()).await;
            failed &= matches!(stored, Ok(Some(s))
                if s.destinations[0].status == hosting_domain::destination::DestinationStatus::Failed);
        }
        failed
    })
    .await;
    for (id, room, n) in &shows {
        let egress = fake.running_egress(room).unwrap();
        let yt = output(YOUTUBE_INGEST, &format!("yt-key-{n}-0001"));
        let tt = output(TIKTOK_INGEST, &format!("tt-key-{n}-0002"));
        let report = egress_event(
            "egress_updated",
            room,
            &egress,
            "EGRESS_ACTIVE",
            &[(&yt, "ACTIVE", ""), (&tt, "FAILED", "connection refused")],
            &format!("EV_eg_{n}"),
        );
        api.post_livekit_until_accepted(&report, |_| {}).await;
        let added = until_answered(async || {
            api.post(
                &format!("/streams/{id}/destinations"),
                &Keys::live_a(),
                destination(
                    "kick",
                    "rtmps://ingest.kick.example.com/app",
                    &format!("kk-key-{n}-0003"),
                ),
            )
            .await
        })
        .await;
        // A retry after an answer lost in the store may find the first attempt's destination.
        assert!(matches!(added.status.as_u16(), 201 | 400), "{}", added.body);
        let ended =
            until_answered(async || api.delete(&format!("/streams/{id}"), &Keys::live_a()).await)
                .await;
        assert!(matches!(ended.status.as_u16(), 200 | 404), "{}", ended.body);
    }
    let stats = crate::common::faults::stats(&table).await;
    crate::common::faults::clear(&table).await;
    assert!(
        crate::common::faults::injected(&stats) >= 5,
        "faults were injected: {stats}"
    );
    // Once the faults stop, the cleanups finish: every egress stopped, every room gone.
    settle(&api, async || fake.egresses().values().all(|e| !e.running)).await;
    api.advance(Duration::minutes(2));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    for (id, room, _) in &shows {
        assert_eq!(live_detail(&api, id).await["status"], "ended");
        let starts = fake
            .calls()
            .iter()
            .filter(|c| c.method == START_EGRESS)
            .filter(|c| matches!(&c.call, crate::common::fake_livekit::Call::StartEgress(r) if &r.room_name == room))
            .count();
        assert!(starts >= 1, "{room}");
        assert!(!fake.rooms().contains(room), "{room}: deleted");
    }
    // The drop check: no egress running for a finished stream, no keys kept, each
    // destination's events once.
}
