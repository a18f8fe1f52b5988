//! A live stream's viewer count, kept off the stream item (docs/lifecycle.md, "Viewer counts").
//!
//! A busy show sends a join or a leave many times a second. DynamoDB cancels one of two
//! transactions that overlap on an item, caps the write rate of one item, and caps the writes
//! of one partition key (1,000 write units a second; a transactional write of a small item
//! costs 2). So no viewer event writes the stream item, its position copy or the due index.
//! Each one is a transaction of two items: an `ADD` of ±1 to one of [`VIEWER_SHARDS`] counter
//! items, drawn at random, and the provider event's dedupe record. The shards are spread over
//! [`VIEWER_PARTITIONS`] partition keys (`VIEWERS#<id>#<p>`, `VIEWERS#<nn>`, shard `nn` in
//! partition `nn % 8`), so a stream takes 8 partitions' writes, about 4,000 viewer events a
//! second. Two events conflict only when they draw the same shard at the same moment; a
//! conflict or a throttled partition is retried on a newly drawn shard.
//!
//! No viewer event reads a shard (its read of the stream leaves the count out): a viewer event
//! is that read and its transaction, two requests. The floor at zero is taken where the count
//! is read: leaves beyond joins (a join LiveKit never sent, a leave delivered before its join)
//! take the sum below zero, which reads as zero, and the read that finds it there settles it
//! at zero ([`DynamoStore::settle_at_zero`]: the deficit added to the stream's floor item, on
//! condition of the floor as read, so racing reads settle it once), so a join after that read
//! counts from zero, as it would had the leave not been counted. A live read-back moves the
//! sum to the room's count as LiveKit reports it ([`DynamoStore::report_viewers`]), by the
//! difference, on one shard, as an event would.
//!
//! While the stream is `live`, its count is the stream item's `viewer_count` (the base: set at
//! creation, by seeding and by the test helper) plus the shards' sum, never below zero; a read
//! of a live stream adds the shards up (one `Query` per partition, in flight together, each
//! of at most 8 small items; bounded per page by the plan's concurrent streams, and sent
//! alongside the page's own read: the brand's counters name its live streams' ids). A
//! transition that finishes the stream writes that sum into the stream item and its position
//! copy as the final count, and from then on the shards are never read again: what a late
//! event adds to them changes nothing. No transition is conditional on the count.
//!
//! Shards written before the spread sit under the stream's own partition (`STREAM#<id>`,
//! `VIEWERS#<nn>`). A read of one stream still adds them (its query of the stream item reads
//! them in the same request), so a stream live across an upgrade ends with its exact count.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::TransactWriteItem;
use chrono::{DateTime, Utc};
use tokio::task::JoinSet;
use uuid::Uuid;

use super::items::{ItemExt, n, s};
use super::keys;
use super::requests::{
    UpdateSpec, backend, backoff, condition_failed_at, is_conflict, is_throttled, put, update,
};
use super::streams::dedupe_item;
use super::table::TTL_ATTRIBUTE;
use super::{DynamoStore, Item};
use hosting_domain::ports::{Outcome, StoreResult};
use hosting_domain::{Stream, StreamStatus};

/// Counter items per live stream. An event conflicts when it draws a shard another event in
/// flight holds: about one in 64 per event in flight at once (retried).
pub(super) const VIEWER_SHARDS: u32 = 64;
/// Partition keys the shards are spread over: each takes about 500 viewer events a second,
/// and a read of the count is one small `Query` of each, in flight together (BENCHMARKS.md,
/// "A popular show").
pub(super) const VIEWER_PARTITIONS: u32 = 8;
/// Draws of a shard for one event: a conflict draws another at once.
const SHARD_DRAWS: u32 = 12;
/// The counter's attribute on a shard item.
const COUNT: &str = "viewers";
/// The sort key of a stream's floor item, in its shards' partition 0: a counter item like
/// them (summed with them), which only reads that found the count below zero write.
const FLOOR_SK: &str = "VIEWERS#floor";
/// How long a shard is kept after its last change: once the stream finished nothing reads it,
/// and a stream is live at most 8 hours (480 minutes), so TTL deletes it days after its end,
/// never while it counts.
const SHARD_TTL: chrono::Duration = chrono::Duration::days(2);

