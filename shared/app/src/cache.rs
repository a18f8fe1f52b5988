//! Small read-through caches in front of the store, expiring on the app's clock.
//!
//! - API keys (with their brand) for [`KEY_TTL`]: a revoked key stops working within that
//!   time on every instance.
//! - The creators catalog for [`CREATORS_TTL`], the same minute `GET /creators` is cacheable
//!   for.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use chrono::{DateTime, TimeDelta, Utc};

pub const KEY_TTL: TimeDelta = TimeDelta::seconds(5);
pub const CREATORS_TTL: TimeDelta = TimeDelta::seconds(60);
/// Entries kept at most; past it, the cache starts over.
const MAX_ENTRIES: usize = 100_000;

pub struct TtlCache<K, V> {
    ttl: TimeDelta,
    /// Hashed with foldhash: every request looks its key up, and the keys (key digests, brand
    /// ids) are not chosen by a caller.
    entries: Mutex<HashMap<K, (DateTime<Utc>, V), foldhash::fast::RandomState>>,
}

impl<K: Eq + Hash + Clone, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: TimeDelta) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::default()),
        }
    }

    /// The cached value of `key` if it is fresh at `now`.
    pub fn get(&self, key: &K, now: DateTime<Utc>) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(key)
            .filter(|(stored, _)| now >= *stored && now - *stored < self.ttl)
            .map(|(_, value)| value.clone())
    }

    pub fn put(&self, key: K, value: V, now: DateTime<Utc>) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        // Starting over when full keeps every call O(1) amortized; a cache miss only costs a
        // store read.
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key, (now, value));
    }

    pub fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_on_the_given_clock() {
        let cache = TtlCache::new(TimeDelta::seconds(5));
        let t0 = Utc::now();
        cache.put("k", 1, t0);
        assert_eq!(cache.get(&"k", t0 + TimeDelta::milliseconds(4999)), Some(1));
        assert_eq!(cache.get(&"k", t0 + TimeDelta::seconds(5)), None);
        // A clock that moved back does not make an entry fresh forever.
        assert_eq!(cache.get(&"k", t0 - TimeDelta::seconds(1)), None);
    }
}
