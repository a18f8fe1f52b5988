//! A failure with no HTTP answer is named by its class alone (docs/webhooks.md, "Failure
//! classes"): for a receiver whose URL carries a token in its query, in each class, neither the
//! test's answer, the delivery log nor a dead letter holds the URL or the token.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::common::receiver::{Behaviour, Receiver, raw_receiver};
use crate::common::*;
use serde_json::{Value, json};

const TOKEN: &str = "tok3nNeverEchoed";

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Registers `url` for brand A, sends it a test event and returns the answer's `error`, having
/// checked that no answer and no log entry holds the token.
async fn class_of(api: &TestApp, url: &str) -> String {
    let (id, _) = register_webhook(api, &Keys::test_a(), url, json!(["stream.started"])).await;
    let r = api
        .call(
            "POST",
            &format!("/webhooks/{id}/test"),
            Some(&Keys::test_a()),
            None,
        )
        .await;
    r.assert_status(200);
    assert_eq!(r.body["status_code"], Value::Null, "{}", r.body);
    let log = api
        .get(&format!("/webhooks/{id}/deliveries"), &Keys::test_a())
        .await;
    for text in [r.body.to_string(), log.body.to_string()] {
        assert!(
            !text.contains(TOKEN) && !text.contains("127.0.0.1"),
            "{text}"
        );
    }
    assert_eq!(log.body["deliveries"][0]["error"], r.body["error"]);
    r.body["error"].as_str().expect("an error").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failure_is_named_by_its_class_never_by_its_url() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_webhook_timeout_secs(1)
        .await;
    let slow = Receiver::start(Behaviour::Slow(Duration::from_secs(3))).await;
    let hangs_up = raw_receiver(b"").await;
    let garbage = raw_receiver(b"garbage\r\n\r\n").await;
    let cases = [
        (
            format!("http://127.0.0.1:{}/hook", slow.port()),
            "timed out",
        ),
        (
            format!("http://127.0.0.1:{}/hook", closed_port()),
            "connection refused",
        ),
        (
            format!("http://127.0.0.1:{hangs_up}/hook"),
            "connection reset",
        ),
        (
            format!("http://127.0.0.1:{garbage}/hook"),
            "invalid response",
        ),
        (format!("https://127.0.0.1:{garbage}/hook"), "TLS failure"),
    ];
    for (url, class) in cases {
        let url = format!("{url}?token={TOKEN}");
        assert_eq!(class_of(&api, &url).await, class, "{url}");
    }

    // A delivery that fails for good: its dead letter says the class too.
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_webhook_retry_delays_secs(&[0.05])
        .await;
    register_webhook(
        &api,
        &Keys::test_a(),
        &format!("http://127.0.0.1:{garbage}/hook?token={TOKEN}"),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;
    let dead = api.wait_for_dead_letters(WAIT).await;
    assert_eq!(dead[0].last_error, "invalid response");
}

/// Resolves every name to one address, or to none.
struct Dns(Option<IpAddr>);

#[async_trait::async_trait]
impl hosting_app::delivery::Dns for Dns {
    async fn lookup(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
        self.0
            .map(|ip| vec![ip])
            .ok_or_else(|| std::io::Error::other("no such name: resolver details"))
    }
}

/// The delivery worker resolves names through the app's resolver (the test event does not:
/// it uses the system's), so these classes are seen on a delivery: its log and its dead letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_does_not_resolve_or_resolves_privately_is_named_so() {
    for (dns, class) in [
        (Dns(None), "name not resolved"),
        (Dns(Some("127.0.0.1".parse().unwrap())), "refused address"),
    ] {
        let api = TestApp::builder()
            .with_delivery_dns(Arc::new(dns))
            .with_webhook_retry_delays_secs(&[0.05])
            .await;
        let url = format!("https://hooks.example.com/hook?token={TOKEN}");
        let (id, _) =
            register_webhook(&api, &Keys::test_a(), &url, json!(["stream.started"])).await;
        api.start_test_stream(&Keys::test_a()).await;
        let dead = api.wait_for_dead_letters(WAIT).await;
        assert_eq!(dead[0].last_error, class);
        let log = api
            .get(&format!("/webhooks/{id}/deliveries"), &Keys::test_a())
            .await;
        let text = log.body.to_string();
        assert!(
            !text.contains(TOKEN) && !text.contains("hooks.example.com"),
            "{text}"
        );
        for entry in log.body["deliveries"].as_array().unwrap() {
            assert_eq!(entry["error"], class, "{entry}");
        }
    }
}
