//! A receiver's URL may carry a token in its query (`?token=...`). Against the binary with
//! JSON logs, a delivery that fails (retried, then dead-lettered) and a test event leave the
//! token in no log line and no metric line, and the delivery log's errors name the failure
//! class only (docs/webhooks.md, "Failure classes").

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

const TOKEN: &str = "rcvTok3nInTheQuery";

#[tokio::test]
async fn a_token_in_a_receiver_url_is_in_no_log_metric_or_delivery_log() {
    // A receiver that answers garbage: an invalid response, retried and dead-lettered.
    let port = crate::common::receiver::raw_receiver(b"garbage\r\n\r\n").await;
    let (mut child, _, base, reader) = spawn_local_api(
        &["--fixed-demo-keys"],
        &[
            ("STORE", "embedded"),
            ("LOG_FORMAT", "json"),
            ("LOG_LEVEL", "debug"),
            ("WEBHOOK_ALLOW_PRIVATE_URLS", "true"),
            ("WEBHOOK_RETRY_DELAYS_SECS", "0.2"),
        ],
    );
    let lines = collect_lines(reader);
    let http = reqwest::Client::new();
    let key = hosting_app::seed::FIXED_DEMO_TEST_KEY;
    let url = format!("http://127.0.0.1:{port}/hook?token={TOKEN}");
    let registered: Value = http
        .post(format!("{base}/webhooks"))
        .bearer_auth(key)
        .json(&json!({"url": url, "events": ["stream.started"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let webhook = registered["webhook_id"].as_str().expect("registered");
    let tested: Value = http
        .post(format!("{base}/webhooks/{webhook}/test"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tested["error"], "invalid response", "{tested}");
    let creators: Value = http
        .get(format!("{base}/creators"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let started = http
        .post(format!("{base}/streams"))
        .bearer_auth(key)
        .json(&json!({
            "creator_id": creators["creators"][0]["id"],
            "product_name": "Glow Serum",
            "platform": "tiktok",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 201);
    // The first attempt and its retry, then the dead letter.
    let log = async || -> Value {
        http.get(format!("{base}/webhooks/{webhook}/deliveries"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut entries = log().await;
    while entries["deliveries"].as_array().map_or(0, Vec::len) < 3 {
        assert!(tokio::time::Instant::now() < deadline, "{entries}");
        tokio::time::sleep(Duration::from_millis(100)).await;
        entries = log().await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = child.kill();
    let _ = child.wait();

    let logged = lines.lock().unwrap().join("\n");
    assert!(
        logged.contains("invalid response"),
        "the failure is logged by its class"
    );
    assert!(logged.contains("\"_aws\""), "metric lines were written");
    assert!(
        !logged.contains(TOKEN),
        "the token in a log line:\n{logged}"
    );
    let text = entries.to_string();
    assert!(!text.contains(TOKEN), "{text}");
    for entry in entries["deliveries"].as_array().unwrap() {
        assert_eq!(entry["error"], "invalid response", "{entry}");
    }
}
