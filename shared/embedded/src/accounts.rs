//! Keys, brands, the rate-limit count and the creators catalog in the embedded store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::store::MemoryStore;
use hosting_domain::domain::{ApiKey, Brand, Creator};
use hosting_domain::ports::{AccountStore, CreatorStore, RateLimitStore, StoreResult};

#[async_trait]
impl AccountStore for MemoryStore {
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKey>> {
        Ok(self.lock()?.keys.get(key_hash).cloned())
    }

    async fn get_brand(&self, brand_id: &str) -> StoreResult<Option<Brand>> {
        Ok(self.lock()?.brands.get(brand_id).cloned())
    }
}

#[async_trait]
impl RateLimitStore for MemoryStore {
    async fn count_request(&self, brand_id: &str, window_start: DateTime<Utc>) -> StoreResult<u64> {
        let mut state = self.lock()?;
        // Windows before the current minute can no longer be counted into: drop them once
        // per minute, not on every request.
        if state.rate_windows_pruned_at < window_start {
            state.rate_windows.retain(|_, windows| {
                windows.retain(|(start, _)| *start >= window_start);
                !windows.is_empty()
            });
            state.rate_windows_pruned_at = window_start;
        }
        // Found by the brand's id as it is: a counted request copies nothing.
        if !state.rate_windows.contains_key(brand_id) {
            state.rate_windows.insert(brand_id.to_owned(), Vec::new());
        }
        let windows = state
            .rate_windows
            .get_mut(brand_id)
            .expect("inserted above");
        let at = match windows.iter().position(|(start, _)| *start == window_start) {
            Some(at) => at,
            None => {
                windows.push((window_start, 0));
                windows.len() - 1
            }
        };
        let count = &mut windows[at].1;
        *count += 1;
        Ok(*count)
    }
}

#[async_trait]
impl CreatorStore for MemoryStore {
    async fn list_creators(&self) -> StoreResult<Vec<Creator>> {
        Ok(self.lock()?.creators.values().cloned().collect())
    }

    async fn get_creator(&self, creator_id: &str) -> StoreResult<Option<Creator>> {
        Ok(self.lock()?.creators.get(creator_id).cloned())
    }
}
