//! A clip across a killed process (docs/clips.md, "In the background"): the process cutting it
//! is killed mid-cut (its ranged reads held up by a slow S3), and the next process takes the
//! clip again once the dead cut's lease has passed: `ready` once, its file whole, its event
//! delivered once.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{delivered, environment, register, start_server};
use crate::common::fake_livekit::FakeLiveKit;
use crate::common::faults;
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

/// Polls a clip until `done` says so; its last reading.
async fn wait_for_clip(
    server: &super::Server,
    path: &str,
    limit: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let (_, clip) = server.call("GET", path, &Keys::test_a(), None).await;
        if done(&clip) {
            return clip;
        }
        assert!(Instant::now() < deadline, "still {clip}");
        // Well under the brand's 100 requests a minute, however long it waits.
        tokio::time::sleep(Duration::from_millis(750)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB, SQS and S3 (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_clip_whose_cut_was_killed_is_cut_once_after_the_restart() {
    let livekit = FakeLiveKit::start().await;
    let mut environment = environment(&livekit).await;
    let bucket = format!("clip-kill-{}", uuid::Uuid::new_v4().simple());
    crate::common::backend::own_recordings_bucket(&bucket).await;
    for (name, value) in [
        ("RECORDINGS_BUCKET", bucket.as_str()),
        ("CLIP_LEASE_SECS", "3"),
    ] {
        environment.vars.retain(|(k, _)| k != name);
        environment.vars.push((name.into(), value.into()));
    }
    let receiver = Receiver::start(Behaviour::Ok).await;
    let server = start_server(&environment);
    register(
        &server,
        &receiver,
        json!(["stream.clip_ready", "stream.clip_failed"]),
    )
    .await;
    let (status, created) = server
        .call(
            "POST",
            "/streams",
            &Keys::test_a(),
            Some(
                json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick",
                "record": true}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["stream_id"].as_str().unwrap().to_owned();
    server
        .call("DELETE", &format!("/streams/{id}"), &Keys::test_a(), None)
        .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, detail) = server
            .call("GET", &format!("/streams/{id}"), &Keys::test_a(), None)
            .await;
        if detail["recording"]["status"] == "ready" {
            break;
        }
        assert!(Instant::now() < deadline, "recording still {detail}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Every read of the bucket held up: the cut hangs in its reads, holding its claim.
    faults::set(
        &bucket,
        json!({"slow_ops": {"HeadObject": 60_000, "GetObject": 60_000}}),
    )
    .await;
    let (status, asked) = server
        .call(
            "POST",
            &format!("/streams/{id}/clips"),
            &Keys::test_a(),
            Some(json!({"start_seconds": 10, "end_seconds": 20})),
        )
        .await;
    assert_eq!(status, 202, "{asked}");
    let path = format!("/streams/{id}/clips/{}", asked["clip_id"].as_str().unwrap());
    wait_for_clip(&server, &path, Duration::from_secs(20), |clip| {
        clip["status"] == "processing"
    })
    .await;
    server.kill();
    faults::clear(&bucket).await;

    // The next process: the dead cut's lease ends, the sweep queues the clip again, and it is
    // cut once.
    let server = start_server(&environment);
    let clip = wait_for_clip(&server, &path, Duration::from_secs(60), |clip| {
        clip["status"] != "processing" && clip["status"] != "pending"
    })
    .await;
    assert_eq!(clip["status"], "ready", "{clip}");
    let bytes = reqwest::get(clip["url"].as_str().unwrap())
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(bytes.len() as u64, clip["size_bytes"].as_u64().unwrap());
    assert_eq!(&bytes[4..8], b"ftyp");
    assert_eq!(
        delivered(&receiver, "stream.clip_ready", &id).await.len(),
        1
    );
    assert!(
        delivered(&receiver, "stream.clip_failed", &id)
            .await
            .is_empty()
    );
}
