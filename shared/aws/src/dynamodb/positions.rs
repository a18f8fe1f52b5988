//! How the DynamoDB store reads a page of a brand's streams, at any offset and of any status,
//! with `GetItem` and `BatchGetItem` alone, so that a page costs the same with 100 streams in
//! the brand's history as with 100,000.
//!
//! - Every stream has a **position**: its place in the brand's creation order, 0 for the first,
//!   without gaps. Creation assigns `streams_total` as the position in the same transaction
//!   that raises it, and a copy of the stream lives at `POS#<brand>#<position>`. Newest first
//!   is highest position first, so the page at `offset` is known from the total alone.
//! - The brand's counters item records which positions are active (`act_<position>`: the
//!   status and the stream's id, `live#<id>`, at most the plan's concurrent streams; a
//!   page sums its live streams' viewer shards alongside its own read, by these ids) and, per **block** of [`BLOCK`] positions, how many ended in
//!   `error` (`err_<block>`); block item `ERRORS#<brand>#<block>` holds those positions. Every
//!   other position is `ended`. A page of one status is found from these counts, reading only
//!   the error sets of the blocks the page touches, and those sets are cached while the count
//!   says they are complete (an error is final, so a set only grows).
//! - Positions follow creation time, so the streams created since any time are the newest
//!   positions: analytics (`analytics.rs`) knows how many from its aggregates and reads the
//!   ones it lists as a range.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::types::AttributeValue;

use hosting_domain::StreamStatus;
use hosting_domain::error::StoreError;
use uuid::Uuid;

/// Positions per error block: a block's error set stays far below DynamoDB's 400 KB item limit
/// (at most 1,024 numbers), and the counters item holds one count per block that has errors.
pub const BLOCK: u64 = 1024;

pub const ACTIVE_PREFIX: &str = "act_";
pub const ERRORS_PREFIX: &str = "err_";

pub fn active_attribute(position: u64) -> String {
    format!("{ACTIVE_PREFIX}{position}")
}

/// An active position's value: its status and its stream's id.
pub fn active_value(status: StreamStatus, stream_id: Uuid) -> String {
    format!("{}#{stream_id}", status.as_str())
}

pub fn errors_attribute(block: u64) -> String {
    format!("{ERRORS_PREFIX}{block}")
}

pub fn block_of(position: u64) -> u64 {
    position / BLOCK
}

/// The positions part of a brand's counters item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrandIndex {
    /// Streams ever created (or seeded): the next position.
    pub total: u64,
    /// Streams per status.
    pub counts: HashMap<StreamStatus, u64>,
    /// Active positions and their status.
    pub active: BTreeMap<u64, StreamStatus>,
    /// Active positions' stream ids (absent from values written before ids were kept).
    pub active_ids: BTreeMap<u64, Uuid>,
    /// Per block that has any, how many of its positions ended in `error`.
    pub errors: BTreeMap<u64, u64>,
    /// Sort key (`created_at#id`) of the newest stream.
    pub newest: Option<String>,
    /// Raised whenever positions are renumbered, so cached error sets are dropped.
    pub generation: u64,
}

/// A run of one status inside one block: skip `skip` of its positions (newest first), take
/// `take`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSlice {
    pub block: u64,
    pub skip: u64,
    pub take: u64,
}

fn count(value: &AttributeValue) -> Option<u64> {
    value.as_n().ok()?.parse::<i64>().ok()?.try_into().ok()
}

impl BrandIndex {
    /// The stream ids of the live positions among `positions` that the counters name.
    pub fn live_ids_among(&self, positions: &[u64]) -> Vec<Uuid> {
        positions
            .iter()
            .filter(|p| self.active.get(p) == Some(&StreamStatus::Live))
            .filter_map(|p| self.active_ids.get(p).copied())
            .collect()
    }

