//! Seed files (docs/configuration.md, "Seed files"): brands, keys, creators and stream history,
//! loaded through the admin port so the same file serves every backend.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use uuid::Uuid;

use hosting_domain::account::{self, KeyEnvironment, LIVE_COMMERCE};
use hosting_domain::error::StoreError;
use hosting_domain::ports::{AccountStore, AdminStore};
use hosting_domain::stream::DEFAULT_PREPARING_TIMEOUT;
use hosting_domain::{ApiKey, Brand, Creator, Plan, Scope, Stream, StreamStatus};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    #[serde(default)]
    pub brands: Vec<Brand>,
    #[serde(default)]
    pub api_keys: Vec<SeedKey>,
    #[serde(default)]
    pub creators: Vec<Creator>,
    #[serde(default)]
    pub streams: Vec<SeedStream>,
}

/// A key as written in a seed file: the raw key, hashed on load.
#[derive(Debug, Clone, Deserialize)]
pub struct SeedKey {
    pub key: String,
    pub brand_id: String,
    pub scopes: Vec<Scope>,
    #[serde(default)]
    pub revoked: bool,
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SeedStream {
    pub id: Uuid,
    pub brand_id: String,
    pub status: StreamStatus,
    #[serde(default)]
    pub platform: Option<String>,
    #[serde(default = "live_commerce")]
    pub vertical: String,
    #[serde(default)]
    pub creator_id: Option<String>,
    pub product_name: String,
    #[serde(default = "dashboard")]
    pub source: String,
    #[serde(default)]
    pub room_name: Option<String>,
    #[serde(default)]
    pub viewer_count: u64,
    #[serde(default)]
    pub test: bool,
    pub created_at: DateTime<Utc>,
    #[serde(default)]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub ended_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub duration_minutes: Option<u32>,
}

fn live_commerce() -> String {
    LIVE_COMMERCE.to_owned()
}

fn dashboard() -> String {
    "dashboard".to_owned()
}

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("seed file: {0}")]
    Parse(#[from] serde_json::Error),
    #[error(
        "seed file: api key #{0} is not `svc_live_` or `svc_test_` followed by 32 letters or digits"
    )]
    MalformedKey(usize),
    #[error(
        "seed file: api key #{index} belongs to brand `{brand_id}`, which is neither in the file nor in the store"
    )]
    UnknownBrand { index: usize, brand_id: String },
    #[error("seed file: brand #{index}: {error}")]
    Billing {
        index: usize,
        error: hosting_domain::usage::period::BillingCycleError,
    },
    #[error("seed file: {0}")]
    Store(#[from] StoreError),
}

impl Seed {
    pub fn from_json(json: &str) -> Result<Self, SeedError> {
        Ok(serde_json::from_str(json)?)
    }

