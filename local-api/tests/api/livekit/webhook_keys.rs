//! The keys a LiveKit webhook may be signed with (docs/livekit.md, "LiveKit webhooks"): the API
//! key, or the webhook key LiveKit may sign with instead (`LIVEKIT_WEBHOOK_API_KEY`); and an
//! event that cannot be checked for a lack of its secret, answered `503` so LiveKit sends it
//! again, never `401`.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use hosting_domain::clock::SystemClock;
use hosting_runtime::Runtime;
use hosting_support::config::{ApiSecret, Config, StoreKind};
use tower::ServiceExt;

use super::post_webhook;
use crate::common::fake_livekit::{API_KEY, API_SECRET, FakeLiveKit, participant_event, sign_jwt};
use crate::common::*;

const WEBHOOK_KEY: &str = "APIwebhooks";
const WEBHOOK_SECRET: &str = "the-webhook-keys-own-secret-0123456789";

/// `body`'s token as key `key` with `secret` signs it.
fn token(body: &str, key: &str, secret: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    let sha = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(body));
    let now = chrono::Utc::now().timestamp();
    sign_jwt(
        &serde_json::json!({"iss": key, "nbf": now - 10, "exp": now + 600, "sha256": sha}),
        secret,
    )
}

#[tokio::test]
async fn a_webhook_signed_with_the_webhook_key_or_the_api_key_is_accepted() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder()
        .with_livekit(&fake)
        .with_var("LIVEKIT_WEBHOOK_API_KEY", WEBHOOK_KEY)
        .with_var("LIVEKIT_WEBHOOK_API_SECRET", WEBHOOK_SECRET)
        .await;
    let (_, room, _) = start_live(&api, 30).await;
    let event = participant_event("participant_joined", &room, None, "EV_viewer");
    let body = event.to_string();
    // Neither key with the other's secret, nor a key of no one's.
    for (key, secret) in [
        (WEBHOOK_KEY, API_SECRET),
        (API_KEY, WEBHOOK_SECRET),
        ("APIstranger", WEBHOOK_SECRET),
    ] {
        post_webhook(&api, &body, Some(&token(&body, key, secret)))
            .await
            .assert_error(401, "unauthorized");
    }
    for (key, secret) in [(WEBHOOK_KEY, WEBHOOK_SECRET), (API_KEY, API_SECRET)] {
        post_webhook(&api, &body, Some(&token(&body, key, secret)))
            .await
            .assert_status(200);
    }
}

#[tokio::test]
async fn without_a_webhook_key_its_tokens_are_refused() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (_, room, _) = start_live(&api, 30).await;
    let body = participant_event("participant_joined", &room, None, "EV_viewer").to_string();
    post_webhook(
        &api,
        &body,
        Some(&token(&body, WEBHOOK_KEY, WEBHOOK_SECRET)),
    )
    .await
    .assert_error(401, "unauthorized");
}

#[test]
fn a_webhook_key_without_its_secret_is_a_configuration_error() {
    let vars = [
        ("LIVEKIT_URL", "http://127.0.0.1:7880"),
        ("LIVEKIT_API_KEY", API_KEY),
        ("LIVEKIT_API_SECRET", API_SECRET),
        ("LIVEKIT_WEBHOOK_API_KEY", WEBHOOK_KEY),
    ];
    let err = Config::from_lookup(StoreKind::Embedded, |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    })
    .unwrap_err();
    assert_eq!(err.variable, "LIVEKIT_WEBHOOK_API_SECRET");
}

#[tokio::test]
async fn an_event_that_cannot_be_checked_for_a_lack_of_its_secret_is_503() {
    for lost in ["api", "webhook"] {
        let vars = [
            ("LIVEKIT_URL", "http://127.0.0.1:9"),
            ("LIVEKIT_API_KEY", API_KEY),
            ("LIVEKIT_API_SECRET", API_SECRET),
            ("LIVEKIT_WEBHOOK_API_KEY", WEBHOOK_KEY),
            ("LIVEKIT_WEBHOOK_API_SECRET", WEBHOOK_SECRET),
        ];
        let mut config = Config::from_lookup(StoreKind::Embedded, |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
        .unwrap();
        // The secret's read gave up: its arrival dropped, as a failed read from SSM drops it.
        let (arrival, never) = ApiSecret::pending();
        drop(arrival);
        let livekit = config.livekit.as_mut().unwrap();
        match lost {
            "api" => livekit.api_secret = never,
            _ => livekit.webhook_key.as_mut().unwrap().api_secret = never,
        }
        let rooms = hosting_livekit::rooms_from_config(&config);
        let (parts, _) = crate::common::backend::parts().await;
        let runtime = Runtime::assemble(config, Arc::new(SystemClock), rooms, parts);
        let body = participant_event("participant_joined", "stream-x", None, "EV_x").to_string();
        let request = Request::builder()
            .method("POST")
            .uri("/livekit/webhook")
            .header("authorization", token(&body, API_KEY, API_SECRET))
            .body(Body::from(body))
            .unwrap();
        let response = local_api::service(runtime.app.clone())
            .oneshot(request)
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 503, "{lost}");
        let bytes = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"]["code"], "db_error", "{lost}: {body}");
    }
}
