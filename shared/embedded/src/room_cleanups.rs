//! Room cleanups, pending until their rooms are gone.

use crate::store::EmbeddedStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use hosting_domain::ports::*;
use hosting_domain::room_cleanup::RoomCleanup;

#[async_trait]
impl RoomCleanupStore for EmbeddedStore {
    async fn due_room_cleanups(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<RoomCleanup>> {
        let state = self.read()?;
        Ok(state
            .room_cleanups_due
            .iter()
            .take_while(|(due_at, _)| *due_at < now)
            .take(limit)
            .filter_map(|(_, id)| state.room_cleanups.get(id).cloned())
            .collect())
    }

    async fn put_room_cleanup(&self, cleanup: &RoomCleanup) -> StoreResult<()> {
        self.lock()?.put_room_cleanup(cleanup);
        Ok(())
    }

    async fn settle_room_cleanup(
        &self,
        read: &RoomCleanup,
        next: Option<&RoomCleanup>,
    ) -> StoreResult<()> {
        let mut state = self.lock()?;
        // As DynamoDB's condition: only the record as it was read is settled.
        if state.room_cleanups.get(&read.stream_id) != Some(read) {
            return Ok(());
        }
        match next {
            Some(next) => state.put_room_cleanup(next),
            None => state.remove_room_cleanup(read.stream_id),
        }
        Ok(())
    }
}
