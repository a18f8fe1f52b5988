//! Clips (docs/clips.md): `POST /streams/{id}/clips` and its checks in their order, the clip's
//! states, its cut from the test recording (decoded with FFmpeg's libraries), its events, its
//! file's deletion, its expiry with the recording, a cut lost and taken again, and S3's faults
//! on the reads and the upload. On both backends: S3 (moto behind the fault proxy) and the
//! DynamoDB store, or the local server's folder and the embedded store.

mod checks;
mod cuts;
mod faults;
mod layouts;
mod storage;

use chrono::Duration;
use serde_json::{Value, json};

use crate::common::*;

/// The brand of `Keys::test_a()`.
const BRAND: &str = "brand_a";

/// A test stream recorded, ended and its recording `ready` (the shipped 62 s file); its id.
pub(crate) async fn ready_recording(api: &TestApp) -> String {
    let r = api.start(&Keys::test_a(), json!({"record": true})).await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    api.advance(Duration::seconds(30));
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    relay(api).await;
    let r = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(r.body["recording"]["status"], "ready", "{}", r.body);
    id
}

/// `POST /streams/{id}/clips` with `body`.
async fn ask(api: &TestApp, id: &str, body: Value) -> Response {
    api.post(&format!("/streams/{id}/clips"), &Keys::test_a(), body)
        .await
}

/// Asks for a clip and returns its id (answered `202`).
async fn ask_ok(api: &TestApp, id: &str, start: f64, end: f64) -> String {
    let r = ask(api, id, json!({"start_seconds": start, "end_seconds": end})).await;
    r.assert_status(202);
    r.body["clip_id"].as_str().unwrap().to_owned()
}

/// The clip as its brand reads it.
async fn clip(api: &TestApp, id: &str, clip_id: &str) -> Value {
    let r = api
        .get(&format!("/streams/{id}/clips/{clip_id}"), &Keys::test_a())
        .await;
    r.assert_status(200);
    r.body
}

/// Runs the cut of every clip of the stream, as the clips function would on their jobs; what
/// each did.
async fn run_cuts(api: &TestApp, id: &str) -> Vec<hosting_app::service::clips::CutOutcome> {
    let stream_id = uuid::Uuid::parse_str(id).unwrap();
    let app = &api.runtime.app;
    let mut outcomes = Vec::new();
    for clip in app.clips().stream_clips(stream_id).await.unwrap() {
        let job = hosting_domain::ports::ClipJob {
            stream_id,
            clip_id: clip.id,
        };
        outcomes.push(hosting_app::service::clips::cut(app, &job).await.unwrap());
    }
    outcomes
}

/// Relays every pending event, as the relay's loop or function does.
async fn relay(api: &TestApp) {
    hosting_app::delivery::relay::sweep(&api.runtime.app, std::time::Duration::ZERO)
        .await
        .unwrap();
}

/// The object key of a clip.
fn clip_key(id: &str, clip_id: &str) -> String {
    format!("clips/{BRAND}/{id}/{clip_id}.mp4")
}

/// The bodies of the stream's clip events, in order.
async fn clip_events(api: &TestApp, id: &str) -> Vec<Value> {
    api.emitted_events()
        .await
        .into_iter()
        .filter(|e| {
            e.stream_id.map(|s| s.to_string()).as_deref() == Some(id)
                && e.event_type.as_str().starts_with("stream.clip_")
        })
        .map(|e| serde_json::from_str(&e.body).unwrap())
        .collect()
}

/// Runs a script of scripts/media with the Python that has FFmpeg's libraries (PyAV); its
/// output.
fn media_python(args: &[&std::path::Path]) -> String {
    let output = std::process::Command::new(
        std::env::var("MEDIA_PYTHON").expect("MEDIA_PYTHON: scripts/lib/venv.sh media"),
    )
    .args(args)
    .output()
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}
