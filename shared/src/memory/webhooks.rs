//! Webhooks and their delivery logs in the embedded store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::store::MemoryStore;
use crate::admission;
use crate::domain::Webhook;
use crate::domain::delivery_log::{self, DeliveryAttempt};
use crate::domain::webhook::WebhookChanges;
use crate::ports::{
    CreateWebhookOutcome, IdempotencyBinding, StoreResult, WebhookStore, WebhookUpdate,
};

#[async_trait]
impl WebhookStore for MemoryStore {
    async fn create_webhook(
        &self,
        webhook: &Webhook,
        max: usize,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateWebhookOutcome> {
        let mut state = self.lock()?;
        if !state.holds(binding) {
            return Ok(CreateWebhookOutcome::KeyLost);
        }
        let held = state
            .webhooks
            .values()
            .filter(|w| w.brand_id == webhook.brand_id)
            .count();
        if held >= max {
            return Ok(CreateWebhookOutcome::Limit);
        }
        state.webhooks.insert(webhook.id, webhook.clone());
        state.bind(binding, webhook.id.to_string());
        Ok(CreateWebhookOutcome::Created)
    }

    async fn list_webhooks(&self, brand_id: &str) -> StoreResult<Vec<Webhook>> {
        admission::admitted().await;
        let mut webhooks: Vec<Webhook> = self
            .lock()?
            .webhooks
            .values()
            .filter(|w| w.brand_id == brand_id)
            .cloned()
            .collect();
        webhooks.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(webhooks)
    }

    async fn get_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<Option<Webhook>> {
        Ok(self
            .lock()?
            .webhooks
            .get(&webhook_id)
            .filter(|w| w.brand_id == brand_id)
            .cloned())
    }

    async fn delete_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()> {
        let mut state = self.lock()?;
        if state
            .webhooks
            .get(&webhook_id)
            .is_some_and(|w| w.brand_id == brand_id)
        {
            state.webhooks.remove(&webhook_id);
        }
        Ok(())
    }

    async fn deactivate_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()> {
        if let Some(webhook) = self
            .lock()?
            .webhooks
            .get_mut(&webhook_id)
            .filter(|w| w.brand_id == brand_id)
        {
            webhook.active = false;
        }
        Ok(())
    }

    async fn update_webhook(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        changes: &WebhookChanges,
    ) -> StoreResult<WebhookUpdate> {
        let mut state = self.lock()?;
        let Some(webhook) = state
            .webhooks
            .get_mut(&webhook_id)
            .filter(|w| w.brand_id == brand_id)
        else {
            return Ok(WebhookUpdate::Absent);
        };
        if changes
            .rotation
            .as_ref()
            .is_some_and(|rotation| rotation.replaced != webhook.secret)
        {
            return Ok(WebhookUpdate::SecretChanged);
        }
        webhook.apply(changes);
        Ok(WebhookUpdate::Updated(webhook.clone()))
    }

    async fn record_attempt(&self, attempt: &DeliveryAttempt) -> StoreResult<()> {
        let mut state = self.lock()?;
        // What DynamoDB's TTL would have removed by now.
        let horizon = attempt.attempted_at - delivery_log::RETENTION;
        state.attempts.retain(|a| a.attempted_at >= horizon);
        state.attempts.push(attempt.clone());
        Ok(())
    }

    async fn delivery_attempts(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<DeliveryAttempt>> {
        admission::admitted().await;
        let mut attempts: Vec<DeliveryAttempt> = self
            .lock()?
            .attempts
            .iter()
            .filter(|a| a.webhook_id == webhook_id && a.brand_id == brand_id)
            .filter(|a| a.attempted_at >= since)
            .cloned()
            .collect();
        attempts.sort_by_key(|a| std::cmp::Reverse((a.attempted_at, a.attempt)));
        Ok(attempts)
    }

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
