//! The application: configuration, clock and ports, assembled once per process and shared by
//! every handler.

use std::ops::Deref;
use std::sync::Arc;

use crate::cache::{CREATORS_TTL, KEY_TTL, TtlCache};
use crate::ratelimit::Refusals;
use crate::service::creators::Catalog;
use hosting_domain::account::KeyDigest;
use hosting_domain::clock::Clock;
use hosting_domain::ports::{DeliveryQueue, RoomProvider, Store, Timers};
use hosting_domain::{ApiKey, Brand};
use hosting_support::config::Config;

pub struct AppParts {
    pub config: Config,
    pub clock: Arc<dyn Clock>,
    pub store: Arc<dyn Store>,
    pub timers: Arc<dyn Timers>,
    pub queue: Arc<dyn DeliveryQueue>,
    /// `None` when no room provider is configured: live-key starts fail with `launch_failed`.
    pub rooms: Option<Arc<dyn RoomProvider>>,
}

/// Per-instance caches in front of the store (see [`crate::cache`]).
/// A key found by its hash, with the brand it belongs to.
pub type KeyAndBrand = (Arc<ApiKey>, Arc<Brand>);

pub struct Caches {
    /// Key digest -> the key and its brand, or `None` for an unknown key. Shared, so that a
    /// warm request takes them without copying; keyed by the digest's bytes, so that a warm
    /// request never writes its hex text.
    pub keys: TtlCache<KeyDigest, Option<KeyAndBrand>>,
    pub creators: TtlCache<(), Arc<Catalog>>,
    /// Brands refused by the rate limit in the current minute.
    pub refusals: Refusals,
}

pub struct AppInner {
    parts: AppParts,
    pub caches: Caches,
}

/// Cheap to clone; handlers receive it as axum state.
#[derive(Clone)]
pub struct App(Arc<AppInner>);

impl App {
    pub fn new(parts: AppParts) -> Self {
        Self(Arc::new(AppInner {
            parts,
            caches: Caches {
                keys: TtlCache::new(KEY_TTL),
                creators: TtlCache::new(CREATORS_TTL),
                refusals: Refusals::default(),
            },
        }))
    }

    pub fn caches(&self) -> &Caches {
        &self.0.caches
    }
}

impl Deref for App {
    type Target = AppParts;
    fn deref(&self) -> &AppParts {
        &self.0.parts
    }
}