impl DynamoStore {
    /// A stream with its count as of now: one `Query` of its partition from the stream item
    /// on (shards written before the spread sort after it, its script before), then, if it is
    /// live, its shards.
    pub(super) async fn stream_with_viewers(&self, stream_id: Uuid) -> StoreResult<Option<Stream>> {
        let Some((mut stream, earlier_shards)) = self.stream_and_earlier_shards(stream_id).await?
        else {
            return Ok(None);
        };
        if stream.status == StreamStatus::Live {
            let mut shards = self.viewer_shards(stream_id).await?;
            shards.sum = shards.sum.saturating_add(earlier_shards);
            self.settle_at_zero(stream_id, stream.viewer_count, shards)
                .await;
            stream.viewer_count = count_of(stream.viewer_count, shards.sum);
        }
        Ok(Some(stream))
    }

    /// A stream as stored: a live one's `viewer_count` is its base alone.
    pub(super) async fn stream_uncounted(&self, stream_id: Uuid) -> StoreResult<Option<Stream>> {
        Ok(self
            .stream_and_earlier_shards(stream_id)
            .await?
            .map(|(stream, _)| stream))
    }

    async fn stream_and_earlier_shards(
        &self,
        stream_id: Uuid,
    ) -> StoreResult<Option<(Stream, i64)>> {
        let items = self
            .query(
                None,
                "pk = :pk AND sk >= :stream",
                vec![
                    (":pk", s(keys::stream_pk(stream_id))),
                    (":stream", s(keys::STREAM_SK)),
                ],
                true,
                None,
            )
            .await?;
        let Some((first, shards)) = items
            .split_first()
            .filter(|(first, _)| first.opt_string("sk").as_deref() == Some(keys::STREAM_SK))
        else {
            return Ok(None);
        };
        Ok(Some((self.stream_from(first)?, shards_sum(shards))))
    }

    /// What a stream's counter items hold: one `Query` per partition, in flight together.
    pub(super) async fn viewer_shards(&self, stream_id: Uuid) -> StoreResult<Shards> {
        let reads = (0..self.viewer_partitions).map(|partition| {
            let pk = keys::viewer_shards_pk(stream_id, partition);
            async move {
                self.query_partition(&pk, Some(keys::VIEWER_SHARD_PREFIX))
                    .await
            }
        });
        let mut shards = Shards::default();
        for items in futures_util::future::try_join_all(reads).await? {
            shards.sum = shards.sum.saturating_add(shards_sum(&items));
            if let Some(floor) = items
                .iter()
                .find(|item| item.opt_string("sk").as_deref() == Some(FLOOR_SK))
            {
                shards.floor = floor.opt_number(COUNT).unwrap_or(0);
            }
        }
        Ok(shards)
    }

    /// Settles a live stream's count at zero when a read of it (its `base` and `shards`) found
    /// it below: the deficit added to its floor item, on condition that the floor is still as
    /// read, so of racing reads one settles it. Best effort: the count reads as zero anyway,
    /// and a write that fails leaves the settling to the next read.
    async fn settle_at_zero(&self, stream_id: Uuid, base: u64, shards: Shards) {
        let held = signed(base).saturating_add(shards.sum);
        if held >= 0 {
            return;
        }
        let settled = shards.floor.saturating_sub(held);
        let expires = (chrono::Utc::now() + SHARD_TTL).timestamp();
        let item = update(
            &self.table,
            UpdateSpec {
                key: floor_key(stream_id),
                expression: "SET #count = :settled, #ttl = :expires",
                condition: Some(if shards.floor == 0 {
                    "attribute_not_exists(#count) OR #count = :read"
                } else {
                    "#count = :read"
                }),
                names: vec![
                    ("#count", COUNT.to_owned()),
                    ("#ttl", TTL_ATTRIBUTE.to_owned()),
                ],
                values: vec![
                    (":settled", n(settled)),
                    (":read", n(shards.floor)),
                    (":expires", n(expires)),
                ],
            },
        );
        let written = match item {
            Ok(item) => self.transact_or_conflict(vec![item]).await.map_err(backend),
            Err(err) => Err(err),
        };
        if let Err(err) = written {
            tracing::debug!(%stream_id, error = %err, "viewer count not settled at zero; the next read does");
        }
    }

