//! Standard Webhooks' asymmetric signatures (docs/webhooks.md, "Verify with the public key"):
//! every delivery's `v1a` verified by Python's `cryptography`, an Ed25519 implementation apart
//! from the product's, against the published `public_key`, before, during and after a
//! rotation's overlap; forged ones refused; the private key never shown.

use std::time::Duration;

use serde_json::{Value, json};

use super::{next_delivery, register, rotate};
use crate::common::receiver::{Behaviour, Hit, Receiver, run_public_key_verifier};
use crate::common::*;

fn public_key_of(body: &Value) -> String {
    let key = body["public_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("whpk_") && key.len() == 49, "{key}");
    key
}

async fn registered_public_key(api: &TestApp, id: &str) -> String {
    let r = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    r.assert_status(200);
    public_key_of(&r.body)
}

fn v1a_count(hit: &Hit) -> usize {
    hit.header("webhook-signature")
        .split(' ')
        .filter(|part| part.starts_with("v1a,"))
        .count()
}

fn verifies(public_key: &str, hit: &Hit) -> bool {
    run_public_key_verifier(public_key, hit).0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the cryptography verifier (WEBHOOK_VERIFIER_PYTHON): scripts/test.sh runs it"]
async fn v1a_verifies_with_the_public_key_before_during_and_after_a_rotation() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": receiver.url(), "events": ["stream.started"]}),
        )
        .await;
    r.assert_status(201);
    let first = public_key_of(&r.body);
    let id = r.body["webhook_id"].as_str().unwrap().to_owned();
    assert_eq!(registered_public_key(&api, &id).await, first);

    // Before: one key pair signs.
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(v1a_count(&hit), 1);
    let (ok, output) = run_public_key_verifier(&first, &hit);
    assert!(ok, "{output}");

    // During the overlap: the new key pair first, the replaced one beside it (long enough for
    // the delivery to land inside it on a loaded machine).
    let r = rotate(&api, &id, Some(r#"{"expire_previous_in_seconds": 8}"#)).await;
    r.assert_status(200);
    let second = public_key_of(&r.body);
    assert_ne!(second, first);
    assert_eq!(registered_public_key(&api, &id).await, second);
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(v1a_count(&hit), 2);
    assert!(verifies(&first, &hit) && verifies(&second, &hit));

    // After it (with delivery the app is on the system clock): the new key pair alone.
    tokio::time::sleep(Duration::from_millis(8100)).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(v1a_count(&hit), 1);
    assert!(verifies(&second, &hit));
    let (ok, output) = run_public_key_verifier(&first, &hit);
    assert!(!ok && !output.contains("v1a: ok"), "{output}");

    // Two rotations in an overlap: the newest two sign, never the oldest.
    let third = public_key_of(&rotate(&api, &id, None).await.body);
    let fourth = public_key_of(&rotate(&api, &id, None).await.body);
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(v1a_count(&hit), 2);
    assert!(verifies(&fourth, &hit) && verifies(&third, &hit));
    assert!(!verifies(&second, &hit));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the cryptography verifier (WEBHOOK_VERIFIER_PYTHON): scripts/test.sh runs it"]
async fn a_forged_or_altered_v1a_is_refused() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, _) = register(&api, &Keys::test_a(), &receiver.url()).await;
    // Another webhook's key pair, of another brand.
    let (other, _) = register_webhook(
        &api,
        &Keys::test_b(),
        "https://hooks.example.com/b",
        json!(["stream.started"]),
    )
    .await;
    let other_key = {
        let r = api
            .get(&format!("/webhooks/{other}"), &Keys::test_b())
            .await;
        public_key_of(&r.body)
    };
    let own_key = registered_public_key(&api, &id).await;
    let hit = next_delivery(&api, &receiver).await;
    assert!(verifies(&own_key, &hit));
    assert!(!verifies(&other_key, &hit), "another key pair's");

    let altered = |change: &dyn Fn(&mut Hit)| {
        let mut forged = hit.clone();
        change(&mut forged);
        forged
    };
    let body = altered(&|h| h.body = h.body.replacen("\"test\":true", "\"test\":false", 1));
    assert_ne!(body.body, hit.body);
    let timestamp = altered(&|h| {
        let t: i64 = h.header("webhook-timestamp").parse().unwrap();
        h.headers
            .insert("webhook-timestamp", (t + 1).to_string().parse().unwrap());
    });
    let id_changed = altered(&|h| {
        h.headers.insert("webhook-id", "evt_0".parse().unwrap());
    });
    // A signature of the right length by no key of the webhook.
    let forged = altered(&|h| {
        let forged = format!("v1a,{}", "A".repeat(86) + "==");
        h.headers
            .insert("webhook-signature", forged.parse().unwrap());
    });
    for (name, forged) in [
        ("body", body),
        ("timestamp", timestamp),
        ("id", id_changed),
        ("signature", forged),
    ] {
        let (ok, output) = run_public_key_verifier(&own_key, &forged);
        assert!(!ok, "{name}: {output}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_private_key_is_in_no_answer_event_or_log() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, _) = register(&api, &Keys::test_a(), &receiver.url()).await;
    let hit = next_delivery(&api, &receiver).await;
    let rotated = rotate(&api, &id, None).await;
    let answers = [
        rotated.body.to_string(),
        api.get(&format!("/webhooks/{id}"), &Keys::test_a())
            .await
            .body
            .to_string(),
        api.get("/webhooks", &Keys::test_a()).await.body.to_string(),
        api.get(&format!("/webhooks/{id}/deliveries"), &Keys::test_a())
            .await
            .body
            .to_string(),
        hit.body.clone(),
        format!("{:?}", hit.headers),
    ];
    for answer in answers {
        assert!(!answer.contains("whsk_"), "{answer}");
        assert!(!answer.contains("signing_key"), "{answer}");
    }
}
