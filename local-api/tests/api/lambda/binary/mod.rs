//! A function binary run as Lambda runs it: it asks the Lambda Runtime API (served here) for
//! invocations, and reaches DynamoDB, SQS and SSM at `AWS_ENDPOINT_URL` (moto behind the fault
//! proxy) and a LiveKit server (faked here). In Lambda the LiveKit API secret comes only from an
//! SSM `SecureString` parameter, read once per instance while it starts serving.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hosting_app::seed::Seed;
use hosting_aws::dynamodb::DynamoStore;
use hosting_runtime::LocalQueue;
use livekit_api::access_token::TokenVerifier;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::common::fake_livekit::{API_KEY, API_SECRET, FakeLiveKit};

mod download_urls;
mod ssm_secret;

/// The role whose sessions sign download URLs (moto's STS answers for any role).
const DOWNLOAD_ROLE: &str = "arn:aws:iam::123456789012:role/recording-downloads";

/// What a function sent back to the Runtime API: `response`, `error` or `init/error`, and
/// its body.
#[derive(Debug)]
struct Reply {
    kind: &'static str,
    body: Value,
}

#[derive(Clone)]
struct RuntimeApiState {
    invocations: Arc<Mutex<VecDeque<Value>>>,
    replies: mpsc::UnboundedSender<Reply>,
}

/// The Lambda Runtime API: hands out the queued invocations, then holds the next request open
/// as Lambda does between invocations.
struct RuntimeApi {
    address: String,
    replies: mpsc::UnboundedReceiver<Reply>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RuntimeApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn next_invocation(State(state): State<RuntimeApiState>) -> Response {
    let next = state.invocations.lock().unwrap().pop_front();
    let Some(event) = next else {
        std::future::pending::<()>().await;
        unreachable!();
    };
    let deadline = chrono::Utc::now().timestamp_millis() + 29_000;
    let mut headers = HeaderMap::new();
    for (name, value) in [
        (
            "lambda-runtime-aws-request-id",
            uuid::Uuid::new_v4().to_string(),
        ),
        ("lambda-runtime-deadline-ms", deadline.to_string()),
        (
            "lambda-runtime-invoked-function-arn",
            "arn:aws:lambda:us-east-1:123456789012:function:streams".into(),
        ),
        (
            "lambda-runtime-trace-id",
            "Root=1-00000000-000000000000000000000000".into(),
        ),
    ] {
        headers.insert(name, value.parse().unwrap());
    }
    (headers, axum::Json(event)).into_response()
}

fn body_json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or(Value::String(body.to_owned()))
}

impl RuntimeApi {
    async fn start(invocations: Vec<Value>) -> Self {
        let (sender, replies) = mpsc::unbounded_channel();
        let state = RuntimeApiState {
            invocations: Arc::new(Mutex::new(invocations.into())),
            replies: sender,
        };
        let app =
            Router::new()
                .route("/2018-06-01/runtime/invocation/next", get(next_invocation))
                .route(
                    "/2018-06-01/runtime/invocation/{id}/response",
                    post(
                        |State(s): State<RuntimeApiState>,
                         Path(_id): Path<String>,
                         body: String| async move {
                            let _ = s.replies.send(Reply {
                                kind: "response",
                                body: body_json(&body),
                            });
                            axum::http::StatusCode::ACCEPTED
                        },
                    ),
                )
                .route(
                    "/2018-06-01/runtime/invocation/{id}/error",
                    post(
                        |State(s): State<RuntimeApiState>,
                         Path(_id): Path<String>,
                         body: String| async move {
                            let _ = s.replies.send(Reply {
                                kind: "error",
                                body: body_json(&body),
                            });
                            axum::http::StatusCode::ACCEPTED
                        },
                    ),
                )
                .route(
                    "/2018-06-01/runtime/init/error",
                    post(
                        |State(s): State<RuntimeApiState>, body: String| async move {
                            let _ = s.replies.send(Reply {
                                kind: "init/error",
                                body: body_json(&body),
                            });
                            axum::http::StatusCode::ACCEPTED
                        },
                    ),
                )
                .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            address,
            replies,
            task,
        }
    }
}

/// A workspace binary, built beside this test by `cargo test --workspace` (as scripts/test.sh
/// runs it). `cargo test -p local-api` alone does not rebuild it: run `cargo build -p <name>`
/// first, or this tests the last build.
fn function_binary(name: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test's own path");
    let profile_dir = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    let binary = profile_dir.join(name);
    assert!(
        binary.exists(),
        "{} is not built: run `cargo test --workspace` (or `cargo build -p {name}`)",
        binary.display()
    );
    binary
}

/// A fresh table seeded with the suite's brands, and its queues.
struct Backend {
    store: DynamoStore,
    queue_url: String,
    dlq_url: String,
}

async fn backend() -> Backend {
    let (parts, store) = crate::common::backend::parts().await;
    let store = store.expect("TEST_BACKEND=dynamodb");
    let LocalQueue::Sqs(queue) = parts.queue else {
        panic!("the DynamoDB backend queues on SQS");
    };
    Seed::from_json(&crate::common::base_seed(chrono::Utc::now()).to_string())
        .unwrap()
        .load(&store)
        .await
        .unwrap();
    Backend {
        store,
        queue_url: queue.queue_url().to_owned(),
        dlq_url: queue.dlq_url().to_owned(),
    }
}

