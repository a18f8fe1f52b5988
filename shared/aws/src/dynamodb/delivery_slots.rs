//! A brand's delivery slots: one small item per slot, taken with a conditional write for the
//! length of one attempt and deleted after it. A holder that died frees its slot when its
//! time runs out; the item itself expires by TTL.

use aws_sdk_dynamodb::types::{AttributeValue, ConditionCheck, Delete, TransactWriteItem};
use chrono::{DateTime, TimeDelta, Utc};

use super::items::{n, s};
use super::keys::{self, sortable};
use super::requests::{applied, backend, condition_failed_at, retrying};
use super::table::TTL_ATTRIBUTE;
use super::{DynamoStore, Item};
use async_trait::async_trait;
use hosting_domain::ports::{DeliverySlotStore, StoreResult};

/// The slots of `slots` that none of the `held` slot items holds at `now`.
pub(super) fn free_slots(
    brand_id: &str,
    slots: u32,
    held: &[Item],
    now: DateTime<Utc>,
) -> Vec<u32> {
    let now_key = sortable(now);
    (0..slots)
        .filter(|slot| {
            let pk = keys::delivery_slot_key(brand_id, *slot)["pk"].clone();
            !held.iter().any(|item| {
                item.get("pk") == Some(&pk)
                    && item
                        .get("until")
                        .and_then(|until| until.as_s().ok())
                        .is_some_and(|until| *until > now_key)
            })
        })
        .collect()
}

impl DynamoStore {
    pub(super) async fn take_delivery_slot(
        &self,
        brand_id: &str,
        slots: u32,
        holder: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<u32>> {
        // One read finds the free slots, so a brand holding every one costs no write.
        let held: Vec<Item> = self
            .batch_get(
                (0..slots)
                    .map(|slot| keys::delivery_slot_key(brand_id, slot))
                    .collect(),
            )
            .await?;
        let mut free = free_slots(brand_id, slots, &held, now);
        // In a random order, so concurrent workers rarely contend for the same item.
        let start = rand::random_range(0..free.len().max(1)).min(free.len());
        free.rotate_left(start);
        for slot in free {
            let mut item = keys::delivery_slot_key(brand_id, slot);
            item.insert("holder".into(), s(holder));
            item.insert("until".into(), s(sortable(until)));
            item.insert(
                TTL_ATTRIBUTE.into(),
                n((until + TimeDelta::days(1)).timestamp()),
            );
            // Its own earlier write (an answer lost and the request retried) counts as taken.
            let taken = applied(
                retrying(|| {
                    self.client
                        .put_item()
                        .table_name(&self.table)
                        .set_item(Some(item.clone()))
                        .condition_expression(
                            "attribute_not_exists(pk) OR #until <= :now OR holder = :holder",
                        )
                        .expression_attribute_names("#until", "until")
                        .expression_attribute_values(":now", AttributeValue::S(sortable(now)))
                        .expression_attribute_values(":holder", s(holder))
                        .send()
                })
                .await,
            )?;
            if taken {
                return Ok(Some(slot));
            }
        }
        Ok(None)
    }

    pub(super) async fn free_delivery_slot(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
    ) -> StoreResult<()> {
        applied(
            retrying(|| {
                self.client
                    .delete_item()
                    .table_name(&self.table)
                    .set_key(Some(keys::delivery_slot_key(brand_id, slot)))
                    .condition_expression("holder = :holder")
                    .expression_attribute_values(":holder", s(holder))
                    .send()
            })
            .await,
        )
        .map(drop)
    }
}

#[async_trait]
impl DeliverySlotStore for DynamoStore {
    async fn release_delivery_slot_unless_parked(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
    ) -> StoreResult<bool> {
        // One transaction: the slot's delete and the check that no wake-up is set happen at one
        // instant, so a delivery parked just before is handed this slot, and one parked just
        // after finds it free.
        let release = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(keys::delivery_slot_key(brand_id, slot)))
            .condition_expression("holder = :holder")
            .expression_attribute_values(":holder", s(holder))
            .build()
            .map_err(backend)?;
        let nothing_parked = ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(keys::parked_wake_key(brand_id)))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(backend)?;
        match self
            .transact(vec![
                TransactWriteItem::builder().delete(release).build(),
                TransactWriteItem::builder()
                    .condition_check(nothing_parked)
                    .build(),
            ])
            .await
        {
            Ok(()) => Ok(true),
            // No longer its slot: nothing to release or hand over.
            Err(err) if condition_failed_at(&err, 0) => Ok(true),
            Err(err) if condition_failed_at(&err, 1) => Ok(false),
            Err(err) => Err(backend(err)),
        }
    }

    async fn extend_delivery_slot(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
        until: DateTime<Utc>,
    ) -> StoreResult<bool> {
        applied(
            retrying(|| {
                self.client
                    .update_item()
                    .table_name(&self.table)
                    .set_key(Some(keys::delivery_slot_key(brand_id, slot)))
                    .update_expression("SET #until = :until, #ttl = :ttl")
                    .condition_expression("holder = :holder")
                    .expression_attribute_names("#until", "until")
                    .expression_attribute_names("#ttl", TTL_ATTRIBUTE)
                    .expression_attribute_values(":until", s(sortable(until)))
                    .expression_attribute_values(
                        ":ttl",
                        n((until + TimeDelta::days(1)).timestamp()),
                    )
                    .expression_attribute_values(":holder", s(holder))
                    .send()
            })
            .await,
        )
    }

    async fn acquire_delivery_slot(
        &self,
        brand_id: &str,
        slots: u32,
        holder: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<u32>> {
        self.take_delivery_slot(brand_id, slots, holder, now, until)
            .await
    }

    async fn release_delivery_slot(
        &self,
        brand_id: &str,
        slot: u32,
        holder: &str,
    ) -> StoreResult<()> {
        self.free_delivery_slot(brand_id, slot, holder).await
    }
}