    /// Loads everything, once every key is known to belong to a brand of the file or of the
    /// store (nothing is written otherwise).
    pub async fn load<S: AccountStore + AdminStore + ?Sized>(
        &self,
        store: &S,
    ) -> Result<(), SeedError> {
        for (index, brand) in self.brands.iter().enumerate() {
            hosting_domain::usage::period::BillingCycle::of(brand)
                .map_err(|error| SeedError::Billing { index, error })?;
        }
        for (index, key) in self.api_keys.iter().enumerate() {
            account::parse_key(&key.key).ok_or(SeedError::MalformedKey(index))?;
            let in_file = self.brands.iter().any(|brand| brand.id == key.brand_id);
            if !in_file && store.get_brand(&key.brand_id).await?.is_none() {
                return Err(SeedError::UnknownBrand {
                    index,
                    brand_id: key.brand_id.clone(),
                });
            }
        }
        for brand in &self.brands {
            store.put_brand(brand).await?;
        }
        for (index, key) in self.api_keys.iter().enumerate() {
            let environment = account::parse_key(&key.key).ok_or(SeedError::MalformedKey(index))?;
            store
                .put_api_key(&ApiKey {
                    key_hash: account::hash_key(&key.key),
                    brand_id: key.brand_id.clone(),
                    environment,
                    scopes: key.scopes.clone(),
                    revoked: key.revoked,
                    expires_at: key.expires_at,
                })
                .await?;
        }
        for creator in &self.creators {
            store.put_creator(creator).await?;
        }
        let streams: Vec<Stream> = self
            .streams
            .iter()
            .map(|s| Stream {
                id: s.id,
                brand_id: s.brand_id.clone(),
                status: s.status,
                platform: s.platform.clone(),
                vertical: s.vertical.clone(),
                creator_id: s.creator_id.clone(),
                product_name: s.product_name.clone(),
                source: s.source.clone(),
                room_name: s.room_name.clone(),
                viewer_count: s.viewer_count,
                test: s.test,
                created_at: s.created_at,
                started_at: s.started_at,
                ended_at: s.ended_at,
                duration_minutes: s.duration_minutes,
                script: None,
                end_reason: None,
                dispatches: 0,
                next_dispatch_at: None,
                agents: Vec::new(),
                host_check_at: None,
                host_lost_at: None,
                reconnect_until: None,
                revision: 0,
                deadline: None,
                destinations: Vec::new(),
                egress: Default::default(),
                stream_keys: Default::default(),
            })
            // Seeded active streams end at their deadlines like any other.
            .map(|stream| Stream {
                deadline: stream.deadline_in_status(DEFAULT_PREPARING_TIMEOUT),
                ..stream
            })
            .collect();
        store.put_streams(&streams).await?;
        Ok(())
    }
}

/// The local server's default data: a Growth brand with a test and a live key holding every
/// scope, and a small creators catalog.
pub struct DemoSeed {
    pub seed: Seed,
    pub test_key: String,
    pub live_key: String,
}

pub const DEMO_BRAND_ID: &str = "brand_demo";
/// Keys for `local-api --fixed-demo-keys`: the same on every start, for a local server only.
pub const FIXED_DEMO_TEST_KEY: &str = "svc_test_demotestkey000000000000000000000";
pub const FIXED_DEMO_LIVE_KEY: &str = "svc_live_demolivekey000000000000000000000";

/// The demo brand, with new random keys (`fixed`: [`FIXED_DEMO_TEST_KEY`] and
/// [`FIXED_DEMO_LIVE_KEY`]).
pub fn demo(fixed: bool) -> DemoSeed {
    let (test_key, live_key) = if fixed {
        (
            FIXED_DEMO_TEST_KEY.to_owned(),
            FIXED_DEMO_LIVE_KEY.to_owned(),
        )
    } else {
        (
            account::generate_key(KeyEnvironment::Test),
            account::generate_key(KeyEnvironment::Live),
        )
    };
    let key = |key: &str| SeedKey {
        key: key.to_owned(),
        brand_id: DEMO_BRAND_ID.to_owned(),
        scopes: Scope::ALL.to_vec(),
        revoked: false,
        expires_at: None,
    };
    let creator = |id: &str, name: &str, languages: &[&str], style: &str, vibe: &str| Creator {
        id: id.to_owned(),
        name: name.to_owned(),
        status: Some("active".to_owned()),
        languages: languages.iter().map(|l| l.to_string()).collect(),
        style: Some(style.to_owned()),
        personality: None,
        vibe: Some(vibe.to_owned()),
        consent: Some(true),
        photo: None,
    };
    let seed = Seed {
        brands: vec![Brand::new(
            DEMO_BRAND_ID,
            "Demo Brand",
            Plan::Growth,
            LIVE_COMMERCE,
        )],
        api_keys: vec![key(&test_key), key(&live_key)],
        creators: vec![
            creator("avt_ava000000001", "Ava", &["en"], "energetic", "upbeat"),
            creator("avt_leo000000002", "Leo", &["en", "es"], "calm", "friendly"),
            creator("avt_mia000000003", "Mia", &["en", "fr"], "playful", "witty"),
        ],
        streams: Vec::new(),
    };
    DemoSeed {
        seed,
        test_key,
        live_key,
    }
}
