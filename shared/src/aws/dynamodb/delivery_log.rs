//! Webhook delivery logs: one partition per webhook (`ATTEMPTS#<id>`), one item per attempt
//! sorted by time, each expiring by TTL after the retention.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::items::{ItemExt, corrupt, n, s};
use super::keys::{self, sortable};
use super::requests::{backend, retrying};
use super::table::TTL_ATTRIBUTE;
use super::{DynamoStore, Item};
use crate::domain::delivery_log::{DeliveryAttempt, RETENTION};
use crate::ports::StoreResult;

fn attempt_item(attempt: &DeliveryAttempt) -> Item {
    let mut item = keys::attempt_key(
        attempt.webhook_id,
        attempt.attempted_at,
        &attempt.event_id,
        attempt.attempt,
    );
    item.insert("brand_id".into(), s(&attempt.brand_id));
    item.insert("webhook_id".into(), s(attempt.webhook_id.to_string()));
    item.insert("event_id".into(), s(&attempt.event_id));
    item.insert("event_type".into(), s(attempt.event_type.as_str()));
    item.insert(
        "event_created_at".into(),
        s(sortable(attempt.event_created_at)),
    );
    item.insert("attempt".into(), n(attempt.attempt));
    item.insert("attempted_at".into(), s(sortable(attempt.attempted_at)));
    item.insert("succeeded".into(), AttributeValue::Bool(attempt.succeeded));
    if let Some(status) = attempt.response_status {
        item.insert("response_status".into(), n(status));
    }
    item.insert("duration_ms".into(), n(attempt.duration_ms));
    if let Some(error) = &attempt.error {
        item.insert("error".into(), s(error));
    }
    if let Some(next) = attempt.next_attempt_at {
        item.insert("next_attempt_at".into(), s(sortable(next)));
    }
    item.insert("body".into(), s(&attempt.body));
    item.insert(
        TTL_ATTRIBUTE.into(),
        n((attempt.attempted_at + RETENTION).timestamp()),
    );
    item
}

fn attempt_from_item(item: &Item) -> StoreResult<DeliveryAttempt> {
    let event_type = item.string("event_type")?;
    Ok(DeliveryAttempt {
        brand_id: item.string("brand_id")?,
        webhook_id: Uuid::parse_str(&item.string("webhook_id")?)
            .map_err(|_| corrupt("attempt webhook id"))?,
        event_id: item.string("event_id")?,
        // By name, `webhook.test` included.
        event_type: serde_json::from_value(serde_json::Value::String(event_type))
            .map_err(|_| corrupt("attempt event type"))?,
        event_created_at: item.time("event_created_at")?,
        attempt: u32::try_from(item.number("attempt")?).map_err(|_| corrupt("attempt number"))?,
        attempted_at: item.time("attempted_at")?,
        succeeded: item.boolean("succeeded"),
        response_status: item
            .opt_number("response_status")
            .and_then(|status| u16::try_from(status).ok()),
        duration_ms: u64::try_from(item.number("duration_ms")?).unwrap_or_default(),
        error: item.opt_string("error"),
        next_attempt_at: item.opt_time("next_attempt_at")?,
        body: item.string("body")?,
    })
}

impl DynamoStore {
    pub(super) async fn put_attempt(&self, attempt: &DeliveryAttempt) -> StoreResult<()> {
        let item = attempt_item(attempt);
        retrying(|| {
            self.client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item.clone()))
                .send()
        })
        .await
        .map(drop)
        .map_err(backend)
    }

    /// Newest first. TTL deletes lag, so the horizon is applied here too.
    pub(super) async fn attempts_since(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<DeliveryAttempt>> {
        let values = vec![
            (":pk", s(keys::attempts_pk(webhook_id))),
            (":since", s(sortable(since))),
        ];
        let items = self
            .query(None, "pk = :pk AND sk >= :since", values, true, None)
            .await?;
        let mut attempts = items
            .iter()
            .map(attempt_from_item)
            .filter(|a| a.as_ref().map_or(true, |a| a.brand_id == brand_id))
            .collect::<StoreResult<Vec<_>>>()?;
        attempts.reverse();
        Ok(attempts)
    }
}
