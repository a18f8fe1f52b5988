//! Clips, per stream, with the due index of the work they are owed, as the DynamoDB store
//! keeps them (`STREAM#<id>` / `CLIP#<clip id>`, in the due index under `CLIP#<shard>`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::EmbeddedStore;
use hosting_domain::StreamEvent;
use hosting_domain::clip::{Clip, sort_oldest_first};
use hosting_domain::ports::{ClipStore, CreateClipOutcome, IdempotencyBinding, StoreResult};

#[async_trait]
impl ClipStore for EmbeddedStore {
    async fn create_clip(
        &self,
        clip: &Clip,
        max: u32,
        binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateClipOutcome> {
        let mut state = self.lock()?;
        if !state.holds(binding) {
            return Ok(CreateClipOutcome::KeyLost);
        }
        let clips = state.clips.entry(clip.stream_id).or_default();
        if clips.len() >= max as usize {
            return Ok(CreateClipOutcome::Limit);
        }
        clips.push(clip.clone());
        if let Some(due) = clip.due_at {
            state
                .clips_due
                .insert((due, clip.stream_id, clip.id.clone()));
        }
        state.bind(binding, clip.id.clone());
        Ok(CreateClipOutcome::Created)
    }

    async fn stream_clips(&self, stream_id: Uuid) -> StoreResult<Vec<Clip>> {
        let mut clips = self
            .read()?
            .clips
            .get(&stream_id)
            .cloned()
            .unwrap_or_default();
        sort_oldest_first(&mut clips);
        Ok(clips)
    }

    async fn get_clip(&self, stream_id: Uuid, clip_id: &str) -> StoreResult<Option<Clip>> {
        Ok(self
            .read()?
            .clips
            .get(&stream_id)
            .and_then(|clips| clips.iter().find(|clip| clip.id == clip_id))
            .cloned())
    }

    async fn replace_clip(
        &self,
        read: &Clip,
        next: &Clip,
        event: Option<&StreamEvent>,
    ) -> StoreResult<bool> {
        let mut state = self.lock()?;
        let Some(stored) = state
            .clips
            .get_mut(&read.stream_id)
            .and_then(|clips| clips.iter_mut().find(|clip| clip.id == read.id))
        else {
            return Ok(false);
        };
        if stored.version != read.version {
            return Ok(false);
        }
        let old_due = stored.due_at;
        *stored = next.clone();
        if let Some(due) = old_due {
            state
                .clips_due
                .remove(&(due, read.stream_id, read.id.clone()));
        }
        if let Some(due) = next.due_at {
            state
                .clips_due
                .insert((due, next.stream_id, next.id.clone()));
        }
        if let Some(event) = event {
            state.emit(event.clone());
            drop(state);
            self.outbox_ready.notify_one();
        }
        Ok(true)
    }

    async fn due_clips(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<Clip>> {
        let state = self.read()?;
        Ok(state
            .clips_due
            .iter()
            .take_while(|(due, _, _)| *due <= now)
            .take(limit)
            .filter_map(|(_, stream_id, clip_id)| {
                state
                    .clips
                    .get(stream_id)?
                    .iter()
                    .find(|clip| &clip.id == clip_id)
                    .cloned()
            })
            .collect())
    }
}
