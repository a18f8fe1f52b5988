//! Signed, at-least-once webhook delivery to real receivers on loopback (ARCHITECTURE.md, "Webhook
//! deliveries"): fan-out, both signature schemes, retries, 410, redirects, timeouts, SSRF
//! refusal at delivery time, dead letters.

mod attempts;
mod failure_classes;
mod fair;
mod private_urls;
mod queue_refusals;
mod relay_budget;

use base64::Engine;

use crate::common::receiver::Hit;
use crate::common::*;

/// Checks both signatures of `hit` independently of the product's signing code.
fn assert_signed(hit: &Hit, secret: &str) {
    let header = hit.header("x-service-signature");
    let (t, v1) = header
        .strip_prefix("t=")
        .and_then(|rest| rest.split_once(",v1="))
        .unwrap_or_else(|| panic!("bad signature header {header}"));
    let t: i64 = t.parse().unwrap();
    assert!((hit.at.timestamp() - t).abs() <= 2, "t is the attempt time");
    assert_eq!(
        v1,
        hex::encode(hmac(secret.as_bytes(), &format!("{t}.{}", hit.body)))
    );

    assert_eq!(hit.header("webhook-timestamp"), t.to_string());
    let id = hit.header("webhook-id");
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let expected = base64::engine::general_purpose::STANDARD
        .encode(hmac(&key, &format!("{id}.{t}.{}", hit.body)));
    // The HMAC first, then one Ed25519 signature (verified against the public key by
    // `webhooks::public_key`).
    let header = hit.header("webhook-signature");
    let (standard, asymmetric) = header.split_once(' ').unwrap();
    assert_eq!(standard, format!("v1,{expected}"));
    let signature = asymmetric.strip_prefix("v1a,").unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(signature)
            .unwrap()
            .len(),
        64
    );
}
