//! `POST /webhooks`: the secret shown once, every refusal in its order, URL rules and the per-brand limit.

use base64::Engine;
use serde_json::{Value, json};

use super::{URL, all_events};
use crate::common::*;

#[tokio::test]
async fn registration_returns_the_secret_once() {
    let api = TestApp::new().await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": URL, "events": all_events()}),
        )
        .await;
    r.assert_status(201);
    let fields = field_names(&r.body);
    assert_eq!(
        fields,
        [
            "active",
            "events",
            "public_key",
            "secret",
            "url",
            "webhook_id"
        ]
    );
    let public_key = r.body["public_key"].as_str().unwrap();
    assert!(
        public_key.starts_with("whpk_") && public_key.len() == 49,
        "{public_key}"
    );
    assert_eq!(r.body["url"], URL);
    assert_eq!(r.body["active"], true);
    assert_eq!(r.body["events"], all_events());
    assert!(uuid::Uuid::parse_str(r.body["webhook_id"].as_str().unwrap()).is_ok());
    let secret = r.body["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 6 + 32);
    let raw = secret.strip_prefix("whsec_").unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .unwrap()
            .len(),
        24
    );

    let list = api.get("/webhooks", &Keys::test_a()).await;
    list.assert_status(200);
    let item = &list.body["webhooks"][0];
    let fields = field_names(item);
    assert_eq!(
        fields,
        ["active", "created_at", "events", "url", "webhook_id"]
    );
    assert!(
        !list.body.to_string().contains(raw),
        "the secret is never listed"
    );
}

#[tokio::test]
async fn secrets_differ() {
    let api = TestApp::new().await;
    let a = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": URL, "events": ["stream.ended"]}),
        )
        .await;
    let b = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": URL, "events": ["stream.ended"]}),
        )
        .await;
    assert_ne!(a.body["secret"], b.body["secret"]);
}

#[tokio::test]
async fn events_duplicates_dropped_order_kept() {
    let api = TestApp::new().await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": URL, "events": ["stream.error", "stream.started", "stream.error"]}),
        )
        .await;
    r.assert_status(201);
    assert_eq!(r.body["events"], json!(["stream.error", "stream.started"]));
}

#[tokio::test]
async fn registration_checks_in_order() {
    let api = TestApp::new().await;
    let cases: Vec<(Option<&str>, Value, &str)> = vec![
        (Some("{"), Value::Null, "missing_fields"),
        (Some("[]"), Value::Null, "missing_fields"),
        (None, json!({}), "missing_fields"),
        (None, json!({"url": URL}), "missing_fields"),
        (None, json!({"events": ["stream.ended"]}), "missing_fields"),
        (
            None,
            json!({"url": null, "events": ["stream.ended"]}),
            "missing_fields",
        ),
        (None, json!({"url": URL, "events": null}), "missing_fields"),
        // missing wins over a bad url
        (None, json!({"url": "http://localhost"}), "missing_fields"),
        // invalid_url wins over invalid_events
        (
            None,
            json!({"url": "http://example.com", "events": []}),
            "invalid_url",
        ),
        (
            None,
            json!({"url": 5, "events": ["stream.ended"]}),
            "invalid_url",
        ),
        (
            None,
            json!({"url": "", "events": ["stream.ended"]}),
            "invalid_url",
        ),
        (None, json!({"url": URL, "events": []}), "invalid_events"),
        (
            None,
            json!({"url": URL, "events": ["stream.paused"]}),
            "invalid_events",
        ),
        (
            None,
            json!({"url": URL, "events": ["stream.ended", "nope"]}),
            "invalid_events",
        ),
        (
            None,
            json!({"url": URL, "events": "stream.ended"}),
            "invalid_events",
        ),
        (None, json!({"url": URL, "events": [1]}), "invalid_events"),
        (
            None,
            json!({"url": URL, "events": ["STREAM.ENDED"]}),
            "invalid_events",
        ),
    ];
    for (raw, body, code) in cases {
        let raw = raw.map(str::to_owned).unwrap_or_else(|| body.to_string());
        let r = api
            .call_raw("POST", "/webhooks", Some(&Keys::test_a()), Some(&raw))
            .await;
        r.assert_error(400, code);
    }
    assert_eq!(
        api.get("/webhooks", &Keys::test_a()).await.body["webhooks"],
        json!([])
    );
}

