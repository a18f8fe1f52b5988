use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::Notify;
use uuid::Uuid;

use hosting_domain::TimerKind;
use hosting_domain::ports::{StoreResult, Timer, Timers};

#[derive(Default)]
struct Pending {
    /// Due time of each pending (stream, kind) timer.
    by_key: HashMap<(Uuid, TimerKind), DateTime<Utc>>,
    /// The same timers in due order, so taking the due ones never scans the rest.
    by_due: BTreeSet<(DateTime<Utc>, Uuid, TimerKind)>,
}

impl Pending {
    fn insert(&mut self, timer: Timer) {
        self.remove(timer.stream_id, timer.kind);
        self.by_key
            .insert((timer.stream_id, timer.kind), timer.due_at);
        self.by_due
            .insert((timer.due_at, timer.stream_id, timer.kind));
    }

    fn remove(&mut self, stream_id: Uuid, kind: TimerKind) {
        if let Some(due_at) = self.by_key.remove(&(stream_id, kind)) {
            self.by_due.remove(&(due_at, stream_id, kind));
        }
    }
}

/// In-process one-shot timers. Whoever drives them (the local server's loop, or a test with a
/// manual clock) takes the due ones with [`EmbeddedTimers::take_due`] and fires them.
#[derive(Clone, Default)]
pub struct EmbeddedTimers {
    pending: Arc<Mutex<Pending>>,
    changed: Arc<Notify>,
}

impl EmbeddedTimers {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Removes and returns the timers due at `now`, earliest first.
    pub fn take_due(&self, now: DateTime<Utc>) -> Vec<Timer> {
        let mut pending = self.lock();
        let mut due = Vec::new();
        while let Some(&(due_at, stream_id, kind)) = pending.by_due.first() {
            if due_at > now {
                break;
            }
            pending.remove(stream_id, kind);
            due.push(Timer {
                stream_id,
                kind,
                due_at,
            });
        }
        due
    }

    /// The earliest pending due time.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        self.lock().by_due.first().map(|(due_at, _, _)| *due_at)
    }

    pub fn pending(&self) -> Vec<Timer> {
        self.lock()
            .by_due
            .iter()
            .map(|&(due_at, stream_id, kind)| Timer {
                stream_id,
                kind,
                due_at,
            })
            .collect()
    }

    /// Notified whenever a timer is scheduled or cancelled.
    pub fn changed(&self) -> Arc<Notify> {
        self.changed.clone()
    }
}

#[async_trait]
impl Timers for EmbeddedTimers {
    async fn schedule(&self, timer: Timer) -> StoreResult<()> {
        let earliest = {
            let mut pending = self.lock();
            pending.insert(timer);
            pending.by_due.first().map(|(due_at, _, _)| *due_at)
        };
        // Only a new earliest timer changes when the loop must wake.
        if earliest == Some(timer.due_at) {
            self.changed.notify_one();
        }
        Ok(())
    }

    async fn cancel(&self, stream_id: Uuid, kind: TimerKind) -> StoreResult<()> {
        self.lock().remove(stream_id, kind);
        Ok(())
    }
}
