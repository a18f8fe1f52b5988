//! The seeded brands, keys and creators every test starts from, and the suite's start time.

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{Value, json};

pub const ALL_SCOPES: [&str; 4] = [
    "streams:read",
    "streams:write",
    "analytics:read",
    "webhooks:write",
];

/// A well-formed key: prefix, then `tag` padded with `x` to 32 characters.
pub fn key(env: &str, tag: &str) -> String {
    assert!(tag.len() <= 32 && tag.bytes().all(|b| b.is_ascii_alphanumeric()));
    format!("svc_{env}_{tag:x<32}")
}

pub struct Keys;

impl Keys {
    pub fn test_a() -> String {
        key("test", "brandA")
    }
    pub fn live_a() -> String {
        key("live", "brandA")
    }
    pub fn test_a2() -> String {
        key("test", "brandAsecond")
    }
    pub fn test_b() -> String {
        key("test", "brandB")
    }
    pub fn live_b() -> String {
        key("live", "brandB")
    }
    pub fn live_free() -> String {
        key("live", "free")
    }
    pub fn test_free() -> String {
        key("test", "free")
    }
    pub fn live_starter() -> String {
        key("live", "starter")
    }
    pub fn test_gaming() -> String {
        key("test", "gaming")
    }
    pub fn revoked() -> String {
        key("test", "revoked")
    }
    pub fn expired() -> String {
        key("test", "expired")
    }
    pub fn expiring_now() -> String {
        key("test", "expiringNow")
    }
    /// A brand A key holding only `scope`.
    pub fn only(scope: &str) -> String {
        key("test", &format!("only{}", scope.replace(':', "")))
    }
    pub fn live_only(scope: &str) -> String {
        key("live", &format!("only{}", scope.replace(':', "")))
    }
}

pub const CREATOR_AVA: &str = "avt_ava000000001";
pub const CREATOR_ZED: &str = "avt_zed000000002";
pub const CREATOR_BEA: &str = "avt_bea000000003";

pub fn start_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 30).unwrap()
}

pub fn base_seed(now: DateTime<Utc>) -> Value {
    let brand = |id: &str, plan: &str, vertical: &str| json!({"id": id, "name": id, "plan": plan, "vertical": vertical});
    let api_key = |key: String, brand: &str, scopes: &[&str]| json!({"key": key, "brand_id": brand, "scopes": scopes, "revoked": false, "expires_at": null});
    let mut keys = vec![
        api_key(Keys::test_a(), "brand_a", &ALL_SCOPES),
        api_key(Keys::live_a(), "brand_a", &ALL_SCOPES),
        api_key(Keys::test_a2(), "brand_a", &ALL_SCOPES),
        api_key(Keys::test_b(), "brand_b", &ALL_SCOPES),
        api_key(Keys::live_b(), "brand_b", &ALL_SCOPES),
        api_key(Keys::live_free(), "brand_free", &ALL_SCOPES),
        api_key(Keys::test_free(), "brand_free", &ALL_SCOPES),
        api_key(Keys::live_starter(), "brand_starter", &ALL_SCOPES),
        api_key(Keys::test_gaming(), "brand_gaming", &ALL_SCOPES),
        json!({"key": Keys::revoked(), "brand_id": "brand_a", "scopes": ALL_SCOPES, "revoked": true}),
        json!({"key": Keys::expired(), "brand_id": "brand_a", "scopes": ALL_SCOPES,
               "expires_at": (now - Duration::seconds(1)).to_rfc3339()}),
        json!({"key": Keys::expiring_now(), "brand_id": "brand_a", "scopes": ALL_SCOPES,
               "expires_at": now.to_rfc3339()}),
    ];
    for scope in ALL_SCOPES {
        keys.push(api_key(Keys::only(scope), "brand_a", &[scope]));
        keys.push(api_key(Keys::live_only(scope), "brand_a", &[scope]));
    }
    let creator = |id: &str, name: &str| {
        json!({"id": id, "name": name, "status": "active", "languages": ["en"], "style": null,
               "personality": null, "vibe": null, "consent": true, "photo": null})
    };
    json!({
        "brands": [
            brand("brand_a", "growth", "live-commerce"),
            brand("brand_b", "enterprise", "live-commerce"),
            brand("brand_free", "free", "live-commerce"),
            brand("brand_starter", "starter", "live-commerce"),
            brand("brand_gaming", "growth", "gaming"),
        ],
        "api_keys": keys,
        "creators": [creator(CREATOR_ZED, "zed"), creator(CREATOR_AVA, "Ava"), creator(CREATOR_BEA, "bea")],
    })
}