    /// What the counter items of each stream of `ids` hold, the reads in flight together.
    pub(super) async fn shard_sums(&self, ids: &[Uuid]) -> StoreResult<HashMap<Uuid, Shards>> {
        let mut sums = HashMap::with_capacity(ids.len());
        let mut reads = JoinSet::new();
        for &id in ids {
            let store = self.clone();
            reads.spawn(async move { (id, store.viewer_shards(id).await) });
        }
        while let Some(done) = reads.join_next().await {
            let (id, sum) = done.map_err(backend)?;
            sums.insert(id, sum?);
        }
        Ok(sums)
    }

    /// Sets the count of every `live` stream of `streams`, read from items that hold its base
    /// (position copies), from its shards: their sum from `known` (read alongside the page,
    /// by the ids the brand's counters keep), else read now. The others' counts are final as
    /// stored.
    pub(super) async fn with_live_viewers<'a>(
        &self,
        streams: impl IntoIterator<Item = &'a mut Stream>,
        known: &HashMap<Uuid, Shards>,
    ) -> StoreResult<()> {
        let mut unknown = Vec::new();
        let mut counted = Vec::new();
        for stream in streams {
            if stream.status != StreamStatus::Live {
                continue;
            }
            match known.get(&stream.id) {
                Some(shards) => counted.push((stream, *shards)),
                None => unknown.push(stream),
            }
        }
        if !unknown.is_empty() {
            let ids: Vec<Uuid> = unknown.iter().map(|stream| stream.id).collect();
            let sums = self.shard_sums(&ids).await?;
            for stream in unknown {
                let shards = sums.get(&stream.id).copied().unwrap_or_default();
                counted.push((stream, shards));
            }
        }
        for (stream, shards) in counted {
            self.settle_at_zero(stream.id, stream.viewer_count, shards)
                .await;
            stream.viewer_count = count_of(stream.viewer_count, shards.sum);
        }
        Ok(())
    }

    /// Adds `delta` viewers to a live stream, with `dedupe` recorded in the same transaction.
    /// The stream item is not touched: `stream` is the caller's read, and an event that races
    /// the stream's end changes only shards nobody reads any more.
    pub(super) async fn add_viewers(
        &self,
        stream: &Stream,
        delta: i64,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
    ) -> StoreResult<Outcome<()>> {
        if stream.status != StreamStatus::Live {
            return Ok(Outcome::Stale);
        }
        let mut draw = 0;
        loop {
            draw += 1;
            let shard = rand::random_range(0..VIEWER_SHARDS);
            let mut items = vec![update(
                &self.table,
                UpdateSpec {
                    key: keys::viewer_shard_key(stream.id, shard, self.viewer_partitions),
                    expression: "SET #ttl = :expires ADD #count :delta",
                    condition: None,
                    names: vec![
                        ("#count", COUNT.to_owned()),
                        ("#ttl", TTL_ATTRIBUTE.to_owned()),
                    ],
                    values: vec![
                        (":delta", n(delta)),
                        (":expires", n((at + SHARD_TTL).timestamp())),
                    ],
                },
            )?];
            if let Some(event_id) = dedupe {
                items.push(dedupe_item(&self.table, event_id, at)?);
            }
            match self.transact_or_conflict(items).await {
                Ok(()) => return Ok(Outcome::Applied(())),
                Err(err) if dedupe.is_some() && condition_failed_at(&err, 1) => {
                    return Ok(Outcome::Duplicate);
                }
                // Another event holds the shard (or a resend of this one holds its dedupe
                // record: the next draw finds it recorded), or the shard's partition is over
                // its throughput: another shard, after a short wait that grows with each draw.
                Err(err) if draw < SHARD_DRAWS && (is_conflict(&err) || is_throttled(&err)) => {
                    tokio::time::sleep(backoff(draw / 3)).await;
                }
                Err(err) => return Err(backend(err)),
            }
        }
    }

    /// Moves a live stream's count to `reported`, the room's count as LiveKit reports it: its
    /// base and shards read as they stand (unfloored), and the difference added to one shard
    /// as a viewer event adds its one. An event counted between the read and the write is
    /// kept; the next read-back settles what LiveKit counted of it. Nothing is written when
    /// the count already agrees.
    pub(super) async fn report_viewers(
        &self,
        stream: &Stream,
        reported: u64,
        at: DateTime<Utc>,
    ) -> StoreResult<Outcome<()>> {
        if stream.status != StreamStatus::Live {
            return Ok(Outcome::Stale);
        }
        let Some((stored, earlier_shards)) = self.stream_and_earlier_shards(stream.id).await?
        else {
            return Ok(Outcome::Stale);
        };
        if stored.status != StreamStatus::Live {
            return Ok(Outcome::Stale);
        }
        let sum = self.viewer_shards(stream.id).await?.sum;
        let held = signed(stored.viewer_count).saturating_add(sum.saturating_add(earlier_shards));
        let delta = signed(reported).saturating_sub(held);
        if delta == 0 {
            return Ok(Outcome::Applied(()));
        }
        self.add_viewers(&stored, delta, at, None).await
    }

    /// Sets a live stream's count outright (the test helper): the base on the stream item and
    /// its position copy, every shard and the floor back to zero, in one transaction
    /// conditional on the stream being `live`.
    pub(super) async fn set_viewers(
        &self,
        stream: &Stream,
        count: u64,
        at: DateTime<Utc>,
    ) -> StoreResult<Outcome<()>> {
        let position = self.position(stream.id).await?;
        let mut items: Vec<TransactWriteItem> = vec![
            update(
                &self.table,
                UpdateSpec {
                    key: keys::stream_key(stream.id),
                    expression: "SET viewer_count = :count",
                    condition: Some("#status = :live"),
                    names: vec![("#status", "status".to_owned())],
                    values: vec![
                        (":count", n(count)),
                        (":live", s(StreamStatus::Live.as_str())),
                    ],
                },
            )?,
            update(
                &self.table,
                UpdateSpec {
                    key: keys::position_key(&stream.brand_id, position),
                    expression: "SET viewer_count = :count",
                    condition: Some("#id = :id"),
                    names: vec![("#id", "id".to_owned())],
                    values: vec![(":count", n(count)), (":id", s(stream.id.to_string()))],
                },
            )?,
        ];
        let counters = (0..VIEWER_SHARDS)
            .map(|shard| keys::viewer_shard_key(stream.id, shard, self.viewer_partitions))
            .chain([floor_key(stream.id)]);
        for mut item in counters {
            item.insert(COUNT.to_owned(), n(0));
            item.insert(TTL_ATTRIBUTE.to_owned(), n((at + SHARD_TTL).timestamp()));
            items.push(put(&self.table, item, None)?);
        }
        match self.transact(items).await {
            Ok(()) => Ok(Outcome::Applied(())),
            Err(err) if condition_failed_at(&err, 0) || condition_failed_at(&err, 1) => {
                Ok(Outcome::Stale)
            }
            Err(err) => Err(backend(err)),
        }
    }
}

