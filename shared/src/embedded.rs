//! The embedded backends assembled into an [`App`]: what the local server and the test suite
//! run on. Background loops stand in for what AWS runs as separate functions: the timers, the
//! outbox relay and the delivery worker.

use std::sync::Arc;
use std::time::Duration;

use crate::app::{App, AppParts};
use crate::clock::Clock;
use crate::config::Config;
use crate::delivery::{Deliverer, relay, worker};
use crate::memory::{MemoryQueue, MemoryStore, MemoryTimers};
use crate::ports::RoomProvider;
use crate::service;

/// How often the background loops look again when nothing wakes them.
const POLL: Duration = Duration::from_millis(500);

#[derive(Clone)]
pub struct Embedded {
    pub app: App,
    pub store: MemoryStore,
    pub timers: MemoryTimers,
    pub queue: MemoryQueue,
}

impl Embedded {
    pub fn new(
        config: Config,
        clock: Arc<dyn Clock>,
        rooms: Option<Arc<dyn RoomProvider>>,
    ) -> Self {
        let store = MemoryStore::new();
        let timers = MemoryTimers::new();
        let queue = MemoryQueue::new();
        let app = App::new(AppParts {
            config,
            clock,
            store: Arc::new(store.clone()),
            timers: Arc::new(timers.clone()),
            queue: Arc::new(queue.clone()),
            rooms,
        });
        Self {
            app,
            store,
            timers,
            queue,
        }
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

    /// Runs the timers on the app's clock, forever.
    pub async fn run_timers(self) {
        let changed = self.timers.changed();
        loop {
            self.fire_due_timers().await;
            let wait = self
                .timers
                .next_due()
                .and_then(|due| (due - self.app.clock.now()).to_std().ok())
                .map_or(POLL, |until| until.min(POLL));
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = changed.notified() => {}
            }
        }
    }

    /// Relays the outbox to the queue whenever events land in it, forever.
    pub async fn run_relay(self) {
        let ready = self.store.outbox_ready();
        loop {
            if let Err(err) = relay::relay_pending(&self.app).await {
                tracing::error!(error = %err, "outbox relay failed; retrying");
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = ready.notified() => {}
            }
        }
    }

    /// Delivers queued deliveries, each in its own task so that one slow receiver never
    /// delays another, until the queue closes.
    pub async fn run_deliveries(self, deliverer: Deliverer) {
        let Some(mut ready) = self.queue.take_receiver() else {
            tracing::error!("the delivery loop is already running");
            return;
        };
        while let Some(delivery) = ready.recv().await {
            let (app, deliverer) = (self.app.clone(), deliverer.clone());
            tokio::spawn(async move {
                if let Err(err) = worker::process(&app, &deliverer, delivery.clone()).await {
                    tracing::error!(event_id = %delivery.event_id, error = %err, "delivery failed; requeued");
                    let _ = app.queue.enqueue(delivery, POLL).await;
                }
            });
        }
    }

    /// Starts every background loop; they stop when the returned handles are aborted.
    pub fn spawn_background(&self, deliverer: Deliverer) -> Vec<tokio::task::JoinHandle<()>> {
        vec![
            tokio::spawn(self.clone().run_timers()),
            tokio::spawn(self.clone().run_relay()),
            tokio::spawn(self.clone().run_deliveries(deliverer)),
        ]
    }
}
