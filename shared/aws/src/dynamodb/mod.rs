//! The DynamoDB store: one table, every request a `GetItem`, `BatchGetItem`, `Query`,
//! conditional write or transaction (never a `Scan`), each retried as DynamoDB asks
//! ([`requests`]).
//!
//! | item | pk | sk | due index (`due_pk`, `due_sk`) |
//! |---|---|---|---|
//! | brand (with its counters) | `BRAND#<id>` | `BRAND` | |
//! | webhook | `BRAND#<brand>` | `WEBHOOK#<id>` | |
//! | API key | `KEY#<sha256>` | `KEY` | |
//! | creator | `CREATORS` | `<id>` | |
//! | stream | `STREAM#<id>` | `STREAM` | while active: `DEADLINE#<shard>`, deadline |
//! | its script, read only by a launch | `STREAM#<id>` | `SCRIPT` | |
//! | its destinations' stream keys, read only by the egress requests, erased once it ended and its egress stopped | `STREAM#<id>` | `DESTINATION_KEYS` | |
//! | its clips ([`clips`]), and their count | `STREAM#<id>` | `CLIP#<clip id>`, `CLIPS` | a clip owed its cut or its object's removal: `CLIP#<shard>`, when due |
//! | its viewer counter shards, while live ([`viewers`]) | `VIEWERS#<id>#<nn % 8>` | `VIEWERS#<nn>` | |
//! | stream, by position | `POS#<brand>#<position>` | `POS` | |
//! | positions that ended in `error` | `ERRORS#<brand>#<block>` | `ERRORS` | |
//! | analytics of a day of creation, per hour | `DAY#<brand>#<yyyy-mm-dd>` | `DAY` | |
//! | analytics of an hour of creation, per minute | `HOUR#<brand>#<yyyy-mm-dd>T<hh>` | `HOUR` | |
//! | scheduled show ([`shows`]) | `SHOW#<id>` | `SHOW` | while something is due: `SHOW#<shard>`, its reminder, start or claim's end |
//! | its destinations' keys, its script, until it starts, fails or is cancelled | `SHOW#<id>` | `DESTINATION_KEYS`, `SCRIPT` | |
//! | a show's copy in its brand's lists (all, and its status's) | `SHOWS#<brand>#<a, s, t, d, f or c>` | `starts_at`, id | |
//! | a brand's shows per month of `starts_at`, and per hour of each month, per list ([`show_counts`]) | `SHOWCOUNTS#<brand>#<letter>` | `SHOWCOUNTS`, `MONTH#<yyyymm>` | |
//! | room name -> stream | `ROOM#<name>` | `ROOM` | |
//! | pending room cleanup | `CLEANUP#<stream id>` | `CLEANUP` | `CLEANUP#<shard>`, next attempt |
//! | a brand's delivery slot, while held | `DSLOT#<brand>#<slot>` | `DSLOT` | |
//! | a brand's parked delivery ([`parked_deliveries`]) | `PARKED#<brand>` | park time, random tail | |
//! | a brand's parked-delivery wake-up, while any is parked | `PARKED_WAKE#<brand>` | `PARKED_WAKE` | `PARKED_WAKE#<shard>`, due time |
//! | event (outbox) | `EVENT#<id>` | `EVENT` | until relayed: `OUTBOX#<shard>`, due time; set aside: `OUTBOX#SET_ASIDE` |
//! | rate window | `RATE#<brand>#<minute>` | `RATE` | |
//! | provider event id | `PROVIDER_EVENT#<id>` | `PROVIDER_EVENT` | |
//! | idempotency key | `IDEMPOTENCY#<sha256 of brand, environment, endpoint, key>` | `IDEMPOTENCY` | |
//! | delivery attempt, once per filter | `ATTEMPTS#<webhook>`, `+#S#<status>`, `+#EVT#<event>`, `+#EVT#<event>#S#<status>` | its position (time, event, attempt) | |
//! | an event as delivered to a webhook (its body) | `DELIVERED#<webhook>#<event>` | `DELIVERED` | |
//! | a delivery that ended failed | `FAILED#<webhook>` | event creation, event id | |
//!
//! Rate windows, provider event ids, idempotency keys, relayed events, delivery slots left by a
//! dead holder, the delivery log (30 days) and viewer counter shards (2 days after their last
//! change) expire by TTL (`ttl`).
//!
//! The brand item carries the counters that make limits atomic and totals cheap: `active`
//! (streams in `preparing` or `live`), `streams_total`, `streams_<status>` and `webhooks`,
//! and the positions index that pages streams without a `Query` ([`positions`]). The day and
//! hour items hold the analytics aggregates that answer a window without reading its streams
//! ([`analytics`]).
//!
//! The due index is the one secondary index. It is read only by the sweeps (the outbox relay's
//! with the parked-delivery wake-ups, and the deadline sweep with its room cleanups), which confirm each entry with a consistent
//! read or a conditional write, since an index lags its table.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::AttributeValue;
use uuid::Uuid;

