//! A brand's parked deliveries: one item each in the brand's `PARKED#` partition, sorted by
//! the time it was parked, so the oldest is the first of one `Query`. A claim is a conditional
//! write of `claimed_until` on the item (several claimed in one transaction); the item is
//! deleted once its delivery is attempted or back on the queue.
//! The brand's wake-up is one more item, in the due index while any delivery is parked, and
//! is written about once per slot lease, never per delivery. Parked items have no TTL: a
//! parked delivery leaves only for an attempt or the queue.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};

use super::delivery_slots::free_slots;
use super::items::{ItemExt, corrupt, s};
use super::keys::{self, sortable};
use super::requests::{UpdateSpec, any_condition_failed, applied, backend, retrying, update};
use super::{DynamoStore, Item};
use async_trait::async_trait;
use hosting_domain::ports::{
    BrandDeliveryState, Delivery, ParkedClaim, ParkedDelivery, ParkedDeliveryStore, ParkedWake,
    StoreResult,
};

/// Parked items a claim reads beyond those it wants: room for the few that others hold a
/// claim on (at most one hand-over per slot, and the sweep's).
const CLAIM_SCAN_SLACK: usize = 8;

fn parked_item(brand_id: &str, delivery: &Delivery, now: DateTime<Utc>) -> StoreResult<Item> {
    let sk = format!("{}#{}", sortable(now), uuid::Uuid::new_v4().simple());
    let mut item = keys::key(keys::parked_pk(brand_id), &sk);
    item.insert(
        "delivery".into(),
        s(serde_json::to_string(delivery).map_err(backend)?),
    );
    Ok(item)
}