#[tokio::test]
async fn url_rules_at_registration() {
    let api = TestApp::new().await;
    let long_ok = format!("https://example.com/{}", "a".repeat(2048 - 20));
    assert_eq!(long_ok.len(), 2048);
    let long_bad = format!("{long_ok}a");
    let cases: Vec<(&str, bool)> = vec![
        ("https://hooks.example.com/x", true),
        ("https://8.8.8.8/hook", true),
        ("https://example.com:8443/a?b=c", true),
        (&long_ok, true),
        (&long_bad, false),
        ("http://hooks.example.com/x", false),
        ("ftp://hooks.example.com/x", false),
        ("hooks.example.com/x", false),
        ("https://user:pw@hooks.example.com/", false),
        ("https://localhost/", false),
        ("https://localhost./", false),
        ("https://foo.localhost/", false),
        ("https://127.0.0.1/", false),
        ("https://127.1/", false),
        ("https://0x7f.0.0.1/", false),
        ("https://2130706433/", false),
        ("https://10.0.0.1/", false),
        ("https://169.254.169.254/latest", false),
        ("https://192.168.1.1/", false),
        ("https://[::1]/", false),
        ("https://[::ffff:127.0.0.1]/", false),
        ("https://[2606:4700::1111]/", false),
        ("https://intranet/", false),
        ("https://printer.local/", false),
        ("https://svc.internal/", false),
        ("https://x.test/", false),
    ];
    for (url, ok) in cases {
        let r = api
            .post(
                "/webhooks",
                &Keys::test_b(),
                json!({"url": url, "events": ["stream.ended"]}),
            )
            .await;
        if ok {
            r.assert_status(201);
            api.delete(
                &format!("/webhooks?id={}", r.body["webhook_id"].as_str().unwrap()),
                &Keys::test_b(),
            )
            .await
            .assert_status(200);
        } else {
            r.assert_error(400, "invalid_url");
        }
    }
}

#[tokio::test]
async fn private_urls_are_allowed_only_when_configured() {
    let api = TestApp::builder().with_private_webhook_urls().await;
    for url in [
        "http://127.0.0.1:9000/hook",
        "http://localhost:8080/",
        "https://10.0.0.1/",
    ] {
        api.post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": url, "events": ["stream.ended"]}),
        )
        .await
        .assert_status(201);
    }
    api.post(
        "/webhooks",
        &Keys::test_a(),
        json!({"url": "ftp://localhost/", "events": ["stream.ended"]}),
    )
    .await
    .assert_error(400, "invalid_url");
}

#[tokio::test]
async fn at_most_25_webhooks_per_brand() {
    let api = TestApp::new().await;
    for _ in 0..25 {
        api.post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": URL, "events": ["stream.ended"]}),
        )
        .await
        .assert_status(201);
    }
    api.post(
        "/webhooks",
        &Keys::test_a(),
        json!({"url": URL, "events": ["stream.ended"]}),
    )
    .await
    .assert_error(400, "invalid_fields");
    // Another brand is unaffected; deleting one frees a place.
    api.post(
        "/webhooks",
        &Keys::test_b(),
        json!({"url": URL, "events": ["stream.ended"]}),
    )
    .await
    .assert_status(201);
    let first = api.get("/webhooks", &Keys::test_a()).await.body["webhooks"][0]["webhook_id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.delete(&format!("/webhooks?id={first}"), &Keys::test_a())
        .await
        .assert_status(200);
    api.post(
        "/webhooks",
        &Keys::test_a(),
        json!({"url": URL, "events": ["stream.ended"]}),
    )
    .await
    .assert_status(201);
}

/// A message that names what is allowed names exactly what the check accepts: every type in
/// `invalid_events`'s message registers, and so do those of the OpenAPI document's enum.
#[tokio::test]
async fn the_invalid_events_message_names_every_type_the_registration_accepts() {
    let api = TestApp::new().await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": URL, "events": ["stream.paused"]}),
        )
        .await;
    r.assert_error(400, "invalid_events");
    let message = r.body["error"]["message"].as_str().unwrap().to_owned();
    let named: Vec<&str> = message
        .strip_prefix("events must be a non-empty array of ")
        .and_then(|rest| rest.strip_suffix('.'))
        .unwrap_or_else(|| panic!("{message}"))
        .split(", ")
        .collect();
    let openapi = api.call("GET", "/openapi.json", None, None).await.body;
    let documented: Vec<&str> = openapi["components"]["schemas"]["EventType"]["enum"]
        .as_array()
        .expect("EventType enum")
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    assert_eq!(named, documented, "{message}");
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": URL, "events": named}),
        )
        .await;
    r.assert_status(201);
    assert_eq!(r.body["events"], json!(named));
}
