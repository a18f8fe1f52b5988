//! Seeding streams (fixtures, history): positions, position copies, error blocks and the
//! analytics aggregates, as creation and transitions keep them. No request of the API uses this. Not atomic with
//! concurrent starts of the same brand: seed a brand while it is idle.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::types::AttributeValue;
use uuid::Uuid;

use super::analytics::{Aggregates, aggregate_item};
use super::items::{n, position_item, s, script_item, stream_item};
use super::keys::{self, created_sort_key, status_counter};
use super::positions::{self, BrandIndex};
use super::requests::{backend, retrying};
use super::streams::room_item;
use super::{DynamoStore, Item};
use chrono::DateTime;
use hosting_domain::ports::StoreResult;
use hosting_domain::{Stream, StreamStatus};

impl DynamoStore {
    /// Inserts or replaces streams as they are; active ones take a slot.
    pub(super) async fn seed_streams(&self, streams: &[Stream]) -> StoreResult<()> {
        let mut by_brand: BTreeMap<&str, Vec<Stream>> = BTreeMap::new();
        for stream in streams {
            by_brand
                .entry(stream.brand_id.as_str())
                .or_default()
                .push(stream.clone());
        }
        for (brand_id, streams) in by_brand {
            self.put_brand_streams(brand_id, streams).await?;
        }
        Ok(())
    }
}

/// What streams with positions add to their brand's index: status counts (and `active`), the
/// active positions' attributes and the error positions per block.
struct PositionsSummary {
    counts: BTreeMap<String, i64>,
    active: Vec<(String, AttributeValue)>,
    error_sets: BTreeMap<u64, Vec<u64>>,
}

impl PositionsSummary {
    /// `streams` oldest first, at consecutive positions from `first`.
    fn of(streams: &[Stream], first: u64) -> Self {
        let mut summary = PositionsSummary {
            counts: BTreeMap::new(),
            active: Vec::new(),
            error_sets: BTreeMap::new(),
        };
        for (position, stream) in (first..).zip(streams) {
            *summary
                .counts
                .entry(status_counter(stream.status))
                .or_default() += 1;
            match stream.status {
                StreamStatus::Error => summary
                    .error_sets
                    .entry(positions::block_of(position))
                    .or_default()
                    .push(position),
                StreamStatus::Ended => {}
                active => {
                    *summary.counts.entry("active".into()).or_default() += 1;
                    let attribute = positions::active_attribute(position);
                    summary
                        .active
                        .push((attribute, s(positions::active_value(active, stream.id))));
                }
            }
        }
        summary
    }
}

impl DynamoStore {
    async fn put_brand_streams(&self, brand_id: &str, streams: Vec<Stream>) -> StoreResult<()> {
        // A later stream with the same id replaces an earlier one.
        let mut unique: HashMap<Uuid, Stream> = HashMap::new();
        for stream in streams {
            unique.insert(stream.id, stream);
        }
        let mut streams: Vec<Stream> = unique.into_values().collect();
        streams.sort_by_key(|s| (s.created_at, s.id));
        let index = BrandIndex::from_item(&self.brand_counters(brand_id).await?)?;
        let ids = streams.iter().map(|s| keys::stream_key(s.id)).collect();
        let replaces = !self.batch_get(ids).await?.is_empty();
        let all_newer = match (&index.newest, streams.first()) {
            (Some(newest), Some(first)) => created_sort_key(first.created_at, first.id) > *newest,
            _ => true,
        };
        if !replaces && all_newer {
            self.append_streams(brand_id, &index, streams).await
        } else {
            self.renumber_streams(brand_id, &index, streams).await
        }
    }

