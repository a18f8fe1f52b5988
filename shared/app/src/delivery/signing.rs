//! The two signature schemes every delivery carries.
//!
//! - `X-Service-Signature: t=<unix seconds>,v1=<hex>`: lowercase hex HMAC-SHA256 of
//!   `"<t>.<body>"`, keyed with the whole secret string (prefix included). Stripe's libraries
//!   verify it.
//! - Standard Webhooks: `webhook-signature: v1,<base64>` of HMAC-SHA256 over
//!   `"<id>.<t>.<body>"`, keyed with the base64-decoded part of the secret after `whsec_`.
//!
//! - Standard Webhooks' asymmetric scheme: `v1a,<base64>` of the Ed25519 signature of
//!   `"<id>.<t>.<body>"`, beside the `v1,` ones in `webhook-signature`, verified with the
//!   webhook's public key alone.
//!
//! While a rotated-out secret still signs (docs/webhooks.md, "Rotate the secret"), each header
//! carries one signature per secret, the current one first: `t=..,v1=<new>,v1=<old>` and
//! `v1,<new> v1,<old>`, which both schemes' libraries accept with either secret.

use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use hosting_domain::webhook::{SIGNING_KEY_PREFIX, signing_key_parts};
use sha2::Sha256;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

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

/// A new Ed25519 key pair, as stored: `whsk_` and the base64 of its seed and public key
/// ([`hosting_domain::webhook::SIGNING_KEY_PREFIX`]).
pub fn generate_signing_key() -> String {
    use rand::RngCore;
    let mut seed = [0u8; 32];
    rand::rng().fill_bytes(&mut seed);
    let pair = Ed25519KeyPair::from_seed_unchecked(&seed).expect("any 32 bytes are a seed");
    let mut stored = seed.to_vec();
    stored.extend_from_slice(pair.public_key().as_ref());
    format!("{SIGNING_KEY_PREFIX}{}", STANDARD.encode(stored))
}

/// The `v1a,` signatures of `webhook-signature`, one per private key (`whsk_`), space
/// separated; `None` when there is none.
pub fn asymmetric_signature(
    signing_keys: &[&str],
    event_id: &str,
    timestamp: i64,
    body: &str,
) -> Option<String> {
    let signed = format!("{event_id}.{timestamp}.{body}");
    let signatures: Vec<String> = signing_keys
        .iter()
        .filter_map(|key| key_pair(key))
        .map(|pair| format!("v1a,{}", STANDARD.encode(pair.sign(signed.as_bytes()))))
        .collect();
    (!signatures.is_empty()).then(|| signatures.join(" "))
}

/// Key pairs already read, by private key, at most [`KEY_PAIRS_KEPT`]: reading one checks
/// the stored public key against the seed, a scalar multiplication that costs as much as a
/// signature, and a worker signs for the same webhooks again and again (BENCHMARKS.md,
/// "Webhook signatures"). In this process's memory only, as the store's read of the key
/// already is.
fn key_pair(signing_key: &str) -> Option<Arc<Ed25519KeyPair>> {
    static KEPT: OnceLock<Mutex<HashMap<String, Arc<Ed25519KeyPair>>>> = OnceLock::new();
    let kept = KEPT.get_or_init(Mutex::default);
    if let Some(pair) = kept
        .lock()
        .ok()
        .and_then(|kept| kept.get(signing_key).cloned())
    {
        return Some(pair);
    }
    let (seed, public) = signing_key_parts(signing_key)?;
    let pair = Arc::new(Ed25519KeyPair::from_seed_and_public_key(&seed, &public).ok()?);
    if let Ok(mut kept) = kept.lock() {
        if kept.len() >= KEY_PAIRS_KEPT {
            kept.clear();
        }
        kept.insert(signing_key.to_owned(), pair.clone());
    }
    Some(pair)
}

/// Enough for every webhook a busy worker delivers to at once; a full set starts over.
const KEY_PAIRS_KEPT: usize = 1_024;

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
    fn asymmetric_signature_matches_rfc_8032() {
        use aws_lc_rs::signature::{ED25519, UnparsedPublicKey};
        // RFC 8032, section 7.1, TEST 2: the one-byte message 0x72 under this seed gives this
        // public key and this signature.
        let seed = hex::decode("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
            .unwrap();
        let public =
            hex::decode("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
                .unwrap();
        let expected = "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00";
        let key = format!("whsk_{}", STANDARD.encode([seed, public.clone()].concat()));
        assert_eq!(
            hosting_domain::webhook::public_key(&key).unwrap(),
            format!("whpk_{}", STANDARD.encode(&public))
        );
        let pair = key_pair(&key).unwrap();
        assert_eq!(hex::encode(pair.sign(&[0x72])), expected);
        // In a header: over "<id>.<t>.<body>", verified with the public key alone.
        let header = asymmetric_signature(&[&key], "evt_1", 7, "{}").unwrap();
        let signature = STANDARD
            .decode(header.strip_prefix("v1a,").unwrap())
            .unwrap();
        let verifier = UnparsedPublicKey::new(&ED25519, &public);
        verifier.verify(b"evt_1.7.{}", &signature).unwrap();
        assert!(verifier.verify(b"evt_1.8.{}", &signature).is_err());
        // A stored public key that is not the seed's signs nothing.
        let mismatched = format!("whsk_{}", STANDARD.encode([[1u8; 32], [2u8; 32]].concat()));
        assert_eq!(asymmetric_signature(&[&mismatched], "id", 1, "{}"), None);
        assert_eq!(asymmetric_signature(&["whsk_short"], "id", 1, "{}"), None);
    }

    #[test]
    fn a_generated_key_signs_and_shows_its_public_key() {
        use aws_lc_rs::signature::{ED25519, UnparsedPublicKey};
        let key = generate_signing_key();
        let public = hosting_domain::webhook::public_key(&key).unwrap();
        assert_eq!(public.len(), "whpk_".len() + 44);
        let header = asymmetric_signature(&[&key], "evt_1", 7, "{}").unwrap();
        let signature = STANDARD
            .decode(header.strip_prefix("v1a,").unwrap())
            .unwrap();
        UnparsedPublicKey::new(&ED25519, STANDARD.decode(&public[5..]).unwrap())
            .verify(b"evt_1.7.{}", &signature)
            .unwrap();
        assert_ne!(generate_signing_key(), key);
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
