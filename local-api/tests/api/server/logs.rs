//! The access log: plain when not a terminal, one JSON line per request with `--log-format json`, and EMF metric lines.

use std::io::BufRead;

use serde_json::json;

use crate::common::*;

#[test]
fn logs_are_plain_when_not_a_terminal_and_one_line_per_request() {
    let (mut child, _, base, mut reader) =
        spawn_local_api(&["--fixed-demo-keys"], &[("STORE", "embedded")]);
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
        &[("STORE", "embedded"), ("LOG_FORMAT", "json")],
    );
    let address = base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let request = |method: &str, path: &str, key: Option<&str>| {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        let authorization = key
            .map(|k| format!("Authorization: Bearer {k}\r\n"))
            .unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {address}\r\n{authorization}Connection: close\r\n\r\n"
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
        "GET",
        "/api/v1/streams?limit=1",
        Some(hosting_app::seed::FIXED_DEMO_TEST_KEY),
    );
    let public = request("GET", "/api/v1/creators", None);
    let not_served = request("DELETE", "/api/v1/creators", None);
    let mut lines: Vec<serde_json::Value> = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while lines.len() < 3 && std::time::Instant::now() < deadline {
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
    let not_served = line_of(&not_served);
    assert_eq!(not_served["fields"]["status"], 404);
    assert_eq!(
        not_served["fields"]["route"], "/api/v1/creators",
        "a method the path does not serve still names its route"
    );
}

/// With `LOG_FORMAT=json` the server also writes what Lambda's functions write for CloudWatch
/// metrics: Embedded Metric Format lines, here for a delivery that succeeds, one that fails
/// until it is dead-lettered, the transitions, a launch failure and rate-limit refusals.
#[tokio::test]
async fn with_log_format_json_operations_write_emf_metric_lines() {
    use crate::common::receiver::{Behaviour, Receiver};

    let succeeding = Receiver::start(Behaviour::Ok).await;
    let failing = Receiver::start(Behaviour::Always(500)).await;
    let (mut child, _, base, reader) = spawn_local_api(
        &["--fixed-demo-keys"],
        &[
            ("STORE", "embedded"),
            ("LOG_FORMAT", "json"),
            ("METRICS_NAMESPACE", "LiveStreamHosting/test"),
            ("WEBHOOK_ALLOW_PRIVATE_URLS", "true"),
            // One retry, a second later: the failing delivery is dead-lettered quickly.
            ("WEBHOOK_RETRY_DELAYS_SECS", "1"),
        ],
    );
    let lines = collect_lines(reader);

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
    // Past the brand's 100 requests a minute: every refusal counted. The window is a calendar
    // minute, so the requests may straddle its end; 201 of them overrun one of the two windows.
    let mut refused = 0.0;
    for _ in 0..201 {
        let answer = http
            .get(format!("{base}/streams?limit=1"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        if answer.status() == 429 {
            refused += 1.0;
            break;
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
            hosting_app::metrics::Metric::ALL
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
