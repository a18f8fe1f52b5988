//! `POST /webhooks/{id}/rotate-secret`: both secrets sign during the overlap, in both schemes.

use std::time::Duration;

use serde_json::{Value, json};

use super::{next_delivery, patch, register, rotate, rotated, signers, time};
use crate::common::receiver::{Behaviour, Receiver, run_verifier};
use crate::common::*;

#[tokio::test]
async fn rotate_secret_checks_its_optional_body() {
    let api = TestApp::new().await;
    let (id, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    for body in [
        r#"{"expire_previous_in_seconds": -1}"#,
        r#"{"expire_previous_in_seconds": 86401}"#,
        r#"{"expire_previous_in_seconds": 1.5}"#,
        r#"{"expire_previous_in_seconds": "60"}"#,
        r#"{"expire_previous_in_seconds": null}"#,
        "[60]",
        "60",
        "not json",
    ] {
        rotate(&api, &id, Some(body))
            .await
            .assert_error(400, "invalid_fields");
    }
    let r = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert_eq!(r.body["secret_rotated_at"], Value::Null, "nothing rotated");
    // No body, an empty object and unknown fields: the default, a day.
    for body in [None, Some("{}"), Some(r#"{"colour": 1}"#)] {
        let before = api.now();
        let r = rotate(&api, &id, body).await;
        r.assert_status(200);
        let expires = time(&r.body["previous_secret_expires_at"]);
        let overlap = (expires - before).num_seconds();
        assert!((86_399..=86_401).contains(&overlap), "{overlap}");
    }
    for (seconds, expected) in [(0, 0), (86_400, 86_400), (90, 90)] {
        let before = api.now();
        let r = rotate(
            &api,
            &id,
            Some(&json!({"expire_previous_in_seconds": seconds}).to_string()),
        )
        .await;
        r.assert_status(200);
        let overlap = (time(&r.body["previous_secret_expires_at"]) - before).num_seconds();
        assert!(
            (expected - 1..=expected + 1).contains(&overlap),
            "{seconds}: {overlap}"
        );
    }
}

#[tokio::test]
async fn a_new_secret_is_shown_once_and_never_again() {
    let api = TestApp::new().await;
    let (id, first) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    let r = rotate(&api, &id, None).await;
    r.assert_status(200);
    let secret = r.body["secret"].as_str().unwrap().to_owned();
    assert_eq!(r.body["webhook_id"], id.as_str());
    assert!(secret.starts_with("whsec_") && secret.len() == 38 && secret != first);
    assert_eq!(r.body.as_object().unwrap().len(), 4);
    let got = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert!(got.body["secret_rotated_at"].is_string());
    // A new key pair, which the detail shows from now on.
    assert_eq!(got.body["public_key"], r.body["public_key"]);
    for answer in [
        got.body.to_string(),
        api.get("/webhooks", &Keys::test_a()).await.body.to_string(),
        patch(&api, &id, r#"{"active": true}"#)
            .await
            .body
            .to_string(),
    ] {
        assert!(!answer.contains(&secret) && !answer.contains(&first));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_an_overlap_both_secrets_sign_and_never_more_than_two() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, s1) = register(&api, &Keys::test_a(), &receiver.url()).await;
    assert_eq!(
        signers(&next_delivery(&api, &receiver).await, &[&s1]),
        [s1.as_str()]
    );

    let s2 = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2]), [s2.as_str(), s1.as_str()]);

    // A rotation during the overlap drops the oldest.
    let s3 = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2, &s3]), [s3.as_str(), s2.as_str()]);

    // No overlap: the new secret alone, at once.
    let s4 = rotated(&api, &id, Some(json!({"expire_previous_in_seconds": 0}))).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2, &s3, &s4]), [s4.as_str()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overlap_ends_when_it_says() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, s1) = register(&api, &Keys::test_a(), &receiver.url()).await;
    let r = rotate(
        &api,
        &id,
        Some(&json!({"expire_previous_in_seconds": 20}).to_string()),
    )
    .await;
    r.assert_status(200);
    let s2 = r.body["secret"].as_str().unwrap().to_owned();
    let expires = time(&r.body["previous_secret_expires_at"]);
    // The first delivery is signed with both while the overlap lasts, with the new one alone
    // once it has ended: judged by when it was signed, so a loaded machine that delivers it
    // late cannot fail the rule.
    let hit = next_delivery(&api, &receiver).await;
    let signed_at: i64 = hit.header("webhook-timestamp").parse().unwrap();
    let signed = signers(&hit, &[&s1, &s2]);
    match signed_at.cmp(&expires.timestamp()) {
        std::cmp::Ordering::Less => assert_eq!(signed, [s2.as_str(), s1.as_str()]),
        std::cmp::Ordering::Greater => assert_eq!(signed, [s2.as_str()]),
        // Signed in the second the overlap ended (the header counts whole seconds): either.
        std::cmp::Ordering::Equal => assert_eq!(signed[0], s2.as_str()),
    }
    let left = (expires - chrono::Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(left + Duration::from_millis(1100)).await;
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&s1, &s2]), [s2.as_str()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the stripe and standardwebhooks verifiers (WEBHOOK_VERIFIER_PYTHON): scripts/test.sh runs it"]
async fn the_published_libraries_verify_with_either_secret_during_the_overlap() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, s1) = register(&api, &Keys::test_a(), &receiver.url()).await;
    let s2 = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    for secret in [&s1, &s2] {
        let (ok, output) = run_verifier(secret, &hit);
        assert!(ok, "{output}");
    }
    // A second rotation: the newest and the one it replaced, not the oldest.
    let s3 = rotated(&api, &id, None).await;
    let hit = next_delivery(&api, &receiver).await;
    assert!(run_verifier(&s3, &hit).0 && run_verifier(&s2, &hit).0);
    let (ok, output) = run_verifier(&s1, &hit);
    assert!(!ok && !output.contains("stripe: ok") && !output.contains("standardwebhooks: ok"));
    // expire_previous_in_seconds 0: only the new one.
    let s4 = rotated(&api, &id, Some(json!({"expire_previous_in_seconds": 0}))).await;
    let hit = next_delivery(&api, &receiver).await;
    assert!(run_verifier(&s4, &hit).0);
    assert!(!run_verifier(&s3, &hit).0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_rotations_each_replace_a_different_secret() {
    let api = std::sync::Arc::new(
        TestApp::builder()
            .with_delivery()
            .with_private_webhook_urls()
            .await,
    );
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (id, s1) = register(&api, &Keys::test_a(), &receiver.url()).await;
    let handles: Vec<_> = (0..5)
        .map(|_| {
            let (api, id) = (api.clone(), id.clone());
            tokio::spawn(async move { rotated(&api, &id, None).await })
        })
        .collect();
    let mut secrets = Vec::new();
    for handle in handles {
        secrets.push(handle.await.unwrap());
    }
    let mut all: Vec<&str> = secrets.iter().map(String::as_str).collect();
    all.push(&s1);
    let hit = next_delivery(&api, &receiver).await;
    let signed = signers(&hit, &all);
    // One after another: the last replaced a secret another rotation made, never the first.
    assert_eq!(signed.len(), 2, "{signed:?}");
    assert!(secrets.iter().any(|s| s == signed[0]) && secrets.iter().any(|s| s == signed[1]));
}
