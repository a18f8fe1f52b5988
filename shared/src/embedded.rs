//! The embedded backends assembled into an [`App`]: what the local server and the test suite
//! run on.

use std::sync::Arc;
use std::time::Duration;

use crate::app::{App, AppParts};
use crate::clock::Clock;
use crate::config::Config;
use crate::memory::{MemoryStore, MemoryTimers};
use crate::ports::RoomProvider;
use crate::service;

/// How often the timer loop looks at the clock when nothing wakes it.
const TIMER_POLL: Duration = Duration::from_millis(500);

#[derive(Clone)]
pub struct Embedded {
    pub app: App,
    pub store: MemoryStore,
    pub timers: MemoryTimers,
}

impl Embedded {
    pub fn new(
        config: Config,
        clock: Arc<dyn Clock>,
        rooms: Option<Arc<dyn RoomProvider>>,
    ) -> Self {
        let store = MemoryStore::new();
        let timers = MemoryTimers::new();
        let app = App::new(AppParts {
            config,
            clock,
            store: Arc::new(store.clone()),
            timers: Arc::new(timers.clone()),
            rooms,
        });
        Self { app, store, timers }
    }

    /// Fires every timer due by the app's clock; returns how many changed a stream.
    pub async fn fire_due_timers(&self) -> usize {
        let mut changed = 0;
        for timer in self.timers.take_due(self.app.clock.now()) {
            match service::timers::fire(&self.app, &timer).await {
                Ok(true) => changed += 1,
                Ok(false) => {}
                Err(err) => {
                    tracing::error!(stream_id = %timer.stream_id, error = %err, "timer failed; retrying");
                    // Put it back so the next pass retries it.
                    let _ = crate::ports::Timers::schedule(&self.timers, timer).await;
                }
            }
        }
        changed
    }

    /// Runs the timers on the wall clock until the task is dropped.
    pub async fn run_timers(self) {
        let changed = self.timers.changed();
        loop {
            self.fire_due_timers().await;
            let wait = self
                .timers
                .next_due()
                .and_then(|due| (due - self.app.clock.now()).to_std().ok())
                .map_or(TIMER_POLL, |until| until.min(TIMER_POLL));
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = changed.notified() => {}
            }
        }
    }
}
