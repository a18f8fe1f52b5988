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

#[path = "common/delivery_rate.rs"]
mod delivery_rate;

use delivery_rate::{BRANDS, counting_receiver, delivery_round, embedded_runtime, median, webhook};
use hosting_app::delivery::signing::generate_signing_key;
use hosting_app::secrets::Secrets;
use hosting_domain::Webhook;
use hosting_domain::sealed::{SecretScope, StoredSecret};
use hosting_domain::webhook::generate_secret;

fn main() {
    let (deliveries, rounds, receiver_ms) = delivery_rate::arguments();
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
    let (url, received) = counting_receiver(receiver_ms).await;
    let runtime = embedded_runtime();
    let app = runtime.app.clone();
    // Another instance's envelopes: the same vault, its own data key.
    let registering = Secrets::new(app.vault.clone());
    let store = app.store.clone();
    let mut webhooks: Vec<_> = (0..BRANDS)
        .map(|brand| {
            let webhook = webhook(brand, &url, StoredSecret::Plain(String::new()));
            (webhook, generate_secret(), generate_signing_key())
        })
        .collect();

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
        let calls_before = app.secrets().vault_calls();
        let targets: Vec<&Webhook> = webhooks.iter().map(|(webhook, _, _)| webhook).collect();
        let rate = delivery_round(&runtime, &targets, deliveries, &body, &received).await;
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
    let (sealed, plain) = (median(sealed_rates), median(plain_rates));
    println!(
        "calls to the stack's key: {steady_calls} in {steady_deliveries} deliveries ({:.3} per 1,000), each sealed round starting cold",
        steady_calls as f64 * 1000.0 / steady_deliveries as f64
    );
    println!(
        "local worker, receiver answering in {receiver_ms} ms, {deliveries} deliveries per round, median of {rounds}: {sealed:.0}/s sealed, {plain:.0}/s plain (ratio {:.3})",
        sealed / plain
    );
}
