//! The local server killed mid-flight (`SIGKILL`, as Lambda kills an instance at its timeout)
//! and started again on the same DynamoDB table: streams still end at their deadlines, their
//! events are delivered once, and their slots come back. The timers of the killed process die
//! with it; the deadline sweep ends the streams from what the store holds.

mod after_a_kill;
mod clip;
mod egress;
mod host;
mod parked;
mod recording;
mod show;

use std::io::BufRead;
use std::process::Child;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};

use crate::common::fake_livekit::FakeLiveKit;
use crate::common::receiver::Receiver;
use crate::common::*;

const PREPARING_TIMEOUT_SECS: u64 = 4;

const SWEEP_INTERVAL_SECS: u64 = 1;

/// Time for a request, a relay and a delivery on a busy machine, past the deadline.
const SLACK: Duration = Duration::from_secs(4);

struct Environment {
    vars: Vec<(String, String)>,
    seed: tempfile_path::TempFile,
}

mod tempfile_path {
    /// A file removed when dropped.
    pub struct TempFile(pub std::path::PathBuf);

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

/// A fresh table and queues, and the server's configuration for them and `livekit`.
async fn environment(livekit: &FakeLiveKit) -> Environment {
    let (parts, dynamo) = crate::common::backend::parts().await;
    let dynamo = dynamo.expect("DynamoDB");
    let hosting_runtime::LocalQueue::Sqs(queue) = parts.queue else {
        panic!("SQS");
    };
    let clips = parts.clip_queue.expect("the clips queue on SQS");
    let mut vars: Vec<(String, String)> = vec![
        ("STORE".into(), "dynamodb".into()),
        ("TABLE_NAME".into(), dynamo.table().into()),
        (
            "SECRETS_KEY_ID".into(),
            crate::common::backend::TEST_SECRETS_KEY.into(),
        ),
        ("DELIVERY_QUEUE_URL".into(), queue.queue_url().into()),
        ("DELIVERY_DLQ_URL".into(), queue.dlq_url().into()),
        ("CLIPS_QUEUE_URL".into(), clips.queue_url().into()),
        (
            "PREPARING_TIMEOUT_SECS".into(),
            PREPARING_TIMEOUT_SECS.to_string(),
        ),
        (
            "SWEEP_INTERVAL_SECS".into(),
            SWEEP_INTERVAL_SECS.to_string(),
        ),
        // Longer than the test: only the kill ends a hanging launch.
        ("LAUNCH_TIMEOUT_SECS".into(), "600".into()),
        ("WEBHOOK_ALLOW_PRIVATE_URLS".into(), "true".into()),
        (
            "RECORDINGS_BUCKET".into(),
            crate::common::backend::TEST_RECORDINGS_BUCKET.into(),
        ),
    ];
    vars.extend(livekit.config().into_iter().map(|(k, v)| (k.to_owned(), v)));
    let seed = base_seed(Utc::now());
    let path = std::env::temp_dir().join(format!("seed-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, seed.to_string()).unwrap();
    Environment {
        vars,
        seed: tempfile_path::TempFile(path),
    }
}

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(environment: &Environment) -> Server {
    let envs: Vec<(&str, &str)> = environment
        .vars
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let seed = environment.seed.0.to_str().expect("a UTF-8 temp path");
    let (child, _, base, reader) = spawn_local_api(&["--seed", seed], &envs);
    std::thread::spawn(move || for _ in reader.lines() {});
    Server { child, base }
}

impl Server {
    /// Kills the process at once, as Lambda does at its timeout.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    async fn call(&self, method: &str, path: &str, key: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = reqwest::Client::new()
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {key}"));
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A start with an `Idempotency-Key`: (status, body, replayed).
    async fn start_with_key(
        &self,
        key: &str,
        idempotency_key: &str,
        body: &Value,
    ) -> (u16, Value, bool) {
        let response = reqwest::Client::new()
            .post(format!("{}/streams", self.base))
            .header("authorization", format!("Bearer {key}"))
            .header("idempotency-key", idempotency_key)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let replayed = response
            .headers()
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::Null),
            replayed,
        )
    }

    /// Polls a stream until it has `status`; returns its detail.
    async fn wait_for_status(&self, id: &str, status: &str, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let (_, detail) = self
                .call("GET", &format!("/streams/{id}"), &Keys::test_a(), None)
                .await;
            if detail["status"] == status {
                return detail;
            }
            assert!(Instant::now() < deadline, "still {detail}");
            // Well under the brand's 100 requests a minute, however long it waits.
            tokio::time::sleep(Duration::from_millis(750)).await;
        }
    }
}

/// Deliveries of `event_type` for `stream_id`, after a pause for duplicates to turn up.
async fn delivered(receiver: &Receiver, event_type: &str, stream_id: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let hits: Vec<String> = receiver
            .hits()
            .into_iter()
            .filter(|hit| hit.header("x-service-event-type") == event_type)
            .filter(|hit| hit.body.contains(stream_id))
            .map(|hit| hit.header("x-service-event-id").to_owned())
            .collect();
        if !hits.is_empty() || Instant::now() > deadline {
            tokio::time::sleep(Duration::from_secs(2)).await;
            return receiver
                .hits()
                .into_iter()
                .filter(|hit| hit.header("x-service-event-type") == event_type)
                .filter(|hit| hit.body.contains(stream_id))
                .map(|hit| hit.header("x-service-event-id").to_owned())
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn register(server: &Server, receiver: &Receiver, events: Value) {
    let (status, body) = server
        .call(
            "POST",
            "/webhooks",
            &Keys::test_a(),
            Some(json!({"url": receiver.url(), "events": events})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
}

/// Waits (a few sweeps) for LiveKit to no longer have `room`. The rule is that the room goes,
/// not how fast: the bound leaves room for a restarted server's sweeps on a loaded moto.
async fn wait_until_gone(livekit: &FakeLiveKit, room: &str) {
    let deadline = Instant::now() + Duration::from_secs(SWEEP_INTERVAL_SECS * 5) + SLACK * 3;
    while livekit.rooms().contains(room) {
        assert!(Instant::now() < deadline, "room {room} still exists");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn three_starts_fit(server: &Server) {
    let start = json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick"});
    for _ in 0..3 {
        let (status, body) = server
            .call("POST", "/streams", &Keys::test_a(), Some(start.clone()))
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, body) = server
        .call("POST", "/streams", &Keys::test_a(), Some(start))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (429, Some("concurrency_limit"))
    );
}
