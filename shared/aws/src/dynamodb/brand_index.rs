//! A brand's counters item and the streams it locates (see [`super::positions`]): the counters
//! update every creation and transition makes, and the reads of streams by position.

use std::collections::HashMap;
use std::sync::Arc;

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::DynamoStore;
use super::items::{ItemExt, corrupt, n, position_of, s};
use super::keys::{self, created_sort_key, status_counter};
use super::positions::{self, BrandIndex};
use super::requests::{UpdateSpec, update};
use hosting_domain::error::StoreError;
use hosting_domain::ports::StoreResult;
use hosting_domain::{Stream, StreamStatus};

/// Error sets cached per instance before the cache starts over.
const ERROR_SETS_CACHED: usize = 2048;

/// What creation adds to a counters update: its condition and the position it takes.
pub(super) struct Creation<'a> {
    pub condition: &'a str,
    pub total: u64,
    pub max_active: u32,
}

impl DynamoStore {
    /// The counters update of a brand for `stream` (as it is after the change) leaving status
    /// `from`, or appearing (`creation`): the status counts, the active slots and the
    /// positions index (see [`positions`]).
    pub(super) fn counters_update(
        &self,
        stream: &Stream,
        position: u64,
        from: Option<StreamStatus>,
        creation: Option<Creation<'_>>,
    ) -> Result<TransactWriteItem, StoreError> {
        let to = stream.status;
        let mut sets = vec!["#to = if_not_exists(#to, :zero) + :one".to_owned()];
        let mut removes = Vec::new();
        let mut names = vec![("#to", status_counter(to))];
        let mut values = vec![(":zero", n(0)), (":one", n(1))];
        if let Some(from) = from {
            sets.push("#from = if_not_exists(#from, :zero) - :one".into());
            names.push(("#from", status_counter(from)));
        }
        let mut condition = None;
        if let Some(creation) = creation {
            sets.push("streams_total = :next_total".into());
            sets.push("newest = :newest".into());
            values.push((":next_total", n(creation.total + 1)));
            values.push((":newest", s(created_sort_key(stream.created_at, stream.id))));
            if creation.condition.contains(":total") {
                values.push((":total", n(creation.total)));
            }
            values.push((":max_active", n(creation.max_active)));
            condition = Some(creation.condition);
        }
        let active_delta =
            i64::from(to.is_active()) - i64::from(from.is_some_and(|f| f.is_active()));
        if active_delta != 0 {
            sets.push("active = if_not_exists(active, :zero) + :active_delta".into());
            values.push((":active_delta", n(active_delta)));
        }
        names.push(("#act", positions::active_attribute(position)));
        if to.is_active() {
            sets.push("#act = :to_status".into());
            values.push((":to_status", s(positions::active_value(to, stream.id))));
        } else {
            removes.push("#act");
        }
        if to == StreamStatus::Error {
            sets.push("#errors = if_not_exists(#errors, :zero) + :one".into());
            names.push((
                "#errors",
                positions::errors_attribute(positions::block_of(position)),
            ));
        }
        let mut expression = format!("SET {}", sets.join(", "));
        if !removes.is_empty() {
            expression.push_str(&format!(" REMOVE {}", removes.join(", ")));
        }
        update(
            &self.table,
            UpdateSpec {
                key: keys::brand_key(&stream.brand_id),
                expression: &expression,
                condition,
                names,
                values,
            },
        )
    }

    /// The streams at `positions` of a brand, in that order (a missing one is skipped and
    /// logged: positions are written with their streams, so it means a damaged index).
    pub(super) async fn streams_at(&self, brand_id: &str, at: &[u64]) -> StoreResult<Vec<Stream>> {
        let mut found = self.streams_by_position(brand_id, at).await?;
        let mut streams = Vec::with_capacity(at.len());
        for position in at {
            match found.remove(position) {
                Some(stream) => streams.push(stream),
                None => tracing::warn!(brand_id, position, "stream position missing"),
            }
        }
        Ok(streams)
    }

    /// The streams at `positions` (each at most once) of a brand, by position.
    pub(super) async fn streams_by_position(
        &self,
        brand_id: &str,
        at: &[u64],
    ) -> StoreResult<HashMap<u64, Stream>> {
        let keys = at
            .iter()
            .map(|p| keys::position_key(brand_id, *p))
            .collect();
        let mut found: HashMap<u64, Stream> = HashMap::with_capacity(at.len());
        for item in self.batch_get(keys).await? {
            let stream = self.stream_from(&item)?;
            if let Some(position) = position_of(&item) {
                found.insert(position, stream);
            }
        }
        Ok(found)
    }

    /// Error sets of `blocks`, from the cache while their counts say they are complete.
    pub(super) async fn error_sets(
        &self,
        brand_id: &str,
        index: &BrandIndex,
        blocks: &[u64],
    ) -> StoreResult<HashMap<u64, Arc<Vec<u64>>>> {
        let cache_key = |block: u64| (brand_id.to_owned(), index.generation, block);
        let mut sets = HashMap::new();
        let mut missing = Vec::new();
        {
            let cache = self.error_sets.lock().unwrap_or_else(|p| p.into_inner());
            for block in blocks {
                match cache.get(&cache_key(*block)) {
                    Some(set) if set.len() as u64 == index.errors_in(*block) => {
                        sets.insert(*block, set.clone());
                    }
                    _ => missing.push(*block),
                }
            }
        }
        if missing.is_empty() {
            return Ok(sets);
        }
        let keys = missing
            .iter()
            .map(|block| keys::errors_key(brand_id, *block))
            .collect();
        let items = self.batch_get(keys).await?;
        let mut cache = self.error_sets.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() + items.len() > ERROR_SETS_CACHED {
            cache.clear();
        }
        for item in items {
            let block = keys::errors_block(&item.string("pk")?)
                .ok_or_else(|| corrupt("error block key"))?;
            let mut set: Vec<u64> = match item.get("positions") {
                Some(AttributeValue::Ns(numbers)) => numbers
                    .iter()
                    .map(|p| p.parse().map_err(|_| corrupt("error block position")))
                    .collect::<Result<_, _>>()?,
                _ => Vec::new(),
            };
            set.sort_unstable();
            let set = Arc::new(set);
            // Only a complete set is kept: one read before its count caught up is not.
            if set.len() as u64 == index.errors_in(block) {
                cache.insert(cache_key(block), set.clone());
            }
            sets.insert(block, set);
        }
        Ok(sets)
    }
}
