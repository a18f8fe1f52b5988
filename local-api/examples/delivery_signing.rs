//! What the Ed25519 `v1a` signature costs a delivery (BENCHMARKS.md, "Webhook signatures"):
//!
//! 1. CPU per signature on one thread, for a stream event's body: the HMAC `v1` of Standard
//!    Webhooks, and the Ed25519 `v1a`.
//! 2. The local delivery worker's throughput: the embedded store and queue with the worker
//!    running, `DELIVERIES` deliveries queued at once across 10 brands (3 slots each) to a
//!    receiver on loopback that answers `204` at once; rounds alternate between webhooks with a
//!    key pair (`v1` and `v1a` signed) and the same webhooks without one (`v1` only, as a
//!    webhook registered before key pairs had). After a round of each to warm up, the median
//!    of `ROUNDS` rounds of each, in pairs of alternating order.
//!
//!    With `RECEIVER_MS`, the receiver answers after that many milliseconds, as one across a
//!    network does.
//!
//!   cargo run --release -p local-api --example delivery_signing [DELIVERIES] [ROUNDS] [RECEIVER_MS]

#[path = "common/delivery_rate.rs"]
mod delivery_rate;

use std::time::{Duration, Instant};

use delivery_rate::{BRANDS, counting_receiver, delivery_round, embedded_runtime, median, webhook};
use hosting_app::delivery::signing;
use hosting_app::delivery::signing::generate_signing_key;
use hosting_domain::Webhook;
use hosting_domain::sealed::StoredSecret;
use hosting_domain::webhook::generate_secret;

/// A `stream.started` body of the usual size (about 1.2 KB).
fn body() -> String {
    let stream = serde_json::json!({
        "stream_id": "0f8e2a51-7c3b-4d6e-9a10-2b3c4d5e6f70", "status": "live", "platform": "tiktok",
        "vertical": "live-commerce", "creator_id": "avt_ava000000001", "product_name": "Glow Serum",
        "source": "api", "room_name": "stream-0f8e2a51", "viewer_count": 0, "test": false,
        "created_at": "2026-03-14T18:00:00.000Z", "started_at": "2026-03-14T18:01:00.000Z",
        "ended_at": null, "duration_minutes": 30, "destinations": [], "recording": null,
        "events": [], "viewer_url": "https://watch.example.com/0f8e2a51-7c3b-4d6e-9a10-2b3c4d5e6f70",
    });
    serde_json::json!({"id": format!("evt_{:032x}", 7), "type": "stream.started",
        "created_at": "2026-03-14T18:01:00.000Z", "api_version": "v1", "test": false,
        "data": {"stream": stream}})
    .to_string()
}

fn per_signature(n: u32, sign: impl Fn() -> Option<String>) -> Duration {
    let started = Instant::now();
    for _ in 0..n {
        std::hint::black_box(sign());
    }
    started.elapsed() / n
}

fn main() {
    let (deliveries, rounds, receiver_ms) = delivery_rate::arguments();

    let body = body();
    let secret = generate_secret();
    let key = generate_signing_key();
    let n = 20_000;
    let hmac = per_signature(n, || {
        signing::standard_signature(&[&secret], "evt_1", 1_700_000_000, &body)
    });
    let ed25519 = per_signature(n, || {
        signing::asymmetric_signature(&[&key], "evt_1", 1_700_000_000, &body)
    });
    println!(
        "per signature of a {} byte body, one thread: HMAC-SHA256 v1 {:.2} us, Ed25519 v1a {:.2} us",
        body.len(),
        hmac.as_secs_f64() * 1e6,
        ed25519.as_secs_f64() * 1e6
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(throughput(&body, deliveries, rounds, receiver_ms));
}

async fn throughput(body: &str, deliveries: usize, rounds: usize, receiver_ms: u64) {
    let (url, received) = counting_receiver(receiver_ms).await;
    let runtime = embedded_runtime();
    let store = runtime.app.store.clone();
    let mut webhooks = Vec::new();
    for brand in 0..BRANDS {
        let webhook = webhook(brand, &url, StoredSecret::Plain(generate_secret()));
        store.create_webhook(&webhook, 25, None).await.unwrap();
        webhooks.push(webhook);
    }

    let mut with_key = Vec::new();
    let mut without_key = Vec::new();
    // One round of each to warm up, then pairs in alternating order (signed first, then
    // unsigned first), so neither always runs on a warmer process.
    for round in 0..(rounds + 1) * 2 {
        let signed = (round % 2 == 0) == (round / 2 % 2 == 0);
        // The same webhooks, stored again with a key pair or without one.
        for webhook in &mut webhooks {
            webhook.signing_key = signed.then(|| StoredSecret::Plain(generate_signing_key()));
            store
                .delete_webhook(&webhook.brand_id, webhook.id)
                .await
                .unwrap();
            store.create_webhook(webhook, 25, None).await.unwrap();
        }
        let targets: Vec<&Webhook> = webhooks.iter().collect();
        let rate = delivery_round(&runtime, &targets, deliveries, body, &received).await;
        if round < 2 {
            continue;
        }
        if signed {
            with_key.push(rate);
        } else {
            without_key.push(rate);
        }
    }
    let (with_key, without_key) = (median(with_key), median(without_key));
    println!(
        "local worker, receiver answering in {receiver_ms} ms, {deliveries} deliveries per round, median of {rounds}: {:.0}/s with v1a, {:.0}/s without (ratio {:.3})",
        with_key,
        without_key,
        with_key / without_key
    );
}
