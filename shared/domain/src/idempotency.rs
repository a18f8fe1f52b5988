//! Idempotency keys (docs/idempotency.md): a client that sends `Idempotency-Key` with a
//! create can retry it safely. A key is bound when its request created something, and a retry
//! with the same key and body gets the first answer again, byte for byte.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::account::KeyEnvironment;

pub const HEADER: &str = "idempotency-key";
/// Set on an answer that is the replay of an earlier one.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
pub const MAX_KEY_CHARS: usize = 255;
/// Keys are kept at least 24 hours after binding; this long in fact.
pub const RETENTION: chrono::Duration = chrono::Duration::hours(48);

/// The creates that take a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    StartStream,
    RegisterWebhook,
    ScheduleShow,
    CutClip,
}

impl Endpoint {
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::StartStream => "POST /streams",
            Endpoint::RegisterWebhook => "POST /webhooks",
            Endpoint::ScheduleShow => "POST /shows",
            Endpoint::CutClip => "POST /streams/{id}/clips",
        }
    }
}

/// 1 to 255 characters, each visible ASCII (`0x21` to `0x7E`).
pub fn is_valid_key(raw: &[u8]) -> bool {
    (1..=MAX_KEY_CHARS).contains(&raw.len()) && raw.iter().all(|b| (0x21..=0x7e).contains(b))
}

/// A key as the store knows it: one per (brand, key environment, endpoint, key string), as a
/// hash, so any key string makes a short, safe store key.
pub fn key_id(
    brand_id: &str,
    environment: KeyEnvironment,
    endpoint: Endpoint,
    key: &str,
) -> String {
    let environment = match environment {
        KeyEnvironment::Live => "live",
        KeyEnvironment::Test => "test",
    };
    let scoped = [brand_id, environment, endpoint.as_str(), key].join("\n");
    hex::encode(Sha256::digest(scoped.as_bytes()))
}

/// What identifies a request body: its JSON with object keys sorted and no whitespace, so key
/// order and formatting do not matter.
pub fn fingerprint(body: &Map<String, Value>) -> String {
    fn canonical(value: &Value, out: &mut String) {
        match value {
            Value::Object(object) => {
                let mut entries: Vec<(&String, &Value)> = object.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                out.push('{');
                for (i, (key, value)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    canonical(value, out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    canonical(item, out);
                }
                out.push(']');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut text = String::new();
    canonical(&Value::Object(body.clone()), &mut text);
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// An answer as it was sent, kept to be sent again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub status: u16,
    /// Empty when the body is sealed.
    pub body: String,
    pub location: Option<String>,
    /// The body, sealed, when it carries a secret (a webhook's registration): the key's
    /// record then holds no secret in the clear (docs/security.md, "Secrets at rest").
    pub sealed_body: Option<crate::sealed::StoredSecret>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn keys_are_visible_ascii_of_1_to_255() {
        assert!(is_valid_key(b"a"));
        assert!(is_valid_key("k".repeat(255).as_bytes()));
        assert!(is_valid_key(b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"));
        assert!(!is_valid_key(b""));
        assert!(!is_valid_key("k".repeat(256).as_bytes()));
        assert!(!is_valid_key(b"a b"));
        assert!(!is_valid_key(b"a\tb"));
        assert!(!is_valid_key("caf\u{e9}".as_bytes()));
    }

    #[test]
    fn fingerprints_ignore_key_order_and_whitespace() {
        let a = object(json!({"a": 1, "b": {"y": [1, 2], "x": "s"}}));
        let b: Map<String, Value> =
            serde_json::from_str(r#"{ "b" : { "x":"s" , "y":[1,2] }, "a":1 }"#).unwrap();
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(
            fingerprint(&a),
            fingerprint(&object(json!({"a": 2, "b": {}})))
        );
    }

    #[test]
    fn key_ids_are_scoped() {
        let base = key_id("b", KeyEnvironment::Test, Endpoint::StartStream, "k");
        assert_ne!(
            base,
            key_id("c", KeyEnvironment::Test, Endpoint::StartStream, "k")
        );
        assert_ne!(
            base,
            key_id("b", KeyEnvironment::Live, Endpoint::StartStream, "k")
        );
        assert_ne!(
            base,
            key_id("b", KeyEnvironment::Test, Endpoint::RegisterWebhook, "k")
        );
        assert_eq!(base.len(), 64);
    }
}
