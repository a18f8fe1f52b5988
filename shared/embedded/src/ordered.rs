//! Stream keys in creation order, the embedded store's index of a brand's streams.

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Stream keys in creation order, so a page at any offset and a window since any time are
/// found by position, not by walking the brand's history.
#[derive(Default)]
pub(super) struct Ordered(Vec<(DateTime<Utc>, Uuid)>);

impl Ordered {
    pub(super) fn insert(&mut self, key: (DateTime<Utc>, Uuid)) {
        // New streams are the newest, so this is nearly always a push at the end.
        let at = self.0.partition_point(|k| *k < key);
        if self.0.get(at) != Some(&key) {
            self.0.insert(at, key);
        }
    }

    pub(super) fn remove(&mut self, key: &(DateTime<Utc>, Uuid)) {
        if let Ok(at) = self.0.binary_search(key) {
            self.0.remove(at);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn last(&self) -> Option<(DateTime<Utc>, Uuid)> {
        self.0.last().copied()
    }

    /// Newest first, skipping the `offset` newest.
    pub(super) fn newest(&self, offset: usize, limit: usize) -> impl Iterator<Item = &Uuid> {
        let end = self.0.len().saturating_sub(offset);
        let start = end.saturating_sub(limit);
        self.0[start..end].iter().rev().map(|(_, id)| id)
    }

    /// Created at or after `since`, newest first.
    pub(super) fn since(&self, since: DateTime<Utc>) -> impl Iterator<Item = &Uuid> {
        let start = self.0.partition_point(|(created, _)| *created < since);
        self.0[start..].iter().rev().map(|(_, id)| id)
    }

    /// Created at or after `from` and before `to`.
    pub(super) fn between(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> impl Iterator<Item = &Uuid> {
        let start = self.0.partition_point(|(created, _)| *created < from);
        let end = self.0.partition_point(|(created, _)| *created < to);
        self.0[start..end.max(start)].iter().map(|(_, id)| id)
    }
}
