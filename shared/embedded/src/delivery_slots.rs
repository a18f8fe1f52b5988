//! Each brand's delivery slots.

//! Webhooks and their delivery logs in the embedded store.

use async_trait::async_trait;

use chrono::{DateTime, Utc};

use super::store::EmbeddedStore;
use hosting_domain::ports::{DeliverySlotStore, StoreResult};

#[async_trait]
impl DeliverySlotStore for EmbeddedStore {
    async fn acquire_delivery_slot(
        &self,
        brand_id: &str,
        slots: u32,
        holder: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<u32>> {
        let mut state = self.lock()?;
        let free = (0..slots).find(|slot| {
            state
                .delivery_slots
                .get(&(brand_id.to_owned(), *slot))
                .is_none_or(|(_, held_until)| *held_until <= now)
        });
        if let Some(slot) = free {
            state
                .delivery_slots
                .insert((brand_id.to_owned(), slot), (holder.to_owned(), until));
        }
        Ok(free)
    }

    async fn release_delivery_slot(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
    ) -> StoreResult<()> {
        let mut state = self.lock()?;
        let key = (brand_id.to_owned(), slot);
        if state
            .delivery_slots
            .get(&key)
            .is_some_and(|(held_by, _)| held_by == holder)
        {
            state.delivery_slots.remove(&key);
        }
        Ok(())
    }
}