/// The parameter's name, and the fault proxy's scope for its requests.
async fn put_secret_parameter(secret: &str) -> (String, String) {
    let sdk = hosting_aws::sdk_config().await.expect("SDK configuration");
    let scope = format!("test-{}", uuid::Uuid::new_v4().simple());
    let name = format!("/live-stream-hosting/{scope}/livekit-api-secret");
    aws_sdk_ssm::Client::new(&sdk)
        .put_parameter()
        .name(&name)
        .value(secret)
        .r#type(aws_sdk_ssm::types::ParameterType::SecureString)
        .send()
        .await
        .expect("put the parameter");
    (name, scope)
}

/// The environment Lambda would give the streams function: its backends, LiveKit's URL and key,
/// and the parameter's name. Never the secret.
fn lambda_environment(
    backend: &Backend,
    runtime_api: &str,
    livekit_url: &str,
) -> Vec<(String, String)> {
    let from_test = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"));
    [
        ("AWS_LAMBDA_RUNTIME_API", runtime_api.to_owned()),
        ("AWS_LAMBDA_FUNCTION_NAME", "streams".into()),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128".into()),
        ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".into()),
        ("AWS_REGION", from_test("AWS_REGION")),
        ("AWS_ACCESS_KEY_ID", from_test("AWS_ACCESS_KEY_ID")),
        ("AWS_SECRET_ACCESS_KEY", from_test("AWS_SECRET_ACCESS_KEY")),
        ("AWS_ENDPOINT_URL", from_test("AWS_ENDPOINT_URL")),
        ("TABLE_NAME", backend.store.table().to_owned()),
        ("DELIVERY_QUEUE_URL", backend.queue_url.clone()),
        ("DELIVERY_DLQ_URL", backend.dlq_url.clone()),
        ("SCHEDULER_GROUP", "default".into()),
        (
            "SCHEDULER_TARGET_ARN",
            "arn:aws:lambda:us-east-1:123456789012:function:timers".into(),
        ),
        (
            "SCHEDULER_ROLE_ARN",
            "arn:aws:iam::123456789012:role/scheduler".into(),
        ),
        (
            "SCHEDULER_DLQ_ARN",
            "arn:aws:sqs:us-east-1:123456789012:timer-dlq".into(),
        ),
        (
            "TIMER_QUEUE_URL",
            "https://sqs.us-east-1.amazonaws.com/123456789012/timers".into(),
        ),
        (
            "CLIPS_QUEUE_URL",
            "https://sqs.us-east-1.amazonaws.com/123456789012/clips".into(),
        ),
        ("RECORDINGS_BUCKET", "hosting-test-recordings".into()),
        ("RECORDING_DOWNLOAD_ROLE_ARN", DOWNLOAD_ROLE.into()),
        (
            "SECRETS_KEY_ID",
            crate::common::backend::TEST_SECRETS_KEY.into(),
        ),
        ("LIVEKIT_URL", livekit_url.to_owned()),
        ("LIVEKIT_API_KEY", API_KEY.into()),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect()
}

/// `POST /api/v1/streams` with brand A's live key, as API Gateway hands it to the function.
fn start_stream_event() -> Value {
    let path = format!(
        "{}/../events/streams-start.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut event: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    event["headers"]["authorization"] = format!("Bearer {}", crate::common::Keys::live_a()).into();
    event["body"] = json!({
        "creator_id": crate::common::CREATOR_AVA,
        "product_name": "Glow Serum",
        "platform": "tiktok",
        "duration_minutes": 30,
    })
    .to_string()
    .into();
    event
}

fn spawn(environment: &[(String, String)]) -> tokio::process::Child {
    tokio::process::Command::new(function_binary("streams-api"))
        .env_clear()
        .envs(environment.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the function binary starts")
}

fn printed(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs the function until it exits by itself: what it printed.
async fn run_until_exit(environment: &[(String, String)]) -> (std::process::ExitStatus, String) {
    let output = tokio::time::timeout(
        Duration::from_secs(30),
        spawn(environment).wait_with_output(),
    )
    .await
    .expect("the function exits")
    .unwrap();
    (output.status, printed(&output))
}

fn list_streams_event() -> Value {
    let path = format!("{}/../events/streams-list.json", env!("CARGO_MANIFEST_DIR"));
    let mut event: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    event["headers"]["authorization"] = format!("Bearer {}", crate::common::Keys::live_a()).into();
    event
}

/// Linux's `SCHED_IDLE` scheduling policy.
#[cfg(target_os = "linux")]
const SCHED_IDLE: u32 = 5;

/// The scheduling policy of process `pid`'s thread named `name`, while it runs (proc(5)).
#[cfg(target_os = "linux")]
fn thread_policy(pid: u32, name: &str) -> Option<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
        .find_map(|task| {
            let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
            if comm.trim() != name {
                return None;
            }
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            // `policy` is the stat line's 41st field, the 39th after the command's `)`.
            stat.rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(38)?
                .parse()
                .ok()
        })
}
