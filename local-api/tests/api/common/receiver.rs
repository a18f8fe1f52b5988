//! Real webhook receivers on loopback, scripted to succeed, fail, redirect, stall or go away.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};

#[derive(Debug, Clone)]
pub struct Hit {
    pub path: String,
    pub headers: HeaderMap,
    pub body: String,
    pub at: DateTime<Utc>,
}

impl Hit {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

#[derive(Debug, Clone)]
pub enum Behaviour {
    Ok,
    /// Answers 500 this many times, then 200.
    FailTimes(usize),
    Always(u16),
    /// Answers 302 to `/elsewhere` (on itself).
    Redirect,
    /// Holds every request this long before answering 200.
    Slow(Duration),
    /// 503 with `Retry-After: <secs>` once, then 200.
    RetryAfterOnce(u64),
    /// These statuses in turn, then 200.
    Statuses(Vec<u16>),
    /// Whatever status the test sets, as it goes.
    Controlled(Arc<std::sync::atomic::AtomicU16>),
}

#[derive(Clone)]
struct Shared {
    hits: Arc<Mutex<Vec<Hit>>>,
    behaviour: Behaviour,
}

pub struct Receiver {
    pub base: String,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn receive(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let index = {
        let mut hits = shared.hits.lock().unwrap();
        hits.push(Hit {
            path: uri.path().to_owned(),
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
            at: Utc::now(),
        });
        hits.len() - 1
    };
    if uri.path() == "/elsewhere" {
        return StatusCode::OK.into_response();
    }
    match shared.behaviour {
        Behaviour::Ok => StatusCode::OK.into_response(),
        Behaviour::FailTimes(n) if index < n => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        Behaviour::FailTimes(_) => StatusCode::NO_CONTENT.into_response(),
        Behaviour::Always(status) => StatusCode::from_u16(status).unwrap().into_response(),
        Behaviour::Redirect => (StatusCode::FOUND, [("location", "/elsewhere")]).into_response(),
        Behaviour::Slow(hold) => {
            tokio::time::sleep(hold).await;
            StatusCode::OK.into_response()
        }
        Behaviour::RetryAfterOnce(secs) if index == 0 => (
            StatusCode::SERVICE_UNAVAILABLE,
            [("retry-after", secs.to_string())],
        )
            .into_response(),
        Behaviour::RetryAfterOnce(_) => StatusCode::OK.into_response(),
        Behaviour::Controlled(ref status) => {
            StatusCode::from_u16(status.load(std::sync::atomic::Ordering::SeqCst))
                .unwrap()
                .into_response()
        }
        Behaviour::Statuses(ref statuses) => statuses
            .get(index)
            .map_or(StatusCode::OK, |s| StatusCode::from_u16(*s).unwrap())
            .into_response(),
    }
}

impl Receiver {
    pub async fn start(behaviour: Behaviour) -> Self {
        let hits = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new().fallback(receive).with_state(Shared {
            hits: hits.clone(),
            behaviour,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            base: format!("http://127.0.0.1:{port}"),
            hits,
            task,
        }
    }

    pub fn port(&self) -> u16 {
        self.base.rsplit(':').next().unwrap().parse().unwrap()
    }

    pub fn url(&self) -> String {
        format!("{}/hook", self.base)
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// Waits until at least `n` requests arrived (panics after `limit`).
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Vec<Hit> {
        self.wait_until(limit, |hits| (hits.len() >= n).then(|| hits.to_vec()))
            .await
            .unwrap_or_else(|hits| panic!("expected {n} deliveries, got {}", hits.len()))
    }

    /// Waits until at least `n` requests carried event `event_id` (panics after `limit`). Other
    /// deliveries may arrive meanwhile, in any order, so a count of all requests cannot stand in.
    pub async fn wait_for_event(&self, event_id: &str, n: usize, limit: Duration) -> Vec<Hit> {
        let carrying = |hits: &[Hit]| -> Vec<Hit> {
            hits.iter()
                .filter(|hit| hit.header("x-service-event-id") == event_id)
                .cloned()
                .collect()
        };
        self.wait_until(limit, |hits| Some(carrying(hits)).filter(|c| c.len() >= n))
            .await
            .unwrap_or_else(|hits| {
                panic!(
                    "expected {n} deliveries of {event_id}, got {}",
                    carrying(&hits).len()
                )
            })
    }

    /// Polls the requests so far until `found` finds something in them; after `limit`, the
    /// requests it last saw, for the caller's message.
    pub async fn wait_until<T>(
        &self,
        limit: Duration,
        found: impl Fn(&[Hit]) -> Option<T>,
    ) -> Result<T, Vec<Hit>> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let hits = self.hits();
            if let Some(result) = found(&hits) {
                return Ok(result);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(hits);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub fn verifier_python() -> String {
    std::env::var("WEBHOOK_VERIFIER_PYTHON").unwrap_or_else(|_| {
        panic!("WEBHOOK_VERIFIER_PYTHON is not set: run the suite with scripts/test.sh, which installs the stripe, standardwebhooks and cryptography verifiers")
    })
}

/// Verifies `hit` with the published Stripe and Standard Webhooks libraries keyed with
/// `secret`: (both verified, what the verifier printed).
pub fn run_verifier(secret: &str, hit: &Hit) -> (bool, String) {
    run_python_verifier(
        "verify_signatures.py",
        serde_json::json!({"secret": secret}),
        hit,
    )
}

/// Verifies the `v1a` signatures of `hit` with Python's `cryptography` against `public_key`
/// (`whpk_...`): (one verified, what the verifier printed).
pub fn run_public_key_verifier(public_key: &str, hit: &Hit) -> (bool, String) {
    run_python_verifier(
        "verify_public_key.py",
        serde_json::json!({"public_key": public_key}),
        hit,
    )
}

fn run_python_verifier(script: &str, mut capture: serde_json::Value, hit: &Hit) -> (bool, String) {
    use std::io::Write;
    let headers: std::collections::HashMap<String, String> = hit
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    capture["body"] = hit.body.clone().into();
    capture["headers"] = serde_json::json!(headers);
    let script = format!("{}/tests/verifiers/{script}", env!("CARGO_MANIFEST_DIR"));
    let mut child = std::process::Command::new(verifier_python())
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the verifier");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(capture.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// A loopback receiver below HTTP: it reads the first bytes of each request, writes `answer`
/// (nothing: it hangs up) and closes. Its port.
pub async fn raw_receiver(answer: &'static [u8]) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = socket.read(&mut [0u8; 4096]).await;
                let _ = socket.write_all(answer).await;
            });
        }
    });
    port
}
