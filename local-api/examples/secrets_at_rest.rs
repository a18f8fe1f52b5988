//! What sealing stored secrets costs a delivery (BENCHMARKS.md, "Secrets at rest"):
//!
//! 1. Calls to the stack's key (KMS on AWS) per 1,000 deliveries in the steady state: the
//!    webhooks' secrets are sealed by another instance (another data key, as a registration in
//!    another function's instance makes them), so the delivering instance must unwrap that data
//!    key once; the count is of every call the envelope code makes to its vault, whichever the
//!    vault is.
//! 2. The local delivery worker's throughput with the webhooks' secrets and keys sealed
//!    against the same webhooks stored plain (as before sealing: nothing to open): the
//!    embedded store and queue, `DELIVERIES` deliveries queued at once across 10 brands to a
//!    receiver on loopback; after a round of each to warm up, the median of `ROUNDS` rounds of
//!    each, in pairs of alternating order. With `RECEIVER_MS`, the receiver answers after that
//!    many milliseconds.
//!
//!   cargo run --release -p local-api --example secrets_at_rest [DELIVERIES] [ROUNDS] [RECEIVER_MS]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use hosting_app::delivery::Deliverer;
use hosting_app::delivery::signing::generate_signing_key;
use hosting_app::secrets::Secrets;
use hosting_domain::Webhook;
use hosting_domain::clock::{Clock, SystemClock};
use hosting_domain::event::EventType;
use hosting_domain::ports::Delivery;
use hosting_domain::sealed::{SecretScope, StoredSecret};
use hosting_domain::webhook::generate_secret;
use hosting_runtime::Runtime;
use hosting_support::config::{Config, StoreKind};

const BRANDS: usize = 10;

fn main() {
    let mut args = std::env::args().skip(1);
    let deliveries: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(5_000);
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10);
    let receiver_ms: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(measure(deliveries, rounds, receiver_ms));
}

/// The webhook's secret and key, sealed by `sealer` or stored plain.
async fn stored(webhook: &mut Webhook, secret: &str, key: &str, sealer: Option<&Secrets>) {
    let id = webhook.id;
    match sealer {
        Some(sealer) => {
            webhook.secret = sealer
                .seal(&SecretScope::WebhookSecret(&id), secret)
                .await
                .unwrap();
            webhook.signing_key = Some(
                sealer
                    .seal(&SecretScope::WebhookSigningKey(&id), key)
                    .await
                    .unwrap(),
            );
        }
        None => {
            webhook.secret = StoredSecret::Plain(secret.to_owned());
            webhook.signing_key = Some(StoredSecret::Plain(key.to_owned()));
        }
    }
}

async fn measure(deliveries: usize, rounds: usize, receiver_ms: u64) {
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let receiver = Router::new().fallback(move || {
        let counter = counter.clone();
        async move {
            if receiver_ms > 0 {
                tokio::time::sleep(Duration::from_millis(receiver_ms)).await;
            }
            counter.fetch_add(1, Ordering::Relaxed);
            axum::http::StatusCode::NO_CONTENT
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, receiver).await.unwrap() });

    let config = Config::from_lookup(StoreKind::Embedded, |name| {
        (name == "WEBHOOK_ALLOW_PRIVATE_URLS").then(|| "true".to_owned())
    })
    .unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let runtime = Runtime::embedded(config.clone(), clock.clone(), None);
    let app = runtime.app.clone();
    // Another instance's envelopes: the same vault, its own data key.
    let registering = Secrets::new(app.vault.clone());
    let store = app.store.clone();
    let mut webhooks = Vec::new();
    for brand in 0..BRANDS {
        let webhook = Webhook {
            id: uuid::Uuid::new_v4(),
            brand_id: format!("brand_{brand}"),
            url: url.clone(),
            events: vec![EventType::StreamStarted],
            secret: StoredSecret::Plain(String::new()),
            active: true,
            created_at: clock.now(),
            previous_secret: None,
            previous_secret_expires_at: None,
            secret_rotated_at: None,
            signing_key: None,
            previous_signing_key: None,
            public_key: None,
            failing_since: None,
            disabled_reason: None,
        };
        webhooks.push((webhook, generate_secret(), generate_signing_key()));
    }
    let _background = runtime.spawn_background(
        Deliverer::new(config.webhook_timeout, config.webhook_allow_private_urls).unwrap(),
    );

    let body =
        serde_json::json!({"type": "stream.started", "data": {"stream": {"status": "live"}}})
            .to_string();
    let (mut sealed_rates, mut plain_rates) = (Vec::new(), Vec::new());
    let (mut steady_calls, mut steady_deliveries) = (0, 0);
    for round in 0..(rounds + 1) * 2 {
        let sealed = (round % 2 == 0) == (round / 2 % 2 == 0);
        for (webhook, secret, key) in &mut webhooks {
            stored(webhook, secret, key, sealed.then_some(&registering)).await;
            store
                .delete_webhook(&webhook.brand_id, webhook.id)
                .await
                .unwrap();
            store.create_webhook(webhook, 25, None).await.unwrap();
        }
        // Each sealed round's envelopes are new to the delivering instance, as a fresh
        // registration's would be: its calls are counted from the start of the round.
        app.secrets().forget_cached_keys();
        let (before, calls_before) = (
            received.load(Ordering::Relaxed),
            app.secrets().vault_calls(),
        );
        let batch: Vec<Delivery> = (0..deliveries)
            .map(|n| {
                let (webhook, _, _) = &webhooks[n % BRANDS];
                Delivery {
                    event_id: format!("evt_{n:032x}"),
                    event_type: EventType::StreamStarted,
                    brand_id: webhook.brand_id.clone(),
                    webhook_id: webhook.id,
                    attempt: 1,
                    body: body.clone(),
                }
            })
            .collect();
        let started = Instant::now();
        app.queue.enqueue_now(batch).await.unwrap();
        while received.load(Ordering::Relaxed) < before + deliveries {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let rate = deliveries as f64 / started.elapsed().as_secs_f64();
        let calls = app.secrets().vault_calls() - calls_before;
        if round < 2 {
            continue;
        }
        if sealed {
            sealed_rates.push(rate);
            steady_calls += calls;
            steady_deliveries += deliveries as u64;
        } else {
            assert_eq!(calls, 0, "a plain secret costs no call");
            plain_rates.push(rate);
        }
    }
    let median = |rates: &mut Vec<f64>| {
        rates.sort_by(f64::total_cmp);
        rates[rates.len() / 2]
    };
    let (sealed, plain) = (median(&mut sealed_rates), median(&mut plain_rates));
    println!(
        "calls to the stack's key: {steady_calls} in {steady_deliveries} deliveries ({:.3} per 1,000), each sealed round starting cold",
        steady_calls as f64 * 1000.0 / steady_deliveries as f64
    );
    println!(
        "local worker, receiver answering in {receiver_ms} ms, {deliveries} deliveries per round, median of {rounds}: {sealed:.0}/s sealed, {plain:.0}/s plain (ratio {:.3})",
        sealed / plain
    );
}
