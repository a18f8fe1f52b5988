//! Webhooks and their delivery logs in the embedded store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::store::EmbeddedStore;
use hosting_domain::Webhook;
use hosting_domain::ports::{
    CreateWebhookOutcome, IdempotencyBinding, StoreResult, WebhookDisable, WebhookStore,
    WebhookUpdate,
};
use hosting_domain::webhook::{DisabledReason, WebhookChanges};
use hosting_support::admission;

#[async_trait]
impl WebhookStore for EmbeddedStore {
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
            .read()?
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
            .read()?
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

    async fn mark_webhook_failing(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        if let Some(webhook) = self
            .lock()?
            .webhooks
            .get_mut(&webhook_id)
            .filter(|w| w.brand_id == brand_id)
        {
            webhook.failing_since.get_or_insert(at);
        }
        Ok(())
    }

    async fn clear_webhook_failing(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()> {
        if let Some(webhook) = self
            .lock()?
            .webhooks
            .get_mut(&webhook_id)
            .filter(|w| w.brand_id == brand_id)
        {
            webhook.failing_since = None;
        }
        Ok(())
    }

    async fn disable_webhook(&self, disable: &WebhookDisable) -> StoreResult<bool> {
        let mut state = self.lock()?;
        let Some(webhook) = state
            .webhooks
            .get_mut(&disable.webhook_id)
            .filter(|w| w.brand_id == disable.brand_id && w.active)
        else {
            return Ok(false);
        };
        if disable.reason == DisabledReason::Failing
            && webhook.failing_since != disable.failing_since
        {
            return Ok(false);
        }
        webhook.active = false;
        webhook.disabled_reason = Some(disable.reason);
        webhook.failing_since.get_or_insert(disable.at);
        state.emit(disable.event.clone());
        Ok(true)
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
        Ok(WebhookUpdate::Updated(Box::new(webhook.clone())))
    }
}