use crate::LazyClient;

mod accounts;
mod analytics;
mod brand_index;
mod clips;
mod delivery_log;
mod delivery_slots;
mod idempotency;
mod items;
mod keys;
mod outbox;
mod parked_deliveries;
mod plain_secrets;
mod positions;
mod requests;
mod room_cleanups;
mod seeding;
mod show_counts;
mod show_items;
mod shows;
mod streams;
pub mod table;
mod transact_items;
mod transitions;
mod viewers;
mod webhooks;

pub use items::{event_from_item, event_from_stream_image};
pub use plain_secrets::{PlainSecret, PlainSecretKind};

type Item = HashMap<String, AttributeValue>;

/// Error sets of blocks, by (brand, generation, block); see [`positions`].
type ErrorSetCache = HashMap<(String, u64, u64), Arc<Vec<u64>>>;

#[derive(Clone)]
pub struct DynamoStore {
    /// Built on the first request that reaches the table: an instance whose first answers need
    /// no store (a request without a key, the discovery document, a 404) does not build it.
    client: LazyClient<Client>,
    table: String,
    error_sets: Arc<Mutex<ErrorSetCache>>,
    /// Positions of the streams this instance read or wrote: a transition updates the stream's
    /// position copy, and the domain record does not carry its position.
    positions: Arc<Mutex<HashMap<Uuid, u64>>>,
    /// Partition keys a live stream's viewer shards are spread over (`viewers.rs`).
    viewer_partitions: u32,
}

/// Positions remembered per instance before the cache starts over.
const POSITIONS_CACHED: usize = 100_000;

impl DynamoStore {
    pub fn new(client: impl Into<LazyClient<Client>>, table: impl Into<String>) -> Self {
        Self {
            client: client.into(),
            table: table.into(),
            error_sets: Arc::default(),
            positions: Arc::default(),
            viewer_partitions: viewers::VIEWER_PARTITIONS,
        }
    }

    /// The same store with a live stream's viewer shards under `partitions` partition keys
    /// instead of [`viewers::VIEWER_PARTITIONS`]: a test's switch, to show what one partition
    /// key does to a busy show's opening (BENCHMARKS.md, "A popular show").
    pub fn with_viewer_partitions(mut self, partitions: u32) -> Self {
        self.viewer_partitions = partitions.clamp(1, viewers::VIEWER_SHARDS);
        self
    }

    /// Remembers where a stream is, from an item read or written.
    fn remember_position(&self, stream_id: Uuid, position: u64) {
        let mut positions = self.positions.lock().unwrap_or_else(|p| p.into_inner());
        if positions.len() >= POSITIONS_CACHED {
            positions.clear();
        }
        positions.insert(stream_id, position);
    }

    fn forget_position(&self, stream_id: Uuid) {
        self.positions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&stream_id);
    }

    /// A stream's position: remembered, or read with the stream item.
    async fn position(&self, stream_id: Uuid) -> Result<u64, hosting_domain::error::StoreError> {
        let remembered = self
            .positions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&stream_id)
            .copied();
        if let Some(position) = remembered {
            return Ok(position);
        }
        let item = self.get(keys::stream_key(stream_id)).await?;
        let position = item
            .as_ref()
            .and_then(items::position_of)
            .ok_or_else(|| items::corrupt("stream without a position"))?;
        self.remember_position(stream_id, position);
        Ok(position)
    }

    /// A stream read from an item, its position remembered.
    fn stream_from(
        &self,
        item: &Item,
    ) -> Result<hosting_domain::Stream, hosting_domain::error::StoreError> {
        let stream = items::stream_of(item)?;
        if let Some(position) = items::position_of(item) {
            self.remember_position(stream.id, position);
        }
        Ok(stream)
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// A brand's item with its counters (empty when the brand has none yet).
    pub async fn brand_counters(
        &self,
        brand_id: &str,
    ) -> Result<Item, hosting_domain::error::StoreError> {
        Ok(self
            .get(keys::brand_key(brand_id))
            .await?
            .unwrap_or_default())
    }
}
