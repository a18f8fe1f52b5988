//! SSRF refusal at delivery time: names resolving to private addresses, and literals stored before the rules.

use std::net::IpAddr;
use std::sync::Arc;

use serde_json::json;

use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

/// Resolves every name to one address, as a rebinding attacker's DNS would.
struct FixedDns(IpAddr);

#[async_trait::async_trait]
impl hosting_app::delivery::Dns for FixedDns {
    async fn lookup(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok(vec![self.0])
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_name_resolving_to_loopback_is_refused_at_delivery() {
    let dns: Arc<dyn hosting_app::delivery::Dns> = Arc::new(FixedDns("127.0.0.1".parse().unwrap()));
    let api = TestApp::builder()
        .with_delivery_dns(dns)
        .with_webhook_retry_delays_secs(&[0.05])
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    // Passes registration: https on a public-looking name.
    register_webhook(
        &api,
        &Keys::test_a(),
        &format!("https://hooks.example.com:{}/hook", receiver.port()),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;
    api.wait_for_dead_letters(WAIT).await;
    assert!(receiver.hits().is_empty(), "no connection was made");
    let error = &api.dead_letters().await[0].last_error;
    assert_eq!(error, "refused address");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_private_urls_allowed_the_same_name_is_delivered() {
    let dns: Arc<dyn hosting_app::delivery::Dns> = Arc::new(FixedDns("127.0.0.1".parse().unwrap()));
    let api = TestApp::builder()
        .with_delivery_dns(dns)
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    register_webhook(
        &api,
        &Keys::test_a(),
        &format!("http://hooks.example.com:{}/hook", receiver.port()),
        json!(["stream.started"]),
    )
    .await;
    api.start_test_stream(&Keys::test_a()).await;
    receiver.wait_for(1, WAIT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_literal_stored_before_the_rules_is_refused_at_delivery() {
    let api = TestApp::builder()
        .with_delivery()
        .with_webhook_retry_delays_secs(&[0.05])
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let webhook = hosting_domain::Webhook {
        id: uuid::Uuid::new_v4(),
        brand_id: "brand_a".into(),
        url: format!("https://127.0.0.1:{}/hook", receiver.port()),
        events: vec![hosting_domain::EventType::StreamStarted],
        secret: hosting_domain::sealed::StoredSecret::Plain(
            hosting_domain::webhook::generate_secret(),
        ),
        active: true,
        created_at: api.now(),
        previous_secret: None,
        previous_secret_expires_at: None,
        secret_rotated_at: None,
        signing_key: None,
        previous_signing_key: None,
        public_key: None,
        failing_since: None,
        disabled_reason: None,
    };
    api.runtime
        .app
        .store
        .create_webhook(&webhook, 25, None)
        .await
        .unwrap();
    api.start_test_stream(&Keys::test_a()).await;
    api.wait_for_dead_letters(WAIT).await;
    assert!(receiver.hits().is_empty());
}