    pub fn from_item(item: &HashMap<String, AttributeValue>) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("brand counters: {what}"));
        let mut index = BrandIndex::default();
        for (name, value) in item {
            if name == "streams_total" {
                index.total = count(value).ok_or_else(|| corrupt("streams_total"))?;
            } else if name == "generation" {
                index.generation = count(value).ok_or_else(|| corrupt("generation"))?;
            } else if name == "newest" {
                index.newest = value.as_s().ok().cloned();
            } else if let Some(status) = name.strip_prefix("streams_") {
                if let Some(status) = StreamStatus::parse(status) {
                    index.counts.insert(status, count(value).unwrap_or(0));
                }
            } else if let Some(position) = name.strip_prefix(ACTIVE_PREFIX) {
                let position = position.parse().map_err(|_| corrupt(name))?;
                let value = value.as_s().map_err(|_| corrupt(name))?;
                let (status, id) = match value.split_once('#') {
                    Some((status, id)) => (status, Some(id)),
                    None => (value.as_str(), None),
                };
                let status = StreamStatus::parse(status).ok_or_else(|| corrupt(name))?;
                index.active.insert(position, status);
                if let Some(id) = id {
                    let id = Uuid::parse_str(id).map_err(|_| corrupt(name))?;
                    index.active_ids.insert(position, id);
                }
            } else if let Some(block) = name.strip_prefix(ERRORS_PREFIX) {
                let block = block.parse().map_err(|_| corrupt(name))?;
                let errors = count(value).ok_or_else(|| corrupt(name))?;
                if errors > 0 {
                    index.errors.insert(block, errors);
                }
            }
        }
        Ok(index)
    }

    /// Streams of `status`, or all of them.
    pub fn total_of(&self, status: Option<StreamStatus>) -> u64 {
        match status {
            None => self.total,
            Some(status) => self.counts.get(&status).copied().unwrap_or(0),
        }
    }

    /// Positions of the page of all streams, newest first.
    pub fn page(&self, offset: u64, limit: u64) -> Vec<u64> {
        let end = self.total.saturating_sub(offset);
        let start = end.saturating_sub(limit);
        (start..end).rev().collect()
    }

    /// Positions of the page of `preparing` or `live` streams, newest first.
    pub fn active_page(&self, status: StreamStatus, offset: u64, limit: u64) -> Vec<u64> {
        self.active
            .iter()
            .rev()
            .filter(|(_, s)| **s == status)
            .map(|(position, _)| *position)
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .collect()
    }

    fn block_len(&self, block: u64) -> u64 {
        self.total
            .min((block + 1) * BLOCK)
            .saturating_sub(block * BLOCK)
    }

    fn active_in(&self, block: u64) -> u64 {
        self.active
            .range(block * BLOCK..(block + 1) * BLOCK)
            .count() as u64
    }

    pub fn errors_in(&self, block: u64) -> u64 {
        self.errors.get(&block).copied().unwrap_or(0)
    }

    /// The blocks a page of `ended` or `error` streams touches, newest first, from the counts
    /// alone.
    pub fn slices(&self, status: StreamStatus, offset: u64, limit: u64) -> Vec<BlockSlice> {
        let counts: Box<dyn Iterator<Item = (u64, u64)>> = match status {
            StreamStatus::Error => Box::new(self.errors.iter().rev().map(|(b, n)| (*b, *n))),
            StreamStatus::Ended => {
                let blocks = self.total.div_ceil(BLOCK);
                Box::new((0..blocks).rev().map(|b| {
                    let ended = self
                        .block_len(b)
                        .saturating_sub(self.errors_in(b) + self.active_in(b));
                    (b, ended)
                }))
            }
            StreamStatus::Preparing | StreamStatus::Live => Box::new(std::iter::empty()),
        };
        let (mut skip, mut wanted) = (offset, limit);
        let mut slices = Vec::new();
        for (block, in_block) in counts {
            if wanted == 0 {
                break;
            }
            if skip >= in_block {
                skip -= in_block;
                continue;
            }
            let take = (in_block - skip).min(wanted);
            slices.push(BlockSlice { block, skip, take });
            wanted -= take;
            skip = 0;
        }
        slices
    }

    /// The blocks among `slices` whose error sets are needed to place their positions.
    pub fn error_sets_needed(&self, slices: &[BlockSlice]) -> Vec<u64> {
        slices
            .iter()
            .map(|slice| slice.block)
            .filter(|block| self.errors_in(*block) > 0)
            .collect()
    }

    /// Positions of `slices` of `status`, newest first, given the error sets of their blocks.
    pub fn positions(
        &self,
        status: StreamStatus,
        slices: &[BlockSlice],
        error_sets: &HashMap<u64, std::sync::Arc<Vec<u64>>>,
    ) -> Vec<u64> {
        let mut positions = Vec::new();
        let empty = Vec::new();
        for slice in slices {
            let errors = error_sets
                .get(&slice.block)
                .map_or(&empty, |set| set.as_ref());
            let skip = usize::try_from(slice.skip).unwrap_or(usize::MAX);
            let take = usize::try_from(slice.take).unwrap_or(usize::MAX);
            match status {
                StreamStatus::Error => {
                    positions.extend(errors.iter().rev().copied().skip(skip).take(take));
                }
                _ => {
                    let start = slice.block * BLOCK;
                    let end = start + self.block_len(slice.block);
                    positions.extend(
                        (start..end)
                            .rev()
                            .filter(|p| {
                                !self.active.contains_key(p) && errors.binary_search(p).is_err()
                            })
                            .skip(skip)
                            .take(take),
                    );
                }
            }
        }
        positions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// `statuses[p]` is the status of position `p`; returns the index and the error sets.
    fn index_of(statuses: &[StreamStatus]) -> (BrandIndex, HashMap<u64, Arc<Vec<u64>>>) {
        let mut index = BrandIndex {
            total: statuses.len() as u64,
            ..BrandIndex::default()
        };
        let mut sets: HashMap<u64, Vec<u64>> = HashMap::new();
        for (p, status) in statuses.iter().enumerate() {
            let p = p as u64;
            *index.counts.entry(*status).or_default() += 1;
            match status {
                StreamStatus::Error => {
                    *index.errors.entry(block_of(p)).or_default() += 1;
                    sets.entry(block_of(p)).or_default().push(p);
                }
                StreamStatus::Ended => {}
                active => {
                    index.active.insert(p, *active);
                }
            }
        }
        let sets = sets.into_iter().map(|(b, s)| (b, Arc::new(s))).collect();
        (index, sets)
    }

    fn page_of(
        index: &BrandIndex,
        sets: &HashMap<u64, Arc<Vec<u64>>>,
        status: StreamStatus,
        offset: u64,
        limit: u64,
    ) -> Vec<u64> {
        match status {
            StreamStatus::Preparing | StreamStatus::Live => {
                index.active_page(status, offset, limit)
            }
            _ => {
                let slices = index.slices(status, offset, limit);
                index.positions(status, &slices, sets)
            }
        }
    }

    /// Every page of every status, against filtering the whole history.
    #[test]
    fn status_pages_match_a_filter_of_the_history() {
        use StreamStatus::*;
        let statuses: Vec<StreamStatus> = (0..3 * BLOCK + 77)
            .map(|p| match p {
                p if p == 5 || p == 2 * BLOCK + 1 => Live,
                p if p == 3 * BLOCK + 70 => Preparing,
                p if p % 7 == 3 || (BLOCK..BLOCK + 40).contains(&p) => Error,
                _ => Ended,
            })
            .collect();
        let (index, sets) = index_of(&statuses);
        for status in [Preparing, Live, Ended, Error] {
            let all: Vec<u64> = (0..statuses.len() as u64)
                .rev()
                .filter(|p| statuses[*p as usize] == status)
                .collect();
            assert_eq!(index.total_of(Some(status)), all.len() as u64);
            for (offset, limit) in [(0, 20), (0, 100), (13, 7), (1020, 20), (1500, 100)]
                .into_iter()
                .chain([(all.len() as u64 - 1, 20), (all.len() as u64 + 5, 20)])
            {
                let expected: Vec<u64> = all
                    .iter()
                    .copied()
                    .skip(offset as usize)
                    .take(limit as usize)
                    .collect();
                assert_eq!(
                    page_of(&index, &sets, status, offset, limit),
                    expected,
                    "{status:?} offset {offset} limit {limit}"
                );
            }
        }
    }

    #[test]
    fn pages_of_all_streams_count_down_from_the_newest() {
        let (index, _) = index_of(&[StreamStatus::Ended; 30]);
        assert_eq!(index.page(0, 3), vec![29, 28, 27]);
        assert_eq!(index.page(28, 5), vec![1, 0]);
        assert!(index.page(30, 5).is_empty());
    }

    /// Only blocks with errors need their sets read; error pages touch only blocks with errors.
    #[test]
    fn only_blocks_with_errors_are_read() {
        use StreamStatus::*;
        let mut statuses = vec![Ended; (4 * BLOCK) as usize];
        statuses[10] = Error;
        let (index, _) = index_of(&statuses);
        let ended = index.slices(Ended, 0, 20);
        assert!(index.error_sets_needed(&ended).is_empty());
        let error = index.slices(Error, 0, 20);
        assert_eq!(
            error,
            vec![BlockSlice {
                block: 0,
                skip: 0,
                take: 1
            }]
        );
    }

    #[test]
    fn reads_the_counters_item() {
        let item: HashMap<String, AttributeValue> = [
            ("streams_total", AttributeValue::N("2050".into())),
            ("streams_live", AttributeValue::N("1".into())),
            ("streams_error", AttributeValue::N("3".into())),
            ("act_2049", AttributeValue::S("live".into())),
            ("err_1", AttributeValue::N("3".into())),
            ("err_0", AttributeValue::N("0".into())),
            ("newest", AttributeValue::S("x".into())),
            ("name", AttributeValue::S("Brand".into())),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let index = BrandIndex::from_item(&item).unwrap();
        assert_eq!(index.total, 2050);
        assert_eq!(index.active.get(&2049), Some(&StreamStatus::Live));
        assert_eq!(index.errors, BTreeMap::from([(1, 3)]));
        assert_eq!(index.total_of(Some(StreamStatus::Error)), 3);
        assert_eq!(index.newest.as_deref(), Some("x"));
        // A value from before ids were kept: the status alone, no id.
        assert!(index.active_ids.is_empty());
        assert!(index.live_ids_among(&[2049]).is_empty());
    }

    #[test]
    fn active_positions_name_their_streams_and_only_live_ones_are_summed() {
        let (live, preparing) = (Uuid::new_v4(), Uuid::new_v4());
        let item: HashMap<String, AttributeValue> = [
            ("streams_total", AttributeValue::N("3".into())),
            (
                "act_1",
                AttributeValue::S(active_value(StreamStatus::Live, live)),
            ),
            (
                "act_2",
                AttributeValue::S(active_value(StreamStatus::Preparing, preparing)),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let index = BrandIndex::from_item(&item).unwrap();
        assert_eq!(index.active.get(&1), Some(&StreamStatus::Live));
        assert_eq!(index.active.get(&2), Some(&StreamStatus::Preparing));
        assert_eq!(index.active_ids.get(&2), Some(&preparing));
        assert_eq!(index.live_ids_among(&[0, 1, 2]), [live]);
        assert_eq!(index.live_ids_among(&[0, 2]), Vec::<Uuid>::new());
        let bad: HashMap<String, AttributeValue> =
            [("act_1".to_owned(), AttributeValue::S("live#nope".into()))].into();
        assert!(BrandIndex::from_item(&bad).is_err());
    }
}
