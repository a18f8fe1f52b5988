//! Webhooks, in their brand's partition: the brand's list is one consistent `Query`, so a
//! webhook is listed (and receives deliveries) as soon as its registration answered.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, Delete, TransactWriteItem};
use uuid::Uuid;

use super::DynamoStore;
use super::idempotency::binding_item;
use super::items::{n, webhook_from_item, webhook_item};
use super::keys::{self, WEBHOOK_SK_PREFIX};
use super::requests::{
    UpdateSpec, any_condition_failed, applied, backend, condition_failed_at, put, retrying, update,
};
use crate::domain::Webhook;
use crate::ports::{CreateWebhookOutcome, IdempotencyBinding, StoreResult, WebhookStore};

#[async_trait]
impl WebhookStore for DynamoStore {
    async fn create_webhook(
        &self,
        webhook: &Webhook,
        max: usize,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateWebhookOutcome> {
        let mut items = vec![
            update(
                &self.table,
                UpdateSpec {
                    key: keys::brand_key(&webhook.brand_id),
                    expression: "SET webhooks = if_not_exists(webhooks, :zero) + :one",
                    condition: Some("attribute_not_exists(webhooks) OR webhooks < :max"),
                    names: vec![],
                    values: vec![(":zero", n(0)), (":one", n(1)), (":max", n(max))],
                },
            )?,
            put(
                &self.table,
                webhook_item(webhook),
                Some("attribute_not_exists(pk)"),
            )?,
        ];
        if let Some(binding) = binding {
            items.push(binding_item(&self.table, binding, &webhook.id.to_string())?);
        }
        match self.transact(items).await {
            Ok(()) => Ok(CreateWebhookOutcome::Created),
            Err(err) if binding.is_some() && condition_failed_at(&err, 2) => {
                Ok(CreateWebhookOutcome::KeyLost)
            }
            Err(err) if condition_failed_at(&err, 0) => Ok(CreateWebhookOutcome::Limit),
            Err(err) => Err(backend(err)),
        }
    }

    async fn list_webhooks(&self, brand_id: &str) -> StoreResult<Vec<Webhook>> {
        let mut webhooks = self
            .query_partition(&keys::brand_pk(brand_id), Some(WEBHOOK_SK_PREFIX))
            .await?
            .iter()
            .map(webhook_from_item)
            .collect::<Result<Vec<_>, _>>()?;
        webhooks.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(webhooks)
    }

    async fn get_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<Option<Webhook>> {
        self.get(keys::webhook_key(brand_id, webhook_id))
            .await?
            .as_ref()
            .map(webhook_from_item)
            .transpose()
    }

    async fn delete_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(keys::webhook_key(brand_id, webhook_id)))
            .condition_expression("attribute_exists(pk)")
            .build()
            .map_err(backend)?;
        let items = vec![
            TransactWriteItem::builder().delete(delete).build(),
            update(
                &self.table,
                UpdateSpec {
                    key: keys::brand_key(brand_id),
                    expression: "SET webhooks = webhooks - :one",
                    condition: Some("webhooks > :zero"),
                    names: vec![],
                    values: vec![(":zero", n(0)), (":one", n(1))],
                },
            )?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(()),
            // Absent (another brand's is absent too): nothing to delete.
            Err(err) if any_condition_failed(&err) => Ok(()),
            Err(err) => Err(backend(err)),
        }
    }

    async fn deactivate_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()> {
        let result = retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::webhook_key(brand_id, webhook_id)))
                .update_expression("SET active = :false")
                .condition_expression("attribute_exists(pk)")
                .expression_attribute_values(":false", AttributeValue::Bool(false))
                .send()
        })
        .await;
        applied(result).map(drop)
    }
}
