//! Brands, plans, API keys and scopes.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The only vertical this API serves.
pub const LIVE_COMMERCE: &str = "live-commerce";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    Free,
    Starter,
    Growth,
    Scale,
    Enterprise,
}

impl Plan {
    pub const ALL: [Plan; 5] = [
        Plan::Free,
        Plan::Starter,
        Plan::Growth,
        Plan::Scale,
        Plan::Enterprise,
    ];

    /// Live keys need Growth or above (the plan gate).
    pub fn allows_live_keys(self) -> bool {
        self >= Plan::Growth
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Starter => "starter",
            Plan::Growth => "growth",
            Plan::Scale => "scale",
            Plan::Enterprise => "enterprise",
        }
    }
}

impl FromStr for Plan {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|plan| plan.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|p| p.as_str()).collect();
                format!("unknown plan `{s}`: one of {}", known.join(", "))
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Brand {
    pub id: String,
    pub name: String,
    pub plan: Plan,
    pub vertical: String,
    /// The IANA time zone its billing periods run in (docs/usage.md, "Periods").
    #[serde(default = "default_billing_time_zone")]
    pub billing_time_zone: String,
    /// The day of the month, 1 to 28, its billing periods start on.
    #[serde(default = "default_billing_anchor_day")]
    pub billing_anchor_day: u8,
}

pub const DEFAULT_BILLING_TIME_ZONE: &str = "UTC";
pub const DEFAULT_BILLING_ANCHOR_DAY: u8 = 1;

fn default_billing_time_zone() -> String {
    DEFAULT_BILLING_TIME_ZONE.to_owned()
}

fn default_billing_anchor_day() -> u8 {
    DEFAULT_BILLING_ANCHOR_DAY
}

impl Brand {
    /// A brand billed by calendar month in UTC until an operator sets its billing.
    pub fn new(id: &str, name: &str, plan: Plan, vertical: &str) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            plan,
            vertical: vertical.to_owned(),
            billing_time_zone: default_billing_time_zone(),
            billing_anchor_day: DEFAULT_BILLING_ANCHOR_DAY,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scope {
    #[serde(rename = "streams:read")]
    StreamsRead,
    #[serde(rename = "streams:write")]
    StreamsWrite,
    #[serde(rename = "analytics:read")]
    AnalyticsRead,
    #[serde(rename = "webhooks:write")]
    WebhooksWrite,
}

impl Scope {
    pub const ALL: [Scope; 4] = [
        Scope::StreamsRead,
        Scope::StreamsWrite,
        Scope::AnalyticsRead,
        Scope::WebhooksWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::StreamsRead => "streams:read",
            Scope::StreamsWrite => "streams:write",
            Scope::AnalyticsRead => "analytics:read",
            Scope::WebhooksWrite => "webhooks:write",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s)
            .ok_or_else(|| format!("unknown scope `{s}`"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyEnvironment {
    Live,
    Test,
}

impl KeyEnvironment {
    pub fn prefix(self) -> &'static str {
        match self {
            KeyEnvironment::Live => "svc_live_",
            KeyEnvironment::Test => "svc_test_",
        }
    }
}

/// Length of the random part of a key, after its prefix.
pub const KEY_SECRET_LEN: usize = 32;

/// A well-formed presented key: `svc_live_` or `svc_test_` and 32 ASCII alphanumerics.
/// Anything else is rejected before any store lookup.
pub fn parse_key(raw: &str) -> Option<KeyEnvironment> {
    let env = [KeyEnvironment::Live, KeyEnvironment::Test]
        .into_iter()
        .find(|env| raw.starts_with(env.prefix()))?;
    let secret = &raw[env.prefix().len()..];
    (secret.len() == KEY_SECRET_LEN && secret.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then_some(env)
}

/// The only form in which a key is ever stored: lowercase hex SHA-256 of the whole key.
pub fn hash_key(raw: &str) -> String {
    key_hash_text(&key_digest(raw))
}

/// A key's public, non-secret name (docs/usage.md, "Keys"): `key_` and 16 lowercase hex digits
/// of a SHA-256 of its stored hash. Derived, not stored, so every key has one however it was
/// made, and it tells nothing that would help find the key.
pub fn key_id(key_hash: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"key_id\0")
        .chain_update(key_hash.to_ascii_lowercase().as_bytes())
        .finalize();
    format!("key_{}", hex::encode(&digest[..8]))
}

/// SHA-256 of the whole key: what an instance's key cache is keyed by, without the hex text.
pub type KeyDigest = [u8; 32];

pub fn key_digest(raw: &str) -> KeyDigest {
    Sha256::digest(raw.as_bytes()).into()
}

/// The stored form ([`hash_key`]) of a key's digest.
pub fn key_hash_text(digest: &KeyDigest) -> String {
    hex::encode(digest)
}

/// A fresh random key of the given environment.
pub fn generate_key(env: KeyEnvironment) -> String {
    use rand::Rng;
    use rand::distr::Alphanumeric;
    let secret: String = rand::rng()
        .sample_iter(&Alphanumeric)
        .take(KEY_SECRET_LEN)
        .map(char::from)
        .collect();
    format!("{}{secret}", env.prefix())
}

/// A stored API key. The raw key is never kept: only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKey {
    pub key_hash: String,
    pub brand_id: String,
    pub environment: KeyEnvironment,
    pub scopes: Vec<Scope>,
    pub revoked: bool,
    pub expires_at: Option<DateTime<Utc>>,
}

impl ApiKey {
    pub fn is_usable_at(&self, now: DateTime<Utc>) -> bool {
        !self.revoked && self.expires_at.is_none_or(|expires| expires > now)
    }