    /// Streams newer than every stream of the brand take the next positions.
    async fn append_streams(
        &self,
        brand_id: &str,
        index: &BrandIndex,
        streams: Vec<Stream>,
    ) -> StoreResult<()> {
        let Some(newest) = streams.last().map(|s| created_sort_key(s.created_at, s.id)) else {
            return Ok(());
        };
        self.write_streams(&streams, index.total).await?;
        let summary = PositionsSummary::of(&streams, index.total);
        let mut adds = summary.counts;
        adds.insert("streams_total".into(), streams.len() as i64);
        for (block, set) in &summary.error_sets {
            adds.insert(positions::errors_attribute(*block), set.len() as i64);
        }
        let mut sets = summary.active;
        sets.push(("newest".into(), s(newest)));
        self.update_attributes(keys::brand_key(brand_id), adds, sets, Vec::new())
            .await?;
        for (block, set) in summary.error_sets {
            retrying(|| {
                self.client
                    .update_item()
                    .table_name(&self.table)
                    .set_key(Some(keys::errors_key(brand_id, block)))
                    .update_expression("ADD #positions :set")
                    .expression_attribute_names("#positions", "positions")
                    .expression_attribute_values(
                        ":set",
                        AttributeValue::Ns(set.iter().map(u64::to_string).collect()),
                    )
                    .send()
            })
            .await
            .map_err(backend)?;
        }
        // Aggregate items after the brand's newest stream are new: written whole, in batches.
        // The newest's own day and hour may hold figures already: added to.
        let newest_before = index.newest.as_ref().and_then(|newest| {
            let at = newest.split_once('#')?.0;
            Some(DateTime::parse_from_rfc3339(at).ok()?.to_utc())
        });
        let (new, existing) = Aggregates::of_stored(&streams).split_after(brand_id, newest_before);
        let new = new
            .into_iter()
            .map(|(key, attributes)| aggregate_item(key, attributes))
            .collect();
        self.batch_write(new, Vec::new()).await?;
        for (key, adds) in existing {
            self.update_attributes(key, adds, Vec::new(), Vec::new())
                .await?;
        }
        Ok(())
    }

    /// Streams that replace or precede some of the brand's: the whole history is read,
    /// merged and numbered again, and every index and aggregate item rewritten.
    async fn renumber_streams(
        &self,
        brand_id: &str,
        index: &BrandIndex,
        streams: Vec<Stream>,
    ) -> StoreResult<()> {
        let existing: Vec<u64> = (0..index.total).collect();
        let existing = self.streams_at(brand_id, &existing).await?;
        let old_aggregates: Vec<Item> = Aggregates::of_stored(&existing)
            .items(brand_id)
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        let mut merged: HashMap<Uuid, Stream> = existing.into_iter().map(|s| (s.id, s)).collect();
        for stream in streams {
            merged.insert(stream.id, stream);
        }
        let mut merged: Vec<Stream> = merged.into_values().collect();
        merged.sort_by_key(|s| (s.created_at, s.id));
        self.write_streams(&merged, 0).await?;

        let mut sets: Vec<(String, AttributeValue)> = vec![
            ("streams_total".into(), n(merged.len())),
            ("generation".into(), n(index.generation + 1)),
        ];
        if let Some(newest) = merged.last() {
            sets.push((
                "newest".into(),
                s(created_sort_key(newest.created_at, newest.id)),
            ));
        }
        let summary = PositionsSummary::of(&merged, 0);
        // Absolute values: every status count, zero ones included, replaces the old.
        for status in StreamStatus::ALL {
            let name = status_counter(status);
            let count = summary.counts.get(&name).copied().unwrap_or(0);
            sets.push((name, n(count)));
        }
        let active = summary.counts.get("active").copied().unwrap_or(0);
        sets.push(("active".into(), n(active)));
        sets.extend(summary.active);
        for (block, set) in &summary.error_sets {
            sets.push((positions::errors_attribute(*block), n(set.len())));
        }
        let mut removes: Vec<String> = index
            .active
            .keys()
            .map(|p| positions::active_attribute(*p))
            .chain(index.errors.keys().map(|b| positions::errors_attribute(*b)))
            .collect();
        removes.retain(|name| !sets.iter().any(|(set, _)| set == name));
        self.update_attributes(keys::brand_key(brand_id), BTreeMap::new(), sets, removes)
            .await?;

        let mut puts = Vec::new();
        for (block, set) in &summary.error_sets {
            let mut item = keys::errors_key(brand_id, *block);
            item.insert(
                "positions".into(),
                AttributeValue::Ns(set.iter().map(u64::to_string).collect()),
            );
            puts.push(item);
        }
        for (key, attributes) in Aggregates::of_stored(&merged).items(brand_id) {
            puts.push(aggregate_item(key, attributes));
        }
        let mut deletes: Vec<Item> = index
            .errors
            .keys()
            .filter(|block| !summary.error_sets.contains_key(block))
            .map(|block| keys::errors_key(brand_id, *block))
            .collect();
        // Aggregate items no stream counts in any more (a replaced stream's old time).
        let pk = |item: &Item| item.get("pk").and_then(|pk| pk.as_s().ok()).cloned();
        let written: std::collections::HashSet<String> = puts.iter().filter_map(pk).collect();
        deletes.extend(
            old_aggregates
                .into_iter()
                .filter(|key| pk(key).is_none_or(|pk| !written.contains(&pk))),
        );
        self.batch_write(puts, deletes).await
    }

