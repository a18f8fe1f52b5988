//! The two signature schemes every delivery carries.
//!
//! - `X-Service-Signature: t=<unix seconds>,v1=<hex>`: lowercase hex HMAC-SHA256 of
//!   `"<t>.<body>"`, keyed with the whole secret string (prefix included). Stripe's libraries
//!   verify it.
//! - Standard Webhooks: `webhook-signature: v1,<base64>` of HMAC-SHA256 over
//!   `"<id>.<t>.<body>"`, keyed with the base64-decoded part of the secret after `whsec_`.
//!
//! While a rotated-out secret still signs (docs/webhooks.md, "Rotate the secret"), each header
//! carries one signature per secret, the current one first: `t=..,v1=<new>,v1=<old>` and
//! `v1,<new> v1,<old>`, which both schemes' libraries accept with either secret.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

const SECRET_PREFIX: &str = "whsec_";

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC accepts keys of any length.
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// Value of `X-Service-Signature`, one `v1=` per secret.
pub fn service_signature(secrets: &[&str], timestamp: i64, body: &str) -> String {
    let t = timestamp.to_string();
    let mut value = format!("t={t}");
    for secret in secrets {
        let digest = hmac(secret.as_bytes(), &[t.as_bytes(), b".", body.as_bytes()]);
        value.push_str(",v1=");
        value.push_str(&hex::encode(digest));
    }
    value
}

/// Value of `webhook-signature`, one `v1,` per secret that is `whsec_` + base64; `None` when
/// none is.
pub fn standard_signature(
    secrets: &[&str],
    event_id: &str,
    timestamp: i64,
    body: &str,
) -> Option<String> {
    let t = timestamp.to_string();
    let signatures: Vec<String> = secrets
        .iter()
        .filter_map(|secret| STANDARD.decode(secret.strip_prefix(SECRET_PREFIX)?).ok())
        .map(|key| {
            let digest = hmac(
                &key,
                &[
                    event_id.as_bytes(),
                    b".",
                    t.as_bytes(),
                    b".",
                    body.as_bytes(),
                ],
            );
            format!("v1,{}", STANDARD.encode(digest))
        })
        .collect();
    (!signatures.is_empty()).then(|| signatures.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_signature_matches_a_known_vector() {
        // HMAC-SHA256(key="whsec_test", "1700000000.{}"), computed outside this code:
        // `printf '1700000000.{}' | openssl dgst -sha256 -hmac whsec_test`, and Python's
        // `hmac.new(b"whsec_test", b"1700000000.{}", hashlib.sha256).hexdigest()`.
        let sig = service_signature(&["whsec_test"], 1_700_000_000, "{}");
        assert_eq!(
            sig,
            "t=1700000000,v1=35495024f4ef3f94e5a93e22221544c4b75e9a42300cd965ab81cb85cd994e91"
        );
    }

    #[test]
    fn standard_signature_uses_the_decoded_key() {
        // The Standard Webhooks specification's example.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = r#"{"test": 2432232314}"#;
        let sig = standard_signature(
            &[secret],
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            body,
        );
        assert_eq!(
            sig.as_deref(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
        assert_eq!(standard_signature(&["nope"], "id", 1, body), None);
    }

    #[test]
    fn during_an_overlap_each_secret_signs_the_current_one_first() {
        let (new, old) = (
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_!not-base64!",
        );
        let both = service_signature(&[new, old], 7, "{}");
        let first = service_signature(&[new], 7, "{}");
        let second = service_signature(&[old], 7, "{}");
        assert_eq!(both, format!("{first},{}", &second["t=7,".len()..]));
        // The old secret here is not base64: only the new one signs in that scheme.
        let standard = standard_signature(&[new, old], "id", 7, "{}").unwrap();
        assert_eq!(standard, standard_signature(&[new], "id", 7, "{}").unwrap());
        let two = standard_signature(&[new, new], "id", 7, "{}").unwrap();
        assert_eq!(two, format!("{standard} {standard}"));
    }
}