impl DynamoStore {
    async fn read_brand_delivery_state(
        &self,
        brand_id: &str,
        slots: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<BrandDeliveryState> {
        let wake_key = keys::parked_wake_key(brand_id);
        let mut wanted: Vec<Item> = (0..slots)
            .map(|slot| keys::delivery_slot_key(brand_id, slot))
            .collect();
        wanted.push(wake_key.clone());
        let items = self.batch_get(wanted).await?;
        let wake_due = items
            .iter()
            .find(|item| item.get("pk") == wake_key.get("pk"))
            .map(|item| item.time("due"))
            .transpose()?;
        Ok(BrandDeliveryState {
            free_slots: free_slots(brand_id, slots, &items, now).len() as u32,
            wake_due,
        })
    }

    /// Claims one parked item for `claimer`.
    async fn claim_parked(
        &self,
        key: Item,
        claimer: &str,
        claim: &ParkedClaim,
    ) -> StoreResult<bool> {
        let spec = claim_spec(key, claimer, claim);
        applied(
            retrying(|| {
                let mut request = self
                    .client
                    .update_item()
                    .table_name(&self.table)
                    .set_key(Some(spec.key.clone()))
                    .update_expression(spec.expression)
                    .set_condition_expression(spec.condition.map(str::to_owned));
                for (name, value) in &spec.values {
                    request = request.expression_attribute_values(*name, value.clone());
                }
                request.send()
            })
            .await,
        )
    }
}

/// The conditional write of a claim: its own earlier write (an answer lost and the request
/// retried) counts as claimed.
fn claim_spec<'a>(key: Item, claimer: &str, claim: &ParkedClaim) -> UpdateSpec<'a> {
    UpdateSpec {
        key,
        expression: "SET claimed_until = :until, claimer = :claimer",
        condition: Some(
            "attribute_exists(pk) AND (attribute_not_exists(claimed_until) \
             OR claimed_until <= :now OR claimer = :claimer)",
        ),
        names: Vec::new(),
        values: vec![
            (":until", s(sortable(claim.until))),
            (":now", s(sortable(claim.now))),
            (":claimer", s(claimer)),
        ],
    }
}

#[async_trait]
impl ParkedDeliveryStore for DynamoStore {
    async fn park_deliveries(
        &self,
        brand_id: &str,
        deliveries: &[Delivery],
        slots: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<BrandDeliveryState> {
        let items = deliveries
            .iter()
            .map(|delivery| parked_item(brand_id, delivery, now))
            .collect::<StoreResult<Vec<_>>>()?;
        self.batch_write(items, Vec::new()).await?;
        self.read_brand_delivery_state(brand_id, slots, now).await
    }

    async fn brand_delivery_state(
        &self,
        brand_id: &str,
        slots: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<BrandDeliveryState> {
        self.read_brand_delivery_state(brand_id, slots, now).await
    }

    async fn claim_parked_deliveries(
        &self,
        brand_id: &str,
        claim: ParkedClaim,
    ) -> StoreResult<(Vec<ParkedDelivery>, bool)> {
        let scan = claim.offset + claim.limit + CLAIM_SCAN_SLACK;
        let items = self
            .query(
                None,
                "pk = :pk",
                vec![(":pk", AttributeValue::S(keys::parked_pk(brand_id)))],
                true,
                Some(scan),
            )
            .await?;
        let now_key = sortable(claim.now);
        // A full page may have more behind it; one claimed by another remains parked.
        let mut more = items.len() >= scan;
        let mut claimable = Vec::new();
        for item in items {
            let held = item
                .get("claimed_until")
                .and_then(|until| until.as_s().ok())
                .is_some_and(|until| *until > now_key);
            if held {
                more = true;
            } else {
                claimable.push(item);
            }
        }
        let start = claim
            .offset
            .min(claimable.len().saturating_sub(claim.limit));
        more |= claimable.len() > claim.limit;
        let chosen: Vec<Item> = claimable.drain(start..).take(claim.limit).collect();
        if chosen.is_empty() {
            return Ok((Vec::new(), more));
        }
        let claimer = uuid::Uuid::new_v4().simple().to_string();
        let keys_of = |item: &Item| -> StoreResult<Item> {
            Ok(keys::key(keys::parked_pk(brand_id), &item.string("sk")?))
        };
        // All at once, in one transaction; when another claimer took one of them first, one
        // by one.
        let updates = chosen
            .iter()
            .map(|item| update(&self.table, claim_spec(keys_of(item)?, &claimer, &claim)))
            .collect::<StoreResult<Vec<_>>>()?;
        let all = if updates.len() == 1 {
            self.claim_parked(keys_of(&chosen[0])?, &claimer, &claim)
                .await?
        } else {
            match self.transact(updates).await {
                Ok(()) => true,
                Err(err) if any_condition_failed(&err) => false,
                Err(err) => return Err(backend(err)),
            }
        };
        let mut claimed = Vec::with_capacity(chosen.len());
        for item in chosen {
            if !all && !self.claim_parked(keys_of(&item)?, &claimer, &claim).await? {
                // Another claimed it first (or it just left).
                more = true;
                continue;
            }
            let key = item.string("sk")?;
            let delivery: Delivery = serde_json::from_str(&item.string("delivery")?)
                .map_err(|err| corrupt(format!("parked delivery {key}: {err}")))?;
            claimed.push(ParkedDelivery { key, delivery });
        }
        Ok((claimed, more))
    }

    async fn remove_parked_deliveries(&self, brand_id: &str, keys: &[String]) -> StoreResult<()> {
        let deletes = keys
            .iter()
            .map(|key| keys::key(keys::parked_pk(brand_id), key))
            .collect();
        self.batch_write(Vec::new(), deletes).await
    }

    async fn set_parked_wake(&self, brand_id: &str, due: DateTime<Utc>) -> StoreResult<()> {
        let mut item = keys::parked_wake_key(brand_id);
        item.insert("brand_id".into(), s(brand_id));
        item.insert("due".into(), s(sortable(due)));
        item.insert(keys::DUE_PK.into(), s(keys::parked_wake_due_pk(brand_id)));
        item.insert(keys::DUE_SK.into(), s(keys::due_sk(due, brand_id)));
        self.put_item(item).await
    }

    async fn due_parked_wakes(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<ParkedWake>> {
        // The index lags the table: a wake-up read here is confirmed by its conditional clear.
        let mut due = self
            .due_before(keys::parked_wake_due_pks(), now, limit)
            .await?
            .iter()
            .map(|item| {
                Ok(ParkedWake {
                    brand_id: item.string("brand_id")?,
                    due: item.time("due")?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        due.sort_by_key(|wake| wake.due);
        due.truncate(limit);
        Ok(due)
    }

    async fn clear_parked_wake(&self, wake: &ParkedWake) -> StoreResult<bool> {
        applied(
            retrying(|| {
                self.client
                    .delete_item()
                    .table_name(&self.table)
                    .set_key(Some(keys::parked_wake_key(&wake.brand_id)))
                    // Absent counts as cleared: its own delete, its answer lost and retried (a
                    // racing sweep clearing it too only repeats harmless work).
                    .condition_expression("attribute_not_exists(pk) OR #due = :due")
                    .expression_attribute_names("#due", "due")
                    .expression_attribute_values(":due", s(sortable(wake.due)))
                    .send()
            })
            .await,
        )
    }
}
