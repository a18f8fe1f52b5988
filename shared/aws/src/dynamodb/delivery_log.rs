//! Webhook delivery logs (the layout is in `keys.rs`): each attempt in four partitions, one
//! per filter, so a page of any filter is one range read of about `limit` items; each event's
//! body once per webhook; and the deliveries that ended failed, by their event's creation, for
//! recovery. Everything expires by TTL after the retention.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::items::{ItemExt, corrupt, n, s};
use super::keys::{self, sortable};
use super::requests::{applied, backend, retrying};
use super::table::TTL_ATTRIBUTE;
use super::{DynamoStore, Item};
use async_trait::async_trait;
use hosting_domain::delivery_log::{
    AttemptFilter, AttemptStatus, DeliveredEvent, DeliveryAttempt, RETENTION,
};
use hosting_domain::ports::{DeliveryLogStore, StoreResult};
use hosting_support::admission;

/// How long a recovery call holds the failed deliveries it took, longer than any function
/// runs; and how many it leases at once.
const FAILED_LEASE: chrono::TimeDelta = chrono::TimeDelta::minutes(5);
const LEASES_IN_FLIGHT: usize = 16;

fn status_name(status: AttemptStatus) -> &'static str {
    match status {
        AttemptStatus::Succeeded => "succeeded",
        AttemptStatus::Failed => "failed",
    }
}

fn attempt_item(pk: String, attempt: &DeliveryAttempt) -> Item {
    let mut item = keys::key(pk, &attempt.position());
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
    })
}

/// The event's fields, on its item and on a failed delivery's, expiring at `expires`.
fn event_item(mut item: Item, event: &DeliveredEvent, expires: DateTime<Utc>) -> Item {
    item.insert("brand_id".into(), s(&event.brand_id));
    item.insert("webhook_id".into(), s(event.webhook_id.to_string()));
    item.insert("event_id".into(), s(&event.event_id));
    item.insert("event_type".into(), s(event.event_type.as_str()));
    item.insert(
        "event_created_at".into(),
        s(sortable(event.event_created_at)),
    );
    item.insert("body".into(), s(&event.body));
    item.insert(TTL_ATTRIBUTE.into(), n(expires.timestamp()));
    item
}

fn event_from_item(item: &Item) -> StoreResult<DeliveredEvent> {
    Ok(DeliveredEvent {
        brand_id: item.string("brand_id")?,
        webhook_id: Uuid::parse_str(&item.string("webhook_id")?)
            .map_err(|_| corrupt("event webhook id"))?,
        event_id: item.string("event_id")?,
        event_type: serde_json::from_value(serde_json::Value::String(item.string("event_type")?))
            .map_err(|_| corrupt("event type"))?,
        event_created_at: item.time("event_created_at")?,
        body: item.string("body")?,
    })
}

fn failed_item(event: &DeliveredEvent) -> Item {
    event_item(
        keys::failed_delivery_key(event.webhook_id, event.event_created_at, &event.event_id),
        event,
        event.event_created_at + RETENTION,
    )
}

impl DynamoStore {
    /// The attempt in its four partitions, the event's item, and the failed delivery when the
    /// attempt ended one: one `BatchWriteItem`.
    pub(super) async fn put_attempt(
        &self,
        attempt: &DeliveryAttempt,
        event: &DeliveredEvent,
    ) -> StoreResult<()> {
        let status = Some(status_name(if attempt.succeeded {
            AttemptStatus::Succeeded
        } else {
            AttemptStatus::Failed
        }));
        let event_id = Some(attempt.event_id.as_str());
        let mut puts: Vec<Item> = [
            (None, None),
            (status, None),
            (None, event_id),
            (status, event_id),
        ]
        .into_iter()
        .map(|(status, event_id)| {
            attempt_item(
                keys::attempts_pk(attempt.webhook_id, status, event_id),
                attempt,
            )
        })
        .collect();
        let mut delivered = event_item(
            keys::delivered_event_key(attempt.webhook_id, &attempt.event_id),
            event,
            attempt.attempted_at + RETENTION,
        );
        delivered.insert("attempted_at".into(), s(sortable(attempt.attempted_at)));
        puts.push(delivered);
        if attempt.ended_failed() {
            puts.push(failed_item(event));
        }
        self.batch_write(puts, Vec::new()).await
    }

    /// Newest first, before `after`; one `Query` of `limit` items. TTL deletes lag, so the
    /// horizon is part of the range.
    pub(super) async fn attempts_page(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        filter: &AttemptFilter,
        since: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<DeliveryAttempt>> {
        let pk = keys::attempts_pk(
            webhook_id,
            filter.status.map(status_name),
            filter.event_id.as_deref(),
        );
        let since = sortable(since);
        // DynamoDB refuses a start key outside the range: a cursor that aged out of the
        // window has nothing after it.
        if after.is_some_and(|after| after < since.as_str()) {
            return Ok(Vec::new());
        }
        let start = after.map(|after| keys::key(pk.clone(), after));
        let limit = i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000);
        let out = retrying(|| {
            self.client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk AND sk >= :since")
                .expression_attribute_values(":pk", s(&pk))
                .expression_attribute_values(":since", s(&since))
                .scan_index_forward(false)
                .set_exclusive_start_key(start.clone())
                .limit(limit)
                .send()
        })
        .await
        .map_err(backend)?;
        out.items
            .unwrap_or_default()
            .iter()
            .map(attempt_from_item)
            .filter(|a| a.as_ref().map_or(true, |a| a.brand_id == brand_id))
            .collect()
    }