    pub fn has_scope(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
    pub fn key_id(&self) -> String {
        key_id(&self.key_hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_ids_are_public_names_of_the_hash() {
        let raw = format!("svc_live_{}", "b".repeat(32));
        let id = key_id(&hash_key(&raw));
        let hex = id.strip_prefix("key_").unwrap();
        assert_eq!(hex.len(), 16);
        assert!(hex.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        // The same key, its hash given in either case, has one id; another key another.
        assert_eq!(key_id(&hash_key(&raw).to_ascii_uppercase()), id);
        assert_ne!(
            key_id(&hash_key(&format!("svc_live_{}", "c".repeat(32)))),
            id
        );
        // Nothing of the key or its stored hash shows in it.
        assert!(!hash_key(&raw).contains(hex));
    }

    #[test]
    fn key_format() {
        let ok = format!("svc_test_{}", "a".repeat(32));
        assert_eq!(parse_key(&ok), Some(KeyEnvironment::Test));
        assert_eq!(
            parse_key(&format!("svc_live_{}", "Z9".repeat(16))),
            Some(KeyEnvironment::Live)
        );
        assert_eq!(parse_key(&format!("svc_test_{}", "a".repeat(31))), None);
        assert_eq!(parse_key(&format!("svc_test_{}", "a".repeat(33))), None);
        assert_eq!(parse_key(&format!("svc_test_{}-", "a".repeat(31))), None);
        assert_eq!(parse_key(&format!("svc_prod_{}", "a".repeat(32))), None);
        assert_eq!(parse_key(&format!("svc_test_{}é", "a".repeat(30))), None);
        assert!(parse_key(&generate_key(KeyEnvironment::Live)).is_some());
    }

    #[test]
    fn plan_order() {
        assert!(!Plan::Free.allows_live_keys());
        assert!(!Plan::Starter.allows_live_keys());
        assert!(Plan::Growth.allows_live_keys());
        assert!(Plan::Enterprise.allows_live_keys());
        assert_eq!("scale".parse::<Plan>(), Ok(Plan::Scale));
    }
}

/// Who is calling: the key's brand and the key itself, once the request pipeline let it in.
#[derive(Debug, Clone)]
pub struct Caller {
    pub brand: Arc<Brand>,
    pub key: Arc<ApiKey>,
    pub environment: KeyEnvironment,
}

impl Caller {
    pub fn is_test(&self) -> bool {
        self.environment == KeyEnvironment::Test
    }
}
