//! Brands, keys, the creators catalog, rate-limit counts, idempotency keys and operator writes.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::idempotency::StoredAnswer;
use crate::{ApiKey, Brand, Creator, Stream};

use super::*;

#[async_trait]
pub trait AccountStore: Send + Sync {
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKey>>;
    async fn get_brand(&self, brand_id: &str) -> StoreResult<Option<Brand>>;
}

#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Counts one request of `brand_id` in the window starting at `window_start` and returns
    /// the window's count including it.
    async fn count_request(&self, brand_id: &str, window_start: DateTime<Utc>) -> StoreResult<u64>;
}

#[async_trait]
pub trait CreatorStore: Send + Sync {
    async fn list_creators(&self) -> StoreResult<Vec<Creator>>;
    async fn get_creator(&self, creator_id: &str) -> StoreResult<Option<Creator>>;
}

/// An idempotency key bound in the same atomic step as a creation (docs/idempotency.md, "Binding"):
/// the key this request holds, to be bound to what it creates, with the answer when it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyBinding {
    pub key_id: String,
    pub token: String,
    pub answer: Option<StoredAnswer>,
    pub at: DateTime<Utc>,
}

/// Where an idempotency key stands for a request that brings it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyHold {
    /// The key was free (or its last holder lapsed with nothing created): this request holds it.
    Acquired { token: String },
    /// Another request holds it and has not created anything (yet).
    Held { fingerprint: String },
    /// Bound to what an earlier request created, with its answer once recorded.
    Bound {
        fingerprint: String,
        resource_id: String,
        answer: Option<StoredAnswer>,
    },
}

#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Takes the key until `hold_until` unless it is held or bound; see [`KeyHold`].
    async fn hold_idempotency_key(
        &self,
        key_id: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        hold_until: DateTime<Utc>,
    ) -> StoreResult<KeyHold>;
    /// Lets the key go, when this request created nothing.
    async fn release_idempotency_key(&self, key_id: &str, token: &str) -> StoreResult<()>;
    /// Records the answer of a bound key, unless one is recorded already.
    async fn record_idempotent_answer(
        &self,
        key_id: &str,
        answer: &StoredAnswer,
    ) -> StoreResult<()>;
}

/// Operator writes: seeding, brands, keys and the creators catalog.
#[async_trait]
pub trait AdminStore: Send + Sync {
    async fn put_brand(&self, brand: &Brand) -> StoreResult<()>;
    async fn put_api_key(&self, key: &ApiKey) -> StoreResult<()>;
    async fn put_creator(&self, creator: &Creator) -> StoreResult<()>;
    async fn delete_creator(&self, creator_id: &str) -> StoreResult<()>;
    /// Inserts or replaces a stream as it is (fixtures, history); active ones take a slot.
    async fn put_stream(&self, stream: &Stream) -> StoreResult<()>;

    /// Many [`AdminStore::put_stream`]s, in as few requests as the backend allows.
    async fn put_streams(&self, streams: &[Stream]) -> StoreResult<()> {
        for stream in streams {
            self.put_stream(stream).await?;
        }
        Ok(())
    }
}

/// Keys the service keeps for itself and shows no one, such as the one that signs the delivery
/// log's cursors. Each is made once, at random, by whichever instance first asks for it, and is
/// the same for every instance after.
#[async_trait]
pub trait ServiceKeyStore: Send + Sync {
    /// The key called `name`, made now if it does not exist yet.
    async fn service_key(&self, name: &str) -> StoreResult<Vec<u8>>;
}
