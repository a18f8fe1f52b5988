//! The `local-api` binary as a client sees it: it prints its URL, answers at once, loads seed
//! files, and stops cleanly on SIGTERM.

mod common;

use std::io::BufRead;
use std::process::{Child, Command};

use common::*;
use serde_json::json;

struct Server {
    child: Child,
    base: String,
    lines: Vec<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn start(args: &[&str]) -> Server {
    let (child, first, base, mut reader) = spawn_local_api(args, &[("STORE", "memory")]);
    let mut lines = vec![first];
    let mut line = String::new();
    while !args.contains(&"--seed") && reader.read_line(&mut line).unwrap() > 0 {
        lines.push(line.trim_end().to_owned());
        line.clear();
        if lines.last().unwrap().starts_with("  live key:") {
            break;
        }
    }
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in reader.lines() {});
    Server { child, base, lines }
}

fn stop(mut server: Server) {
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "clean exit on SIGTERM: {exit:?}");
}

#[tokio::test]
async fn demo_server_prints_url_and_keys_and_serves_at_once() {
    let server = start(&[]);
    assert!(
        server.base.starts_with("http://127.0.0.1:") && server.base.ends_with("/api/v1"),
        "{}",
        server.base
    );
    let key_of = |label: &str| {
        server
            .lines
            .iter()
            .find_map(|l| l.trim().strip_prefix(label))
            .map(|k| k.trim().to_owned())
            .unwrap()
    };
    let test_key = key_of("test key:");
    let live_key = key_of("live key:");
    assert!(test_key.starts_with("svc_test_") && live_key.starts_with("svc_live_"));

    let client = reqwest::Client::new();
    let discovery: serde_json::Value = serde_json::from_str(
        &client
            .get(format!("{}/", server.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(discovery["version"], "v1");
    assert_eq!(
        discovery["openapi"],
        format!("{}/openapi.json", server.base)
    );
    let creators: serde_json::Value = serde_json::from_str(
        &client
            .get(format!("{}/creators", server.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(creators["creators"].as_array().unwrap().len() >= 3);
    let creator = creators["creators"][0]["id"].as_str().unwrap();
    let r = client
        .post(format!("{}/streams", server.base))
        .bearer_auth(&test_key)
        .body(json!({"creator_id": creator, "product_name": "P", "platform": "kick"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    for key in [&test_key, &live_key] {
        let r = client
            .get(format!("{}/streams", server.base))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    stop(server);
}

#[tokio::test]
async fn seed_file_replaces_the_demo_data() {
    let path = std::env::temp_dir().join(format!("seed-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, base_seed(chrono::Utc::now()).to_string()).unwrap();
    let server = start(&["--seed", path.to_str().unwrap()]);
    assert_eq!(server.lines.len(), 1, "no demo keys are printed");
    let client = reqwest::Client::new();
    let r = client
        .get(format!("{}/streams", server.base))
        .bearer_auth(Keys::test_b())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = client
        .get(format!("{}/streams", server.base))
        .bearer_auth(Keys::revoked())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    stop(server);
    let _ = std::fs::remove_file(path);
}

#[test]
fn bad_arguments_and_seed_files_fail_with_a_message() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_local-api"))
            .args(args)
            .env("STORE", "memory")
            .output()
            .unwrap()
    };
    let out = run(&["--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
    let out = run(&["--addr", "127.0.0.1:0", "--seed", "/nonexistent/seed.json"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("seed"));
    let out = Command::new(env!("CARGO_BIN_EXE_local-api"))
        .args(["--addr", "127.0.0.1:0"])
        .env("PREPARING_TIMEOUT_SECS", "soon")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("PREPARING_TIMEOUT_SECS"));
}

/// The README's "Try it" block, run as pasted against a started server, so it cannot drift.
#[tokio::test]
async fn the_readme_try_it_block_runs_as_pasted() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let block = readme
        .split("<!-- try-it -->")
        .nth(1)
        .and_then(|rest| rest.split("```sh\n").nth(1))
        .and_then(|rest| rest.split("\n```").next())
        .expect("a ```sh block after <!-- try-it -->");
    let server = start(&["--fixed-demo-keys"]);
    assert!(
        server
            .lines
            .iter()
            .any(|l| l.ends_with(hosting_app::seed::FIXED_DEMO_TEST_KEY)),
        "{:?}",
        server.lines
    );
    let output = Command::new("bash")
        .args(["-euo", "pipefail", "-c", block])
        .env("API", &server.base)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stream = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stream: "))
        .expect("the stream id was captured");
    assert!(uuid::Uuid::parse_str(stream).is_ok(), "{stream}");
    // Each answer on its own line, as JSON.
    let answers: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("one JSON answer per line"))
        .collect();
    assert_eq!(
        answers.len(),
        13,
        "one line per answer not captured: {stdout}"
    );
    assert!(answers.iter().any(|a| a["status"] == "ended"), "ended once");
    assert!(
        answers.iter().any(|a| a["end_reason"] == "requested"),
        "the ended stream says why"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["viewer_count"] == 120 && a["status"] == "live"),
        "the viewers helper"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["status"] == "error" && a["end_reason"] == "provider_error"),
        "the fail helper"
    );
    assert!(
        answers.iter().any(|a| a["deliveries"].is_array()),
        "the delivery log"
    );
    assert!(
        answers.iter().any(|a| a["error"]["code"] == "not_found"),
        "then 404"
    );
    assert!(
        answers.iter().any(|a| a["deleted"] == true),
        "webhook deleted"
    );
    stop(server);
}

#[test]
fn help_lists_options_environment_and_the_seed_format() {
    let output = Command::new(env!("CARGO_BIN_EXE_local-api"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "--addr",
        "--seed FILE",
        "--fixed-demo-keys",
        "STORE=memory|dynamodb",
        "LIVEKIT_URL",
        "WEBHOOK_ALLOW_PRIVATE_URLS",
        "Seed files",
        "SIGTERM",
    ] {
        assert!(help.contains(expected), "{expected} in:\n{help}");
    }
}

/// `(exit code, stderr)` of a server that fails to start.
fn fails_to_start(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_local-api"))
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env("STORE", "memory")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn seed_errors_name_the_file_and_refuse_keys_of_unknown_brands() {
    let dir = std::env::temp_dir();
    let broken = dir.join(format!("broken-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&broken, "{\"brands\": [").unwrap();
    let (code, stderr) = fails_to_start(&["--seed", broken.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(stderr.contains(broken.to_str().unwrap()), "{stderr}");

    let orphan = dir.join(format!("orphan-{}.json", uuid::Uuid::new_v4().simple()));
    let seed = json!({"api_keys": [{"key": key("test", "orphan"), "brand_id": "brand_nobody",
                                    "scopes": ["streams:read"]}]});
    std::fs::write(&orphan, seed.to_string()).unwrap();
    let (code, stderr) = fails_to_start(&["--seed", orphan.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("brand `brand_nobody`") && stderr.contains(orphan.to_str().unwrap()),
        "{stderr}"
    );
    let (code, stderr) = fails_to_start(&["--seed", "/nonexistent/seed.json"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("cannot read seed file /nonexistent/seed.json"),
        "{stderr}"
    );
    for file in [broken, orphan] {
        let _ = std::fs::remove_file(file);
    }
}

#[test]
fn logs_are_plain_when_not_a_terminal_and_one_line_per_request() {
    let (mut child, _, base, mut reader) =
        spawn_local_api(&["--fixed-demo-keys"], &[("STORE", "memory")]);
    let address = base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    // A raw request: no client library between the test and the log line it should cause.
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    use std::io::{Read, Write};
    write!(
        stream,
        "GET /api/v1/streams/00000000-0000-4000-8000-000000000000 HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        hosting_app::seed::FIXED_DEMO_TEST_KEY
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    let request_id = answer
        .lines()
        .find_map(|l| l.strip_prefix("x-request-id: "))
        .unwrap()
        .trim()
        .to_owned();
    let mut logged = String::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !logged.contains(&request_id) && std::time::Instant::now() < deadline {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        logged.push_str(&line);
    }
    let _ = child.kill();
    let _ = child.wait();
    let line = logged
        .lines()
        .find(|l| l.contains(&request_id))
        .unwrap_or_else(|| panic!("no access line in:\n{logged}"));
    assert!(!line.contains('\u{1b}'), "no colour codes: {line:?}");
    for field in ["GET", "/api/v1/streams/{id}", "404", "latency_ms"] {
        assert!(line.contains(field), "{field} in {line}");
    }
    assert!(!line.contains("demotestkey"), "never the key: {line}");
}

#[test]
fn with_log_format_json_each_request_is_one_json_line_naming_its_brand() {
    let (mut child, _, base, mut reader) = spawn_local_api(
        &["--fixed-demo-keys"],
        &[("STORE", "memory"), ("LOG_FORMAT", "json")],
    );
    let address = base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let request = |path: &str, key: Option<&str>| {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        let authorization = key
            .map(|k| format!("Authorization: Bearer {k}\r\n"))
            .unwrap_or_default();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {address}\r\n{authorization}Connection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
            .lines()
            .find_map(|l| l.strip_prefix("x-request-id: "))
            .unwrap()
            .trim()
            .to_owned()
    };
    let admitted = request(
        "/api/v1/streams?limit=1",
        Some(hosting_app::seed::FIXED_DEMO_TEST_KEY),
    );
    let public = request("/api/v1/creators", None);
    let mut lines: Vec<serde_json::Value> = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while lines.len() < 2 && std::time::Instant::now() < deadline {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        // The banner prints the demo keys; no log line does.
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        assert!(!line.contains("demotestkey"), "never the key: {line}");
        if json["fields"]["message"] == "request" {
            lines.push(json);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let line_of = |id: &str| {
        lines
            .iter()
            .find(|l| l["fields"]["request_id"] == id)
            .unwrap_or_else(|| panic!("no JSON access line for {id} in {lines:?}"))
            .clone()
    };
    let admitted = line_of(&admitted);
    assert_eq!(admitted["fields"]["method"], "GET");
    assert_eq!(admitted["fields"]["route"], "/api/v1/streams");
    assert_eq!(admitted["fields"]["status"], 200);
    assert!(admitted["fields"]["latency_ms"].is_number());
    assert_eq!(admitted["fields"]["brand_id"], "brand_demo");
    let public = line_of(&public);
    assert_eq!(public["fields"]["route"], "/api/v1/creators");
    assert_eq!(
        public["fields"]["brand_id"], "",
        "no brand for a public request"
    );
}

/// With `LOG_FORMAT=json` the server also writes what Lambda's functions write for CloudWatch
/// metrics: Embedded Metric Format lines, here for a delivery that succeeds, one that fails
/// until it is dead-lettered, the transitions, a launch failure and rate-limit refusals.
#[tokio::test]
async fn with_log_format_json_operations_write_emf_metric_lines() {
    use common::receiver::{Behaviour, Receiver};
    use std::sync::{Arc, Mutex};

    let succeeding = Receiver::start(Behaviour::Ok).await;
    let failing = Receiver::start(Behaviour::Always(500)).await;
    let (mut child, _, base, reader) = spawn_local_api(
        &["--fixed-demo-keys"],
        &[
            ("STORE", "memory"),
            ("LOG_FORMAT", "json"),
            ("METRICS_NAMESPACE", "LiveStreamHosting/test"),
            ("WEBHOOK_ALLOW_PRIVATE_URLS", "true"),
            // One retry, a second later: the failing delivery is dead-lettered quickly.
            ("WEBHOOK_RETRY_DELAYS_SECS", "1"),
        ],
    );
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let collected = lines.clone();
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            collected.lock().unwrap().push(line);
        }
    });

    let http = reqwest::Client::new();
    let key = hosting_app::seed::FIXED_DEMO_TEST_KEY;
    for (receiver, events) in [
        (&succeeding, json!(["stream.started", "stream.ended"])),
        (&failing, json!(["stream.ended"])),
    ] {
        let answer = http
            .post(format!("{base}/webhooks"))
            .bearer_auth(key)
            .json(&json!({"url": receiver.url(), "events": events}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 201, "{}", answer.text().await.unwrap());
    }
    let creators: serde_json::Value = http
        .get(format!("{base}/creators"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let started: serde_json::Value = http
        .post(format!("{base}/streams"))
        .bearer_auth(key)
        .json(&json!({
            "creator_id": creators["creators"][0]["id"],
            "product_name": "Glow Serum",
            "platform": "tiktok",
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = started["stream_id"]
        .as_str()
        .unwrap_or_else(|| panic!("a stream id: {started}"));
    let ended = http
        .delete(format!("{base}/streams/{id}"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 200);
    // A live start with no room provider configured: a launch failure, and the stream's
    // `launch_failed` transition.
    let live = http
        .post(format!("{base}/streams"))
        .bearer_auth(hosting_app::seed::FIXED_DEMO_LIVE_KEY)
        .json(&json!({
            "creator_id": creators["creators"][0]["id"],
            "product_name": "Glow Serum",
            "platform": "tiktok",
            "duration_minutes": 30,
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(live.status(), 502);
    // Past the brand's 100 requests a minute: every refusal counted.
    let mut refused = 0.0;
    for _ in 0..110 {
        let answer = http
            .get(format!("{base}/streams?limit=1"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        if answer.status() == 429 {
            refused += 1.0;
        }
    }
    assert!(refused > 0.0);

    let metric_lines = || -> Vec<serde_json::Value> {
        lines
            .lock()
            .unwrap()
            .iter()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|document| document.get("_aws").is_some())
            .collect()
    };
    let total = |documents: &[serde_json::Value], name: &str| -> f64 {
        documents
            .iter()
            .filter_map(|document| document[name].as_f64())
            .sum()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let documents = loop {
        let documents = metric_lines();
        if total(&documents, "DeliveriesDeadLettered") >= 1.0
            && total(&documents, "DeliveriesSucceeded") >= 2.0
            && total(&documents, "RateLimitRefusals") >= refused
            || std::time::Instant::now() > deadline
        {
            break documents;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let _ = child.kill();
    let _ = child.wait();

    // Each line is a well-formed EMF document: the metric it declares is a member of it, in the
    // namespace configured, with a timestamp, and every declared dimension has its value.
    assert!(!documents.is_empty(), "no metric line");
    for document in &documents {
        let directive = &document["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(
            directive["Namespace"], "LiveStreamHosting/test",
            "{document}"
        );
        assert!(document["_aws"]["Timestamp"].as_u64().unwrap() > 1_600_000_000_000);
        let name = directive["Metrics"][0]["Name"].as_str().unwrap();
        assert!(
            hosting_domain::metrics::Metric::ALL
                .iter()
                .any(|m| m.name() == name),
            "{name}"
        );
        assert!(document[name].is_number(), "{document}");
        for dimension in directive["Dimensions"][0].as_array().unwrap() {
            assert!(
                document[dimension.as_str().unwrap()].is_string(),
                "{document}"
            );
        }
    }
    assert_eq!(
        total(&documents, "DeliveriesSucceeded"),
        2.0,
        "{documents:?}"
    );
    assert_eq!(
        total(&documents, "DeliveriesFailed"),
        2.0,
        "the first attempt and its retry: {documents:?}"
    );
    assert_eq!(
        total(&documents, "DeliveriesDeadLettered"),
        1.0,
        "{documents:?}"
    );
    assert_eq!(total(&documents, "LaunchFailures"), 1.0, "{documents:?}");
    assert_eq!(
        total(&documents, "RateLimitRefusals"),
        refused,
        "{documents:?}"
    );
    let mut transitions: Vec<&serde_json::Value> = documents
        .iter()
        .filter(|document| document.get("StreamTransitions").is_some())
        .collect();
    transitions.sort_by_key(|document| document["Transition"].as_str().unwrap_or_default());
    assert_eq!(transitions.len(), 2, "{transitions:?}");
    assert_eq!(transitions[0]["Transition"], "end_requested");
    assert_eq!(transitions[1]["Transition"], "launch_failed");
    for transition in transitions {
        assert_eq!(
            transition["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json!([["Transition"]])
        );
    }
    assert_eq!(failing.hits().len(), 2);
}

// ---- The transport's edge (docs/request-pipeline.md, "Limits of the transport") ----

/// One raw HTTP/1.1 connection: what an HTTP client library would refuse to send, sent as is.
struct RawConnection(std::net::TcpStream);

/// A response read off a [`RawConnection`].
struct RawResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: serde_json::Value,
}

impl RawResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// JSON with its type and a request id: the envelope with `code` when it is an error.
    fn assert_answer(&self, status: u16, code: Option<&str>) {
        assert_eq!(self.status, status, "{:?}", self.body);
        assert_eq!(self.header("content-type"), Some("application/json"));
        assert!(
            self.header("x-request-id").is_some_and(|id| !id.is_empty()),
            "{:?}",
            self.headers
        );
        if let Some(code) = code {
            assert_eq!(self.body["error"]["code"], code, "{}", self.body);
            assert!(
                self.body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
    }
}

impl RawConnection {
    fn open(base: &str) -> Self {
        let address = base
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap();
        let stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        Self(stream)
    }

    fn send(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.0.write_all(bytes).unwrap();
    }

    /// The next response, or `None` when the server closed the connection first.
    fn response(&mut self) -> Option<RawResponse> {
        use std::io::Read;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match self.0.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ if head.is_empty() => return None,
                other => panic!("cut off in a response head: {other:?}"),
            }
        }
        let head = String::from_utf8(head).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(n, v)| (n.to_owned(), v.trim().to_owned()))
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse().unwrap())
            .expect("every answer has a Content-Length");
        let mut body = vec![0u8; length];
        self.0.read_exact(&mut body).unwrap();
        let body = serde_json::from_slice(&body).expect("a JSON body");
        Some(RawResponse {
            status,
            headers,
            body,
        })
    }

    /// True when the server closed the connection (reads end without data).
    fn closed(&mut self) -> bool {
        use std::io::Read;
        matches!(self.0.read(&mut [0u8; 1]), Ok(0) | Err(_))
    }
}

fn seeded_server() -> (Server, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!("seed-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, base_seed(chrono::Utc::now()).to_string()).unwrap();
    (start(&["--seed", path.to_str().unwrap()]), path)
}

fn keyed_get(path_and_query: &str, key: &str, extra_fields: usize) -> Vec<u8> {
    let mut request = format!(
        "GET /api/v1{path_and_query} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {key}\r\n"
    );
    for i in 0..extra_fields {
        request.push_str(&format!("X-Extra-{i}: {i}\r\n"));
    }
    request.push_str("\r\n");
    request.into_bytes()
}

#[test]
fn transport_limits_answer_with_the_envelope() {
    let (server, seed) = seeded_server();
    let key = Keys::test_b();

    // 110 header fields are served (the usual limit of 100 is not the API's), on a
    // connection that stays open.
    let mut connection = RawConnection::open(&server.base);
    connection.send(&keyed_get("/streams", &key, 110));
    connection.response().unwrap().assert_answer(200, None);
    connection.send(&keyed_get("/streams", &key, 0));
    connection.response().unwrap().assert_answer(200, None);

    // Over the limits: the status HTTP prescribes, the envelope, and the connection closed.
    let long_query = |bytes: usize| format!("/streams?q={}", "a".repeat(bytes));
    let refused: [(Vec<u8>, u16); 6] = [
        (keyed_get("/streams", &key, 1_000), 431),
        (keyed_get(&long_query(70 * 1024), &key, 0), 414),
        (keyed_get(&long_query(1024 * 1024), &key, 0), 414),
        (
            format!(
                "GET /api/v1/streams HTTP/1.1\r\nX-Big: {}\r\n\r\n",
                "b".repeat(300 * 1024)
            )
            .into_bytes(),
            431,
        ),
        (b"this is not HTTP at all\r\n\r\n".to_vec(), 400),
        (
            b"POST /api/v1/streams HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"
                .to_vec(),
            400,
        ),
    ];
    for (request, status) in refused {
        let mut connection = RawConnection::open(&server.base);
        connection.send(&request);
        let response = connection.response().expect("an answer before the close");
        response.assert_answer(status, Some("invalid_fields"));
        assert_eq!(response.header("connection"), Some("close"));
        assert!(connection.closed());
    }

    // A refused head after a served request on the same connection: the first is answered,
    // then the refusal.
    let mut connection = RawConnection::open(&server.base);
    let mut two = keyed_get("/streams", &key, 0);
    two.extend_from_slice(&keyed_get("/streams", &key, 1_000));
    connection.send(&two);
    connection.response().unwrap().assert_answer(200, None);
    connection
        .response()
        .unwrap()
        .assert_answer(431, Some("invalid_fields"));
    stop(server);
    let _ = std::fs::remove_file(seed);
}

#[test]
fn a_refusal_before_the_body_keeps_the_connection() {
    let (server, seed) = seeded_server();
    let start_body = json!({"creator_id": "avt_ava000000001", "product_name": "Glow Serum",
                            "platform": "tiktok", "duration_minutes": 30})
    .to_string();
    let post = |key: &str, length: usize| {
        format!(
            "POST /api/v1/streams HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        )
        .into_bytes()
    };
    let discovery_answers = |connection: &mut RawConnection| {
        connection.send(b"GET /api/v1/ HTTP/1.1\r\nHost: t\r\n\r\n");
        let response = connection.response().expect("the connection is still open");
        response.assert_answer(200, None);
        assert_eq!(response.body["version"], "v1");
    };

    let mut connection = RawConnection::open(&server.base);
    for (key, status, code) in [
        ("svc_test_unknown".to_owned(), 401, "unauthorized"),
        (Keys::live_free(), 402, "plan_required"),
        (Keys::only("streams:read"), 403, "insufficient_scope"),
    ] {
        // The body still arriving when the refusal is answered...
        connection.send(&post(&key, start_body.len()));
        connection.send(&start_body.as_bytes()[..10]);
        let response = connection.response().unwrap();
        response.assert_answer(status, Some(code));
        assert_ne!(response.header("connection"), Some("close"));
        // ...and sent in full after it.
        connection.send(&start_body.as_bytes()[10..]);
        discovery_answers(&mut connection);
        // The body sent in full before the answer.
        connection.send(&post(&key, start_body.len()));
        connection.send(start_body.as_bytes());
        connection
            .response()
            .unwrap()
            .assert_answer(status, Some(code));
        discovery_answers(&mut connection);
    }

    // A body the API reads and refuses.
    connection.send(&post(&Keys::test_b(), 9));
    connection.send(b"not json!");
    connection
        .response()
        .unwrap()
        .assert_answer(400, Some("missing_fields"));
    discovery_answers(&mut connection);

    // 429: the brand's 100 requests of the minute spent, then a start refused before its body.
    let mut answered = 0;
    loop {
        connection.send(&keyed_get("/streams?limit=1", &Keys::test_b(), 0));
        match connection.response().unwrap().status {
            200 => answered += 1,
            429 => break,
            other => panic!("{other}"),
        }
        assert!(answered <= 100);
    }
    connection.send(&post(&Keys::test_b(), start_body.len()));
    connection.send(&start_body.as_bytes()[..10]);
    connection
        .response()
        .unwrap()
        .assert_answer(429, Some("rate_limited"));
    connection.send(&start_body.as_bytes()[10..]);
    discovery_answers(&mut connection);

    // A chunked body still arriving.
    connection.send(
        b"POST /api/v1/streams HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer svc_test_x\r\n\
          Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
    );
    connection
        .response()
        .unwrap()
        .assert_answer(401, Some("unauthorized"));
    connection.send(b"3\r\nabc\r\n0\r\n\r\n");
    discovery_answers(&mut connection);

    // A body over the 1 MiB the API accepts is not read: the answer says the connection closes.
    connection.send(&post("svc_test_unknown", 2 * 1024 * 1024));
    connection.send(&[b'x'; 4096]);
    let response = connection.response().unwrap();
    response.assert_answer(401, Some("unauthorized"));
    assert_eq!(response.header("connection"), Some("close"));
    assert!(connection.closed());
    stop(server);
    let _ = std::fs::remove_file(seed);
}

/// Every shell block of the README pastes as is: bash parses it, and it has no `<placeholder>`
/// (which bash would read as a redirect).
#[test]
fn every_readme_shell_block_parses_and_has_no_placeholder() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let blocks: Vec<&str> = readme
        .split("```sh\n")
        .skip(1)
        .filter_map(|rest| rest.split("\n```").next())
        .collect();
    assert!(blocks.len() >= 5, "{} blocks", blocks.len());
    for block in blocks {
        let parsed = Command::new("bash")
            .args(["-n", "-c", block])
            .output()
            .expect("bash runs");
        assert!(
            parsed.status.success(),
            "{block}\n{}",
            String::from_utf8_lossy(&parsed.stderr)
        );
        let placeholder = block.match_indices('<').find(|(at, _)| {
            let rest = &block[at + 1..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' '))
                .collect();
            !name.is_empty()
                && name.starts_with(|c: char| c.is_ascii_alphabetic())
                && rest[name.len()..].starts_with('>')
        });
        assert!(placeholder.is_none(), "a placeholder in:\n{block}");
    }
}
