//! What the delivery-rate examples share (`delivery_signing`, `secrets_at_rest`): a receiver on
//! loopback that counts what it is sent, the embedded runtime with its delivery worker, the
//! brands' webhooks, and one measured round of deliveries.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use hosting_app::delivery::Deliverer;
use hosting_domain::Webhook;
use hosting_domain::clock::{Clock, SystemClock};
use hosting_domain::event::EventType;
use hosting_domain::ports::Delivery;
use hosting_domain::sealed::StoredSecret;
use hosting_runtime::Runtime;
use hosting_support::config::{Config, StoreKind};

/// Brands the deliveries are spread over, a webhook each.
pub const BRANDS: usize = 10;

/// `DELIVERIES`, `ROUNDS` and `RECEIVER_MS` from the command line (5,000, 10 and 0).
pub fn arguments() -> (usize, usize, u64) {
    let mut args = std::env::args().skip(1);
    let deliveries = args.next().and_then(|n| n.parse().ok()).unwrap_or(5_000);
    let rounds = args.next().and_then(|n| n.parse().ok()).unwrap_or(10);
    let receiver_ms = args.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    (deliveries, rounds, receiver_ms)
}

/// A receiver on loopback answering `204` after `receiver_ms`: its URL and its count.
pub async fn counting_receiver(receiver_ms: u64) -> (String, Arc<AtomicUsize>) {
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
    (url, received)
}

/// The embedded runtime, private URLs allowed, with its delivery worker running.
pub fn embedded_runtime() -> Runtime {
    let config = Config::from_lookup(StoreKind::Embedded, |name| {
        (name == "WEBHOOK_ALLOW_PRIVATE_URLS").then(|| "true".to_owned())
    })
    .unwrap();
    let runtime = Runtime::embedded(config.clone(), Arc::new(SystemClock), None);
    // Its tasks run on, detached.
    drop(runtime.spawn_background(
        Deliverer::new(config.webhook_timeout, config.webhook_allow_private_urls).unwrap(),
    ));
    runtime
}

/// Brand `brand`'s webhook for `stream.started` at `url`, with `secret` and no key pair.
pub fn webhook(brand: usize, url: &str, secret: StoredSecret) -> Webhook {
    Webhook {
        id: uuid::Uuid::new_v4(),
        brand_id: format!("brand_{brand}"),
        url: url.to_owned(),
        events: vec![EventType::StreamStarted],
        secret,
        active: true,
        created_at: SystemClock.now(),
        previous_secret: None,
        previous_secret_expires_at: None,
        secret_rotated_at: None,
        signing_key: None,
        previous_signing_key: None,
        public_key: None,
        failing_since: None,
        disabled_reason: None,
    }
}

/// Queues `deliveries` of `body` over `webhooks` at once and waits until `received` has
/// counted them all: deliveries a second.
pub async fn delivery_round(
    runtime: &Runtime,
    webhooks: &[&Webhook],
    deliveries: usize,
    body: &str,
    received: &AtomicUsize,
) -> f64 {
    let before = received.load(Ordering::Relaxed);
    let batch: Vec<Delivery> = (0..deliveries)
        .map(|n| {
            let webhook = webhooks[n % webhooks.len()];
            Delivery {
                event_id: format!("evt_{n:032x}"),
                event_type: EventType::StreamStarted,
                brand_id: webhook.brand_id.clone(),
                webhook_id: webhook.id,
                attempt: 1,
                body: body.to_owned(),
            }
        })
        .collect();
    let started = Instant::now();
    runtime.app.queue.enqueue_now(batch).await.unwrap();
    while received.load(Ordering::Relaxed) < before + deliveries {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    deliveries as f64 / started.elapsed().as_secs_f64()
}

/// The median of `rates`.
pub fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}