    /// Stream items at consecutive positions from `first`, their position copies and room
    /// items, in batches.
    async fn write_streams(&self, streams: &[Stream], first: u64) -> StoreResult<()> {
        let mut items = Vec::with_capacity(streams.len() * 2);
        for (position, stream) in (first..).zip(streams) {
            self.remember_position(stream.id, position);
            items.push(stream_item(stream, position));
            items.push(position_item(stream, position));
            if let Some(script) = &stream.script {
                items.push(script_item(stream.id, script));
            }
            if let Some(room) = &stream.room_name {
                items.push(room_item(room, stream.id));
            }
        }
        self.batch_write(items, Vec::new()).await
    }

    /// `ADD`s, `SET`s and `REMOVE`s on one item, a few dozen per request (update expressions
    /// are limited in size).
    async fn update_attributes(
        &self,
        item_key: Item,
        adds: BTreeMap<String, i64>,
        sets: Vec<(String, AttributeValue)>,
        removes: Vec<String>,
    ) -> StoreResult<()> {
        enum Change {
            Add(String, i64),
            Set(String, AttributeValue),
            Remove(String),
        }
        let changes: Vec<Change> = adds
            .into_iter()
            .filter(|(_, delta)| *delta != 0)
            .map(|(name, delta)| Change::Add(name, delta))
            .chain(
                sets.into_iter()
                    .map(|(name, value)| Change::Set(name, value)),
            )
            .chain(removes.into_iter().map(Change::Remove))
            .collect();
        for chunk in changes.chunks(40) {
            let mut request = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(item_key.clone()));
            let (mut added, mut set, mut removed) = (Vec::new(), Vec::new(), Vec::new());
            for (i, change) in chunk.iter().enumerate() {
                let (name, value) = match change {
                    Change::Add(name, delta) => {
                        added.push(format!("#a{i} :v{i}"));
                        (name, Some(n(delta)))
                    }
                    Change::Set(name, value) => {
                        set.push(format!("#a{i} = :v{i}"));
                        (name, Some(value.clone()))
                    }
                    Change::Remove(name) => {
                        removed.push(format!("#a{i}"));
                        (name, None)
                    }
                };
                request = request.expression_attribute_names(format!("#a{i}"), name);
                if let Some(value) = value {
                    request = request.expression_attribute_values(format!(":v{i}"), value);
                }
            }
            let mut expression = Vec::new();
            for (verb, parts) in [("ADD", added), ("SET", set), ("REMOVE", removed)] {
                if !parts.is_empty() {
                    expression.push(format!("{verb} {}", parts.join(", ")));
                }
            }
            let request = request.update_expression(expression.join(" "));
            retrying(|| request.clone().send()).await.map_err(backend)?;
        }
        Ok(())
    }
}
