//! Webhooks, in their brand's partition: the brand's list is one consistent `Query`, so a
//! webhook is listed (and receives deliveries) as soon as its registration answered.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, Delete, ReturnValue, TransactWriteItem};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::DynamoStore;
use super::idempotency::binding_item;
use super::items::{event_item, n, secret_value, webhook_from_item, webhook_item};
use super::keys::sortable;
use super::keys::{self, WEBHOOK_SK_PREFIX};
use super::requests::{
    UpdateSpec, any_condition_failed, applied, backend, condition_failed, condition_failed_at, put,
    retrying, update,
};
use hosting_domain::Webhook;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{
    CreateWebhookOutcome, IdempotencyBinding, StoreResult, WebhookDisable, WebhookStore,
    WebhookUpdate,
};
use hosting_domain::webhook::{DisabledReason, WebhookChanges};
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

    async fn mark_webhook_failing(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let result = retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::webhook_key(brand_id, webhook_id)))
                .update_expression("SET failing_since = if_not_exists(failing_since, :at)")
                .condition_expression("attribute_exists(pk)")
                .expression_attribute_values(":at", AttributeValue::S(sortable(at)))
                .send()
        })
        .await;
        applied(result).map(drop)
    }

    async fn clear_webhook_failing(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()> {
        let result = retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::webhook_key(brand_id, webhook_id)))
                .update_expression("REMOVE failing_since")
                .condition_expression("attribute_exists(pk)")
                .send()
        })
        .await;
        applied(result).map(drop)
    }

    async fn disable_webhook(&self, disable: &WebhookDisable) -> StoreResult<bool> {
        let mut values = vec![
            (":true", AttributeValue::Bool(true)),
            (":false", AttributeValue::Bool(false)),
            (":reason", AttributeValue::S(disable.reason.as_str().into())),
            (":at", AttributeValue::S(sortable(disable.at))),
        ];
        let condition = if disable.reason == DisabledReason::Failing {
            match disable.failing_since {
                Some(since) => {
                    values.push((":since", AttributeValue::S(sortable(since))));
                    "active = :true AND failing_since = :since"
                }
                None => "active = :true AND attribute_not_exists(failing_since)",
            }
        } else {
            "active = :true"
        };
        let items = vec![
            update(
                &self.table,
                UpdateSpec {
                    key: keys::webhook_key(&disable.brand_id, disable.webhook_id),
                    expression: "SET active = :false, disabled_reason = :reason, failing_since = if_not_exists(failing_since, :at)",
                    condition: Some(condition),
                    names: vec![],
                    values,
                },
            )?,
            put(
                &self.table,
                event_item(&disable.event),
                Some("attribute_not_exists(pk)"),
            )?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            // Absent, already disabled, or its run of failures changed.
            Err(err) if condition_failed_at(&err, 0) => Ok(false),
            Err(err) => Err(backend(err)),
        }
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
        // Enabling clears what disabled it and the run of failures; disabling by hand keeps
        // the reason of a webhook already off.
        let mut removes: Vec<&str> = Vec::new();
        match changes.active {
            Some(true) => {
                sets.push("active = :active");
                values.push((":active", AttributeValue::Bool(true)));
                removes.extend(["disabled_reason", "failing_since"]);
            }
            Some(false) => {
                sets.extend([
                    "active = :active",
                    "disabled_reason = if_not_exists(disabled_reason, :manual)",
                ]);
                values.extend([
                    (":active", AttributeValue::Bool(false)),
                    (
                        ":manual",
                        AttributeValue::S(DisabledReason::Manual.as_str().into()),
                    ),
                ]);
            }
            None => {}
        }
        if let Some(rotation) = &changes.rotation {
            sets.extend([
                "secret = :secret",
                "previous_secret = :previous",
                "previous_secret_expires_at = :expires",
                "secret_rotated_at = :rotated",
                "signing_key = :signing_key",
                "public_key = :public_key",
            ]);
            values.extend([
                (":secret", secret_value(&rotation.secret)),
                (":replaced", secret_value(&rotation.replaced)),
                (":previous", secret_value(&rotation.previous)),
                (
                    ":expires",
                    AttributeValue::S(sortable(rotation.replaced_expires_at)),
                ),
                (":rotated", AttributeValue::S(sortable(rotation.rotated_at))),
                (":signing_key", secret_value(&rotation.signing_key)),
                (
                    ":public_key",
                    AttributeValue::S(rotation.public_key.clone()),
                ),
            ]);
            match &rotation.previous_signing_key {
                Some(previous) => {
                    sets.push("previous_signing_key = :previous_signing_key");
                    values.push((":previous_signing_key", secret_value(previous)));
                }
                None => removes.push("previous_signing_key"),
            }
            condition.push_str(" AND secret = :replaced");
        }
        if sets.is_empty() {
            return Ok(match self.get_webhook(brand_id, webhook_id).await? {
                Some(webhook) => WebhookUpdate::Updated(Box::new(webhook)),
                None => WebhookUpdate::Absent,
            });
        }
        let mut expression = format!("SET {}", sets.join(", "));
        if !removes.is_empty() {
            expression.push_str(" REMOVE ");
            expression.push_str(&removes.join(", "));
        }
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
                Some(item) => webhook_from_item(&item)
                    .map(|webhook| WebhookUpdate::Updated(Box::new(webhook))),
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
