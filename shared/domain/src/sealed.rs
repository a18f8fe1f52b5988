//! Secrets at rest (docs/security.md, "Secrets at rest"): every webhook secret, webhook
//! signing key and destination stream key is stored sealed under the stack's key, so the table,
//! its stream, its backups and any function that reads the item without decrypt hold only
//! ciphertext. The envelope itself is `hosting_app::secrets`; the model only carries it.

use serde::{Deserialize, Serialize};

/// A secret as the store keeps it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoredSecret {
    /// An envelope: a data key wrapped by the stack's key, then the secret under that data key
    /// (AES-256-GCM). A DynamoDB binary attribute.
    Sealed(Vec<u8>),
    /// Written before secrets were sealed: a string attribute, still read and used, and sealed
    /// by the next rotation or `admin seal-secrets`.
    Plain(String),
}

impl StoredSecret {
    pub fn is_sealed(&self) -> bool {
        matches!(self, StoredSecret::Sealed(_))
    }
}

impl std::fmt::Debug for StoredSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoredSecret::Sealed(bytes) => write!(f, "Sealed(<{} bytes>)", bytes.len()),
            StoredSecret::Plain(_) => f.write_str("Plain(<redacted>)"),
        }
    }
}

/// What a sealed secret is bound to: opening it under another scope fails, so a ciphertext
/// copied onto another item (another webhook, another destination) is refused rather than used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretScope<'a> {
    /// A webhook's `whsec_` secret, current or previous.
    WebhookSecret(&'a uuid::Uuid),
    /// A webhook's `whsk_` Ed25519 private key, current or previous.
    WebhookSigningKey(&'a uuid::Uuid),
    /// A destination's stream key, by destination id (`dst_...`, unique across streams and
    /// shows: a show's keys move to its stream unchanged).
    StreamKey(&'a str),
    /// The recorded answer of an idempotency key whose answer shows a secret, by key id.
    IdempotentAnswer(&'a str),
}

impl SecretScope<'_> {
    /// The additional authenticated data of the envelope.
    pub fn aad(&self) -> String {
        match self {
            SecretScope::WebhookSecret(id) => format!("webhook-secret/{id}"),
            SecretScope::WebhookSigningKey(id) => format!("webhook-signing-key/{id}"),
            SecretScope::StreamKey(id) => format!("stream-key/{id}"),
            SecretScope::IdempotentAnswer(id) => format!("idempotent-answer/{id}"),
        }
    }
}

/// A data key: 32 random bytes, and the same wrapped by the stack's key.
pub struct DataKey {
    pub plaintext: [u8; 32],
    pub wrapped: Vec<u8>,
}

impl std::fmt::Debug for DataKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DataKey(<redacted>, {} wrapped bytes)",
            self.wrapped.len()
        )
    }
}
