//! Each brand's delivery slots, and the deliveries parked while it holds every one.

use async_trait::async_trait;

use chrono::{DateTime, Utc};

use super::store::{EmbeddedStore, ParkedEntry, State};
use hosting_domain::ports::{
    BrandDeliveryState, Delivery, DeliverySlotStore, ParkedClaim, ParkedDelivery,
    ParkedDeliveryStore, ParkedWake, StoreResult,
};

fn is_free(state: &State, brand_id: &str, slot: u32, now: DateTime<Utc>) -> bool {
    state
        .delivery_slots
        .get(&(brand_id.to_owned(), slot))
        .is_none_or(|(_, held_until)| *held_until <= now)
}

fn brand_state(
    state: &State,
    brand_id: &str,
    slots: u32,
    now: DateTime<Utc>,
) -> BrandDeliveryState {
    BrandDeliveryState {
        free_slots: (0..slots)
            .filter(|slot| is_free(state, brand_id, *slot, now))
            .count() as u32,
        wake_due: state.parked_wakes.get(brand_id).copied(),
    }
}

/// The parked deliveries of one brand, in park order.
fn parked_of<'a>(
    state: &'a State,
    brand_id: &'a str,
) -> impl Iterator<Item = (&'a (String, String), &'a ParkedEntry)> + 'a {
    state
        .parked
        .range((brand_id.to_owned(), String::new())..)
        .take_while(move |((brand, _), _)| brand == brand_id)
}

/// The `limit` claimable keys from `offset` (or the last `limit` when fewer remain), and
/// whether others remain.
fn choose(mut claimable: Vec<String>, limit: usize, offset: usize) -> (Vec<String>, bool) {
    let start = offset.min(claimable.len().saturating_sub(limit));
    let more = claimable.len() > limit;
    let chosen = claimable.drain(start..).take(limit).collect();
    (chosen, more)
}

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
        let free = (0..slots).find(|slot| is_free(&state, brand_id, *slot, now));
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

    async fn release_delivery_slot_unless_parked(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
    ) -> StoreResult<bool> {
        let mut state = self.lock()?;
        let key = (brand_id.to_owned(), slot);
        if state
            .delivery_slots
            .get(&key)
            .is_none_or(|(held_by, _)| held_by != holder)
        {
            return Ok(true);
        }
        if state.parked_wakes.contains_key(brand_id) {
            return Ok(false);
        }
        state.delivery_slots.remove(&key);
        Ok(true)
    }

    async fn extend_delivery_slot(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
        until: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let mut state = self.lock()?;
        match state.delivery_slots.get_mut(&(brand_id.to_owned(), slot)) {
            Some((held_by, held_until)) if held_by == holder => {
                *held_until = until;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

#[async_trait]
impl ParkedDeliveryStore for EmbeddedStore {
    async fn park_deliveries(
        &self,
        brand_id: &str,
        deliveries: &[Delivery],
        slots: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<BrandDeliveryState> {
        let mut state = self.lock()?;
        for delivery in deliveries {
            // Park order: the time, then a random tail (two parks in one microsecond).
            let key = format!(
                "{}#{}",
                now.format("%Y-%m-%dT%H:%M:%S%.6fZ"),
                uuid::Uuid::new_v4().simple()
            );
            state
                .parked
                .insert((brand_id.to_owned(), key), (delivery.clone(), None));
        }
        Ok(brand_state(&state, brand_id, slots, now))
    }

    async fn brand_delivery_state(
        &self,
        brand_id: &str,
        slots: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<BrandDeliveryState> {
        let state = self.lock()?;
        Ok(brand_state(&state, brand_id, slots, now))
    }

    async fn claim_parked_deliveries(
        &self,
        brand_id: &str,
        claim: ParkedClaim,
    ) -> StoreResult<(Vec<ParkedDelivery>, bool)> {
        let mut state = self.lock()?;
        let mut claimable = Vec::new();
        let mut held = false;
        for ((_, key), (_, claimed_until)) in parked_of(&state, brand_id) {
            // A claimed one stays parked until removed: it counts as one that remains.
            if claimed_until.is_none_or(|until| until <= claim.now) {
                claimable.push(key.clone());
            } else {
                held = true;
            }
        }
        let (chosen, more) = choose(claimable, claim.limit, claim.offset);
        let mut claimed = Vec::with_capacity(chosen.len());
        for key in chosen {
            if let Some((delivery, claimed_until)) =
                state.parked.get_mut(&(brand_id.to_owned(), key.clone()))
            {
                *claimed_until = Some(claim.until);
                claimed.push(ParkedDelivery {
                    key,
                    delivery: delivery.clone(),
                });
            }
        }
        Ok((claimed, more || held))
    }

    async fn remove_parked_deliveries(&self, brand_id: &str, keys: &[String]) -> StoreResult<()> {
        let mut state = self.lock()?;
        for key in keys {
            state.parked.remove(&(brand_id.to_owned(), key.clone()));
        }
        Ok(())
    }

    async fn set_parked_wake(&self, brand_id: &str, due: DateTime<Utc>) -> StoreResult<()> {
        self.lock()?.parked_wakes.insert(brand_id.to_owned(), due);
        Ok(())
    }

    async fn due_parked_wakes(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<ParkedWake>> {
        let state = self.lock()?;
        let mut due: Vec<ParkedWake> = state
            .parked_wakes
            .iter()
            .filter(|(_, due)| **due <= now)
            .map(|(brand_id, due)| ParkedWake {
                brand_id: brand_id.clone(),
                due: *due,
            })
            .collect();
        due.sort_by_key(|wake| wake.due);
        due.truncate(limit);
        Ok(due)
    }

    async fn clear_parked_wake(&self, wake: &ParkedWake) -> StoreResult<bool> {
        let mut state = self.lock()?;
        if state.parked_wakes.get(&wake.brand_id) == Some(&wake.due) {
            state.parked_wakes.remove(&wake.brand_id);
            return Ok(true);
        }
        Ok(false)
    }
}