    pub(super) async fn get_delivered_event(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        event_id: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Option<DeliveredEvent>> {
        let Some(item) = self
            .get(keys::delivered_event_key(webhook_id, event_id))
            .await?
        else {
            return Ok(None);
        };
        let event = event_from_item(&item)?;
        let recent = item.time("attempted_at")? >= since;
        Ok((recent && event.brand_id == brand_id).then_some(event))
    }

    /// One `Query` of up to `limit` failed deliveries (and one more, to know there are more),
    /// then each leased with a conditional
    /// update, a few at once: a lease held by another call is skipped, and the lease's token
    /// makes a retry after a lost answer find the lease its first try took. The caller settles
    /// (deletes) what it queued, or puts it back; a lease whose caller died lapses after
    /// [`FAILED_LEASE`].
    pub(super) async fn take_failed(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<(Vec<DeliveredEvent>, bool)> {
        let values = vec![
            (":pk", s(keys::failed_deliveries_pk(webhook_id))),
            (":since", s(sortable(since))),
        ];
        let items = self
            .query(
                None,
                "pk = :pk AND sk >= :since",
                values,
                true,
                Some(limit + 1),
            )
            .await?;
        let more = items.len() > limit;
        let mut candidates = Vec::with_capacity(items.len());
        for item in items.iter().take(limit) {
            let leased = item
                .opt_time("leased_until")?
                .is_some_and(|until| until > now);
            let event = event_from_item(item)?;
            if event.brand_id == brand_id && !leased {
                candidates.push(event);
            }
        }
        let token = Uuid::new_v4().to_string();
        let until = now + FAILED_LEASE;
        let mut taken = Vec::with_capacity(candidates.len());
        for chunk in candidates.chunks(LEASES_IN_FLIGHT) {
            let mut in_flight = tokio::task::JoinSet::new();
            for (index, event) in chunk.iter().enumerate() {
                let store = self.clone();
                let key =
                    keys::failed_delivery_key(webhook_id, event.event_created_at, &event.event_id);
                let token = token.clone();
                in_flight.spawn(async move {
                    let leased = retrying(|| {
                        store
                            .client
                            .update_item()
                            .table_name(&store.table)
                            .set_key(Some(key.clone()))
                            .update_expression("SET leased_by = :token, leased_until = :until")
                            .condition_expression(
                                "attribute_exists(pk) AND (attribute_not_exists(leased_until) \
                                 OR leased_until <= :now OR leased_by = :token)",
                            )
                            .expression_attribute_values(":token", s(&token))
                            .expression_attribute_values(":until", s(sortable(until)))
                            .expression_attribute_values(":now", s(sortable(now)))
                            .send()
                    })
                    .await;
                    (index, applied(leased))
                });
            }
            let mut won = vec![false; chunk.len()];
            while let Some(done) = in_flight.join_next().await {
                let (index, result) = done.map_err(backend)?;
                won[index] = result?;
            }
            taken.extend(
                chunk
                    .iter()
                    .zip(won)
                    .filter(|(_, won)| *won)
                    .map(|(event, _)| event.clone()),
            );
        }
        Ok((taken, more))
    }

    /// Deletes failed deliveries (taken and queued, or redelivered by id).
    pub(super) async fn delete_failed(&self, events: &[DeliveredEvent]) -> StoreResult<()> {
        let keys = events
            .iter()
            .map(|event| {
                keys::failed_delivery_key(event.webhook_id, event.event_created_at, &event.event_id)
            })
            .collect();
        self.batch_write(Vec::new(), keys).await
    }

    /// Puts failed deliveries back, unleased.
    pub(super) async fn put_failed(&self, events: &[DeliveredEvent]) -> StoreResult<()> {
        self.batch_write(events.iter().map(failed_item).collect(), Vec::new())
            .await
    }
}

#[async_trait]
impl DeliveryLogStore for DynamoStore {
    async fn record_attempt(
        &self,
        attempt: &DeliveryAttempt,
        event: &DeliveredEvent,
    ) -> StoreResult<()> {
        self.put_attempt(attempt, event).await
    }

    async fn delivery_attempts(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        filter: &AttemptFilter,
        since: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<DeliveryAttempt>> {
        admission::admitted().await;
        self.attempts_page(brand_id, webhook_id, filter, since, after, limit)
            .await
    }

    async fn delivered_event(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        event_id: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Option<DeliveredEvent>> {
        self.get_delivered_event(brand_id, webhook_id, event_id, since)
            .await
    }

    async fn take_failed_deliveries(
        &self,
        brand_id: &str,
        webhook_id: Uuid,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<(Vec<DeliveredEvent>, bool)> {
        self.take_failed(brand_id, webhook_id, since, now, limit)
            .await
    }

    async fn settle_failed_deliveries(&self, events: &[DeliveredEvent]) -> StoreResult<()> {
        self.delete_failed(events).await
    }

    async fn restore_failed_deliveries(&self, events: &[DeliveredEvent]) -> StoreResult<()> {
        self.put_failed(events).await
    }
}