/// What a stream's counter items hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Shards {
    /// Every counter item's count, the floor item's included.
    pub(super) sum: i64,
    /// The floor item's count (0 when there is none).
    floor: i64,
}

fn floor_key(stream_id: Uuid) -> Item {
    keys::key(keys::viewer_shards_pk(stream_id, 0), FLOOR_SK)
}

fn shards_sum(items: &[Item]) -> i64 {
    items
        .iter()
        .filter_map(|item| item.opt_number(COUNT))
        .fold(0i64, i64::saturating_add)
}

fn signed(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// A base and a shards' sum as a count: never below zero.
fn count_of(base: u64, sum: i64) -> u64 {
    signed(base).saturating_add(sum).max(0).unsigned_abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_its_base_plus_its_shards_never_below_zero() {
        assert_eq!(count_of(5, 3), 8);
        assert_eq!(count_of(5, -3), 2);
        assert_eq!(count_of(1, -4), 0);
        assert_eq!(count_of(0, 0), 0);
    }

    #[test]
    fn shards_sum_what_they_hold_and_skip_what_they_do_not() {
        let shard = |count: Option<i64>| {
            let mut item = keys::viewer_shard_key(Uuid::nil(), 0, VIEWER_PARTITIONS);
            if let Some(count) = count {
                item.insert(COUNT.to_owned(), n(count));
            }
            item
        };
        assert_eq!(
            shards_sum(&[shard(Some(4)), shard(Some(-1)), shard(None)]),
            3
        );
        assert_eq!(shards_sum(&[]), 0);
    }
}
