//! Keys, brands, the rate-limit count, the creators catalog, and what operators and seeds
//! write directly, in the embedded store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::store::{BrandKey, EmbeddedStore};
use hosting_domain::ports::{
    AccountStore, AdminStore, CreatorStore, RateLimitStore, ServiceKeyStore, StoreResult,
};
use hosting_domain::{ApiKey, Brand, Creator, Stream};

#[async_trait]
impl AccountStore for EmbeddedStore {
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKey>> {
        Ok(self.read()?.keys.get(key_hash).cloned())
    }

    async fn get_brand(&self, brand_id: &str) -> StoreResult<Option<Brand>> {
        Ok(self.read()?.brands.get(brand_id).cloned())
    }
}

#[async_trait]
impl RateLimitStore for EmbeddedStore {
    async fn count_request(&self, brand_id: &str, window_start: DateTime<Utc>) -> StoreResult<u64> {
        let mut windows = self.lock_rate_windows()?;
        // Windows before the current minute can no longer be counted into: drop them once
        // per minute, not on every request.
        if windows.pruned_at < window_start {
            windows.counts.retain(|_, counts| {
                counts.retain(|(start, _)| *start >= window_start);
                !counts.is_empty()
            });
            windows.pruned_at = window_start;
        }
        // Found by the brand's id as it is: a counted request copies nothing.
        if !windows.counts.contains_key(brand_id) {
            windows
                .counts
                .insert(BrandKey::new(brand_id), Default::default());
        }
        let brand_counts = windows.counts.get_mut(brand_id).expect("inserted above");
        let at = match brand_counts
            .iter()
            .position(|(start, _)| *start == window_start)
        {
            Some(at) => at,
            None => {
                brand_counts.push((window_start, 0));
                brand_counts.len() - 1
            }
        };
        let count = &mut brand_counts[at].1;
        *count += 1;
        Ok(*count)
    }
}

#[async_trait]
impl CreatorStore for EmbeddedStore {
    async fn list_creators(&self) -> StoreResult<Vec<Creator>> {
        Ok(self.read()?.creators.values().cloned().collect())
    }

    async fn get_creator(&self, creator_id: &str) -> StoreResult<Option<Creator>> {
        Ok(self.read()?.creators.get(creator_id).cloned())
    }
}

#[async_trait]
impl AdminStore for EmbeddedStore {
    async fn put_brand(&self, brand: &Brand) -> StoreResult<()> {
        self.lock()?.brands.insert(brand.id.clone(), brand.clone());
        Ok(())
    }

    async fn put_api_key(&self, key: &ApiKey) -> StoreResult<()> {
        self.lock()?.keys.insert(key.key_hash.clone(), key.clone());
        Ok(())
    }

    async fn put_creator(&self, creator: &Creator) -> StoreResult<()> {
        self.lock()?
            .creators
            .insert(creator.id.clone(), creator.clone());
        Ok(())
    }

    async fn delete_creator(&self, creator_id: &str) -> StoreResult<()> {
        self.lock()?.creators.remove(creator_id);
        Ok(())
    }

    async fn put_stream(&self, stream: &Stream) -> StoreResult<()> {
        let mut state = self.lock()?;
        if let Some(previous) = state.streams.remove(&stream.id) {
            state.unindex_stream(&previous);
        }
        if stream.status.is_active() {
            *state.active.entry(stream.brand_id.clone()).or_insert(0) += 1;
        }
        state.keep_stream(stream);
        Ok(())
    }
}

#[async_trait]
impl ServiceKeyStore for EmbeddedStore {
    /// Made on first use; the process's store lives only as long as the process, and so do
    /// its keys.
    async fn service_key(&self, name: &str) -> StoreResult<Vec<u8>> {
        Ok(self
            .lock()?
            .service_keys
            .entry(name.to_owned())
            .or_insert_with(|| rand::random::<[u8; 32]>().to_vec())
            .clone())
    }
}
