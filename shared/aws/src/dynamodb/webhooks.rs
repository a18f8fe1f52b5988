//! Webhooks, in their brand's partition: the brand's list is one consistent `Query`, so a
//! webhook is listed (and receives deliveries) as soon as its registration answered.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, Delete, ReturnValue, TransactWriteItem};
use uuid::Uuid;

use super::DynamoStore;
use super::idempotency::binding_item;
use super::items::{n, webhook_from_item, webhook_item};
use super::keys::sortable;
use super::keys::{self, WEBHOOK_SK_PREFIX};
use super::requests::{
    UpdateSpec, any_condition_failed, applied, backend, condition_failed, condition_failed_at, put,
    retrying, update,
};
use hosting_domain::Webhook;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{
    CreateWebhookOutcome, IdempotencyBinding, StoreResult, WebhookStore, WebhookUpdate,
};
use hosting_domain::webhook::WebhookChanges;
use hosting_support::admission;

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
        admission::admitted().await;
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

    async fn update_webhook(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        changes: &WebhookChanges,
    ) -> StoreResult<WebhookUpdate> {
        // Only the named fields are set, so a concurrent deactivation by a `410` survives an
        // unrelated change.
        let mut sets: Vec<&str> = Vec::new();
        let mut values: Vec<(&str, AttributeValue)> = Vec::new();
        let mut condition = String::from("attribute_exists(pk)");
        if let Some(url) = &changes.url {
            sets.push("#url = :url");
            values.push((":url", AttributeValue::S(url.clone())));
        }
        if let Some(events) = &changes.events {
            sets.push("events = :events");
            let events = events.iter().map(|e| AttributeValue::S(e.as_str().into()));
            values.push((":events", AttributeValue::L(events.collect())));
        }
        if let Some(active) = changes.active {
            sets.push("active = :active");
            values.push((":active", AttributeValue::Bool(active)));
        }
        if let Some(rotation) = &changes.rotation {
            sets.extend([
                "secret = :secret",
                "previous_secret = :replaced",
                "previous_secret_expires_at = :expires",
                "secret_rotated_at = :rotated",
            ]);
            values.extend([
                (":secret", AttributeValue::S(rotation.secret.clone())),
                (":replaced", AttributeValue::S(rotation.replaced.clone())),
                (
                    ":expires",
                    AttributeValue::S(sortable(rotation.replaced_expires_at)),
                ),
                (":rotated", AttributeValue::S(sortable(rotation.rotated_at))),
            ]);
            condition.push_str(" AND secret = :replaced");
        }
        if sets.is_empty() {
            return Ok(match self.get_webhook(brand_id, webhook_id).await? {
                Some(webhook) => WebhookUpdate::Updated(webhook),
                None => WebhookUpdate::Absent,
            });
        }
        let expression = format!("SET {}", sets.join(", "));
        let result = retrying(|| {
            let mut request = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::webhook_key(brand_id, webhook_id)))
                .update_expression(&expression)
                .condition_expression(&condition)
                .return_values(ReturnValue::AllNew);
            if changes.url.is_some() {
                request = request.expression_attribute_names("#url", "url");
            }
            for (name, value) in &values {
                request = request.expression_attribute_values(*name, value.clone());
            }
            request.send()
        })
        .await;
        match result {
            Ok(output) => match output.attributes {
                Some(item) => webhook_from_item(&item).map(WebhookUpdate::Updated),
                None => Err(StoreError::Backend(
                    "an update returned no attributes".into(),
                )),
            },
            // The condition failed: absent, or (a rotation) the secret moved on.
            Err(err) if condition_failed(&err) => {
                Ok(match self.get_webhook(brand_id, webhook_id).await? {
                    Some(_) => WebhookUpdate::SecretChanged,
                    None => WebhookUpdate::Absent,
                })
            }
            Err(err) => Err(backend(err)),
        }
    }
}
