//! Clips: one item per clip in its stream's partition (`STREAM#<id>` / `CLIP#<clip id>`), and
//! the stream's clip count beside them (`STREAM#<id>` / `CLIPS`), which makes the limit
//! atomic without touching the stream item its transitions write. A clip owed work (its cut,
//! or a deleted clip's object) is in the due index under `CLIP#<shard>` by when it is due;
//! the sweep confirms each entry with a consistent read before acting. Every write after the
//! creation is conditional on the version it read.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::items::{ItemExt, corrupt, event_item, n, s};
use super::keys::{self, sortable};
use super::requests::{backend, condition_failed_at, retrying};
use super::transact_items::{UpdateSpec, put, update};
use super::{DynamoStore, Item};
use async_trait::async_trait;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use hosting_domain::StreamEvent;
use hosting_domain::clip::{Clip, ClipSource, ClipStatus, sort_oldest_first};
use hosting_domain::ports::{ClipStore, CreateClipOutcome, IdempotencyBinding, StoreResult};

const CLIP_SK_PREFIX: &str = "CLIP#";

fn clip_key(stream_id: Uuid, clip_id: &str) -> Item {
    keys::key(
        keys::stream_pk(stream_id),
        &format!("{CLIP_SK_PREFIX}{clip_id}"),
    )
}

fn clip_count_key(stream_id: Uuid) -> Item {
    keys::key(keys::stream_pk(stream_id), "CLIPS")
}

fn clip_item(clip: &Clip) -> Item {
    let mut item = clip_key(clip.stream_id, &clip.id);
    item.insert("clip_id".into(), s(&clip.id));
    item.insert("stream_id".into(), s(clip.stream_id.to_string()));
    item.insert("brand_id".into(), s(&clip.brand_id));
    if clip.test {
        item.insert("test".into(), AttributeValue::Bool(true));
    }
    if let Some(title) = &clip.title {
        item.insert("title".into(), s(title));
    }
    item.insert("start_seconds".into(), n(clip.start_seconds));
    item.insert("end_seconds".into(), n(clip.end_seconds));
    item.insert("status".into(), s(clip.status.as_str()));
    item.insert("source_key".into(), s(&clip.source.key));
    item.insert("source_offset".into(), n(clip.source.offset_seconds));
    item.insert("source_ready_at".into(), s(sortable(clip.source.ready_at)));
    if let Some(duration) = clip.duration_seconds {
        item.insert("duration_seconds".into(), n(duration));
    }
    if let Some(size) = clip.size_bytes {
        item.insert("size_bytes".into(), n(size));
    }
    if let Some(error) = &clip.error {
        item.insert("error".into(), s(error));
    }
    item.insert("created_at".into(), s(sortable(clip.created_at)));
    item.insert("attempts".into(), n(clip.attempts));
    item.insert("version".into(), n(clip.version));
    if let Some(due) = clip.due_at {
        item.insert("due_at".into(), s(sortable(due)));
        let shard_of = keys::clip_due_pk(&clip.id);
        item.insert(keys::DUE_PK.into(), s(shard_of));
        item.insert(keys::DUE_SK.into(), s(keys::due_sk(due, &clip.id)));
    }
    item
}

fn float(item: &Item, name: &str) -> StoreResult<f64> {
    match item.get(name) {
        Some(AttributeValue::N(raw)) => raw.parse().map_err(|_| corrupt(format!("clip {name}"))),
        _ => Err(corrupt(format!("clip without {name}"))),
    }
}

fn clip_from_item(item: &Item) -> StoreResult<Clip> {
    let status = item.string("status")?;
    Ok(Clip {
        id: item.string("clip_id")?,
        stream_id: Uuid::parse_str(&item.string("stream_id")?)
            .map_err(|_| corrupt("clip stream id"))?,
        brand_id: item.string("brand_id")?,
        test: item.boolean("test"),
        title: item.opt_string("title"),
        start_seconds: float(item, "start_seconds")?,
        end_seconds: float(item, "end_seconds")?,
        status: ClipStatus::parse(&status).ok_or_else(|| corrupt("clip status"))?,
        source: ClipSource {
            key: item.string("source_key")?,
            offset_seconds: float(item, "source_offset")?,
            ready_at: item.time("source_ready_at")?,
        },
        duration_seconds: item
            .contains_key("duration_seconds")
            .then(|| float(item, "duration_seconds"))
            .transpose()?,
        size_bytes: item.opt_number("size_bytes").map(|n| n.max(0) as u64),
        error: item.opt_string("error"),
        created_at: item.time("created_at")?,
        attempts: u32::try_from(item.number("attempts")?).unwrap_or(u32::MAX),
        due_at: item.opt_time("due_at")?,
        version: u64::try_from(item.number("version")?).unwrap_or(0),
    })
}

