//! The application: configuration, clock and ports, assembled once per process and shared by
//! every handler.

use std::ops::Deref;
use std::sync::Arc;

use crate::cache::{CREATORS_TTL, KEY_TTL, TtlCache};
use crate::ratelimit::Refusals;
use crate::service::creators::Catalog;
use hosting_domain::account::KeyDigest;
use hosting_domain::clock::Clock;
use hosting_domain::ports::{
    AccountStore, CreatorStore, DeliveryLogStore, DeliveryQueue, DeliverySlotStore,
    IdempotencyStore, Outbox, ParkedDeliveryStore, RateLimitStore, RoomCleanupStore, RoomProvider,
    ServiceKeyStore, ShowStartStore, ShowStore, Store, StreamKeyStore, StreamListStore,
    StreamStore, Timers, WebhookStore,
};
use hosting_domain::{ApiKey, Brand};
use hosting_support::config::Config;

pub struct AppParts {
    pub config: Config,
    pub clock: Arc<dyn Clock>,
    /// The backend's store, every port at once: for wiring, seeding and tests. The operations
    /// reach it through the one port each call needs ([`AppParts::streams`] and the others
    /// below), so what an operation touches reads off its calls.
    pub store: Arc<dyn Store>,
    pub timers: Arc<dyn Timers>,
    pub queue: Arc<dyn DeliveryQueue>,
    /// Where clips wait for their cut (docs/clips.md).
    pub clip_queue: Arc<dyn hosting_domain::ports::ClipQueue>,
    /// `None` when no room provider is configured: live-key starts fail with `launch_failed`.
    pub rooms: Option<Arc<dyn RoomProvider>>,
    /// Where recordings are kept and how they are handed out.
    pub recordings: Arc<dyn hosting_domain::ports::RecordingStorage>,
    /// The stack's key for secrets at rest: [`App::secrets`] seals and opens with it.
    pub vault: Arc<dyn hosting_domain::ports::KeyVault>,
}

/// The store seen through one port at a time.
impl AppParts {
    pub fn accounts(&self) -> &dyn AccountStore {
        &*self.store
    }
    pub fn rate_limits(&self) -> &dyn RateLimitStore {
        &*self.store
    }
    pub fn creators(&self) -> &dyn CreatorStore {
        &*self.store
    }
    pub fn idempotency(&self) -> &dyn IdempotencyStore {
        &*self.store
    }
    pub fn streams(&self) -> &dyn StreamStore {
        &*self.store
    }
    pub fn stream_lists(&self) -> &dyn StreamListStore {
        &*self.store
    }
    pub fn stream_keys(&self) -> &dyn StreamKeyStore {
        &*self.store
    }
    pub fn room_cleanups(&self) -> &dyn RoomCleanupStore {
        &*self.store
    }
    pub fn shows(&self) -> &dyn ShowStore {
        &*self.store
    }
    pub fn show_starts(&self) -> &dyn ShowStartStore {
        &*self.store
    }
    pub fn webhooks(&self) -> &dyn WebhookStore {
        &*self.store
    }
    pub fn delivery_log(&self) -> &dyn DeliveryLogStore {
        &*self.store
    }
    pub fn delivery_slots(&self) -> &dyn DeliverySlotStore {
        &*self.store
    }
    pub fn parked_deliveries(&self) -> &dyn ParkedDeliveryStore {
        &*self.store
    }
    pub fn outbox(&self) -> &dyn Outbox {
        &*self.store
    }
    pub fn service_keys(&self) -> &dyn ServiceKeyStore {
        &*self.store
    }
    pub fn clips(&self) -> &dyn hosting_domain::ports::ClipStore {
        &*self.store
    }
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
    /// The key that signs the delivery log's cursors, read from the store once.
    pub cursor_key: tokio::sync::OnceCell<Arc<[u8]>>,
}

pub struct AppInner {
    parts: AppParts,
    pub caches: Caches,
    secrets: crate::secrets::Secrets,
}

/// Cheap to clone; handlers receive it as axum state.
#[derive(Clone)]
pub struct App(Arc<AppInner>);

impl App {
    pub fn new(parts: AppParts) -> Self {
        Self(Arc::new(AppInner {
            secrets: crate::secrets::Secrets::new(parts.vault.clone()),
            parts,
            caches: Caches {
                keys: TtlCache::new(KEY_TTL),
                creators: TtlCache::new(CREATORS_TTL),
                refusals: Refusals::default(),
                cursor_key: tokio::sync::OnceCell::new(),
            },
        }))
    }

    pub fn caches(&self) -> &Caches {
        &self.0.caches
    }

    /// Seals and opens stored secrets (docs/security.md, "Secrets at rest").
    pub fn secrets(&self) -> &crate::secrets::Secrets {
        &self.0.secrets
    }

    /// The key that signs the delivery log's cursors: the store's, read once per instance.
    pub async fn cursor_key(&self) -> Result<Arc<[u8]>, hosting_domain::error::StoreError> {
        self.0
            .caches
            .cursor_key
            .get_or_try_init(|| async {
                self.service_keys()
                    .service_key(hosting_domain::delivery_log::CURSOR_KEY_NAME)
                    .await
                    .map(Arc::from)
            })
            .await
            .cloned()
    }
}

impl Deref for App {
    type Target = AppParts;
    fn deref(&self) -> &AppParts {
        &self.0.parts
    }
}
