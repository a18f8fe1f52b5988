//! What operators and seeds write into the embedded store directly.

use async_trait::async_trait;

use super::store::EmbeddedStore;
use hosting_domain::ports::{AdminStore, StoreResult};
use hosting_domain::{ApiKey, Brand, Creator, Stream};

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