#[async_trait]
impl ClipStore for DynamoStore {
    async fn create_clip(
        &self,
        clip: &Clip,
        max: u32,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateClipOutcome> {
        let mut items = vec![
            update(
                &self.table,
                UpdateSpec {
                    key: clip_count_key(clip.stream_id),
                    expression: "SET clips = if_not_exists(clips, :zero) + :one",
                    condition: Some("attribute_not_exists(clips) OR clips < :max"),
                    names: vec![],
                    values: vec![(":zero", n(0)), (":one", n(1)), (":max", n(max))],
                },
            )?,
            put(
                &self.table,
                clip_item(clip),
                Some("attribute_not_exists(pk)"),
            )?,
        ];
        if let Some(binding) = binding {
            items.push(super::idempotency::binding_item(
                &self.table,
                binding,
                &clip.id,
            )?);
        }
        match self.transact(items).await {
            Ok(()) => Ok(CreateClipOutcome::Created),
            Err(err) if binding.is_some() && condition_failed_at(&err, 2) => {
                Ok(CreateClipOutcome::KeyLost)
            }
            Err(err) if condition_failed_at(&err, 0) => Ok(CreateClipOutcome::Limit),
            Err(err) => Err(backend(err)),
        }
    }

    async fn stream_clips(&self, stream_id: Uuid) -> StoreResult<Vec<Clip>> {
        // At most 50 items of a few hundred bytes: one page.
        let mut clips = self
            .query_partition(&keys::stream_pk(stream_id), Some(CLIP_SK_PREFIX))
            .await?
            .iter()
            .map(clip_from_item)
            .collect::<StoreResult<Vec<_>>>()?;
        sort_oldest_first(&mut clips);
        Ok(clips)
    }

    async fn get_clip(&self, stream_id: Uuid, clip_id: &str) -> StoreResult<Option<Clip>> {
        self.get(clip_key(stream_id, clip_id))
            .await?
            .as_ref()
            .map(clip_from_item)
            .transpose()
    }

    async fn replace_clip(
        &self,
        read: &Clip,
        next: &Clip,
        event: Option<&StreamEvent>,
    ) -> StoreResult<bool> {
        let condition = "version = :read_version";
        let read_version = n(read.version);
        let Some(event) = event else {
            // One item: a conditional PutItem, half a transaction's write capacity. A retry
            // after an answer lost once the write was applied finds the item as written (its
            // condition then fails on the version it bumped): applied all the same.
            let item = clip_item(next);
            let result = retrying(|| {
                self.client
                    .put_item()
                    .table_name(&self.table)
                    .set_item(Some(item.clone()))
                    .condition_expression(condition)
                    .expression_attribute_values(":read_version", read_version.clone())
                    .return_values_on_condition_check_failure(
                        aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld,
                    )
                    .send()
            })
            .await;
            return match result {
                Ok(_) => Ok(true),
                Err(err) => match err.as_service_error() {
                    Some(PutItemError::ConditionalCheckFailedException(failed)) => {
                        Ok(failed.item() == Some(&item))
                    }
                    _ => Err(backend(err)),
                },
            };
        };
        let replace = aws_sdk_dynamodb::types::Put::builder()
            .table_name(&self.table)
            .set_item(Some(clip_item(next)))
            .condition_expression(condition)
            .expression_attribute_values(":read_version", read_version)
            .build()
            .map_err(backend)?;
        let items = vec![
            aws_sdk_dynamodb::types::TransactWriteItem::builder()
                .put(replace)
                .build(),
            put(
                &self.table,
                event_item(event),
                Some("attribute_not_exists(pk)"),
            )?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(err) if condition_failed_at(&err, 0) => Ok(false),
            Err(err) => Err(backend(err)),
        }
    }

    async fn due_clips(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Clip>> {
        let due: Vec<Clip> = self
            .due_before(keys::clip_due_pks(), now, limit)
            .await?
            .iter()
            .map(clip_from_item)
            .collect::<StoreResult<Vec<_>>>()?;
        // The index lags the table: each is read again, and only what is still due is kept.
        let mut confirmed = Vec::with_capacity(due.len());
        for clip in due {
            if let Some(clip) = self.get_clip(clip.stream_id, &clip.id).await?
                && clip.due_at.is_some_and(|due| due <= now)
            {
                confirmed.push(clip);
            }
        }
        confirmed.sort_by_key(|clip| clip.due_at);
        confirmed.truncate(limit);
        Ok(confirmed)
    }
}
