//! Pending room cleanups: one item per finished stream whose room is not yet confirmed deleted,
//! in the due index under `CLEANUP#<shard>` by when its next attempt is due. The transition
//! that finishes a stream writes it in its transaction; the sweep reads it from the index and
//! settles it with a write conditional on the attempt it read.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::items::{ItemExt, corrupt, n, s};
use super::keys::{self, sortable};
use super::requests::{applied, retrying};
use super::{DynamoStore, Item};
use async_trait::async_trait;
use hosting_domain::RoomCleanup;
use hosting_domain::ports::{RoomCleanupStore, StoreResult};

pub(super) fn cleanup_item(cleanup: &RoomCleanup) -> Item {
    let id = cleanup.stream_id.to_string();
    let mut item = keys::room_cleanup_key(cleanup.stream_id);
    item.insert("stream_id".into(), s(&id));
    item.insert("brand_id".into(), s(&cleanup.brand_id));
    item.insert("room_name".into(), s(&cleanup.room_name));
    item.insert("since".into(), s(sortable(cleanup.since)));
    item.insert("due_at".into(), s(sortable(cleanup.due_at)));
    item.insert("attempts".into(), n(cleanup.attempts));
    item.insert("hold_until".into(), s(sortable(cleanup.hold_until)));
    if let Some(egress_id) = &cleanup.file_egress_id {
        item.insert("file_egress_id".into(), s(egress_id));
    }
    if let Some(egress_id) = &cleanup.egress_id {
        item.insert("egress_id".into(), s(egress_id));
    }
    if cleanup.erase_keys {
        item.insert("erase_keys".into(), AttributeValue::Bool(true));
    }
    item.insert(
        keys::DUE_PK.into(),
        s(keys::room_cleanup_pk(cleanup.stream_id)),
    );
    item.insert(keys::DUE_SK.into(), s(keys::due_sk(cleanup.due_at, &id)));
    item
}

fn cleanup_from_item(item: &Item) -> StoreResult<RoomCleanup> {
    Ok(RoomCleanup {
        stream_id: Uuid::parse_str(&item.string("stream_id")?)
            .map_err(|_| corrupt("room cleanup stream id"))?,
        brand_id: item.string("brand_id")?,
        room_name: item.string("room_name")?,
        since: item.time("since")?,
        due_at: item.time("due_at")?,
        attempts: u32::try_from(item.number("attempts")?).unwrap_or(u32::MAX),
        hold_until: item.time("hold_until")?,
        egress_id: item.opt_string("egress_id"),
        file_egress_id: item.opt_string("file_egress_id"),
        erase_keys: item.boolean("erase_keys"),
    })
}

impl DynamoStore {
    pub(super) async fn read_due_room_cleanups(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<RoomCleanup>> {
        // The index projects whole items; one that lags the table costs at most a repeated
        // deletion, which the provider confirms as gone, and its settling write is refused.
        let mut due = self
            .due_before(keys::room_cleanup_pks(), now, limit)
            .await?
            .iter()
            .map(cleanup_from_item)
            .collect::<StoreResult<Vec<_>>>()?;
        due.sort_by_key(|cleanup| cleanup.due_at);
        due.truncate(limit);
        Ok(due)
    }

    pub(super) async fn write_room_cleanup(&self, cleanup: &RoomCleanup) -> StoreResult<()> {
        self.put_item(cleanup_item(cleanup)).await
    }

    pub(super) async fn settle_cleanup(
        &self,
        read: &RoomCleanup,
        next: Option<&RoomCleanup>,
    ) -> StoreResult<()> {
        // Conditional on the attempt as read: a cleanup re-armed meanwhile (a room seen in use
        // again) has another due time and stays.
        let condition = "due_at = :read_due_at";
        let read_due_at = AttributeValue::S(sortable(read.due_at));
        let settled = match next {
            Some(next) => {
                let item = cleanup_item(next);
                applied(
                    retrying(|| {
                        self.client
                            .put_item()
                            .table_name(&self.table)
                            .set_item(Some(item.clone()))
                            .condition_expression(condition)
                            .expression_attribute_values(":read_due_at", read_due_at.clone())
                            .send()
                    })
                    .await,
                )?
            }
            None => applied(
                retrying(|| {
                    self.client
                        .delete_item()
                        .table_name(&self.table)
                        .set_key(Some(keys::room_cleanup_key(read.stream_id)))
                        .condition_expression(condition)
                        .expression_attribute_values(":read_due_at", read_due_at.clone())
                        .send()
                })
                .await,
            )?,
        };
        if !settled {
            tracing::debug!(stream_id = %read.stream_id, "room cleanup re-armed meanwhile; left as it is");
        }
        Ok(())
    }
}

#[async_trait]
impl RoomCleanupStore for DynamoStore {
    async fn due_room_cleanups(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<RoomCleanup>> {
        self.read_due_room_cleanups(now, limit).await
    }

    async fn put_room_cleanup(&self, cleanup: &RoomCleanup) -> StoreResult<()> {
        self.write_room_cleanup(cleanup).await
    }

    async fn settle_room_cleanup(
        &self,
        read: &RoomCleanup,
        next: Option<&RoomCleanup>,
    ) -> StoreResult<()> {
        self.settle_cleanup(read, next).await
    }
}
