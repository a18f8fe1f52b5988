use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::domain::TimerKind;
use crate::ports::{StoreResult, Timer, Timers};

/// Due time of each pending (stream, kind) timer.
type Pending = HashMap<(Uuid, TimerKind), DateTime<Utc>>;

/// In-process one-shot timers. Whoever drives them (the local server's loop, or a test with a
/// manual clock) takes the due ones with [`MemoryTimers::take_due`] and fires them.
#[derive(Clone, Default)]
pub struct MemoryTimers {
    pending: Arc<Mutex<Pending>>,
    changed: Arc<Notify>,
}

impl MemoryTimers {
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes and returns the timers due at `now`, earliest first.
    pub fn take_due(&self, now: DateTime<Utc>) -> Vec<Timer> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let mut due: Vec<Timer> = pending
            .iter()
            .filter(|(_, due_at)| **due_at <= now)
            .map(|((stream_id, kind), due_at)| Timer {
                stream_id: *stream_id,
                kind: *kind,
                due_at: *due_at,
            })
            .collect();
        for timer in &due {
            pending.remove(&(timer.stream_id, timer.kind));
        }
        due.sort_by_key(|t| (t.due_at, t.stream_id, t.kind));
        due
    }

    /// The earliest pending due time.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.values().min().copied()
    }

    pub fn pending(&self) -> Vec<Timer> {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending
            .iter()
            .map(|((stream_id, kind), due_at)| Timer {
                stream_id: *stream_id,
                kind: *kind,
                due_at: *due_at,
            })
            .collect()
    }

    /// Notified whenever a timer is scheduled or cancelled.
    pub fn changed(&self) -> Arc<Notify> {
        self.changed.clone()
    }
}

#[async_trait]
impl Timers for MemoryTimers {
    async fn schedule(&self, timer: Timer) -> StoreResult<()> {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((timer.stream_id, timer.kind), timer.due_at);
        self.changed.notify_one();
        Ok(())
    }

    async fn cancel(&self, stream_id: Uuid, kind: TimerKind) -> StoreResult<()> {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(stream_id, kind));
        self.changed.notify_one();
        Ok(())
    }
}
