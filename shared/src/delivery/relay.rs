//! From the outbox to the delivery queue: one delivery per (event, webhook that wants it).
//! Relaying again after a crash only repeats deliveries (receivers deduplicate on the event
//! id); it never loses one.

use std::time::Duration;

use crate::app::App;
use crate::domain::StreamEvent;
use crate::error::StoreError;
use crate::ports::Delivery;

/// Events taken from the outbox per pass.
const BATCH: usize = 100;

/// Queues the deliveries of one event.
pub async fn fan_out(app: &App, event: &StreamEvent) -> Result<usize, StoreError> {
    let webhooks = app.store.list_webhooks(&event.brand_id).await?;
    let mut queued = 0;
    for webhook in webhooks.iter().filter(|w| w.wants(event.event_type)) {
        app.queue
            .enqueue(
                Delivery {
                    event_id: event.id.clone(),
                    event_type: event.event_type,
                    webhook_id: webhook.id,
                    attempt: 1,
                    body: event.body.clone(),
                },
                Duration::ZERO,
            )
            .await?;
        queued += 1;
    }
    Ok(queued)
}

/// Relays what the outbox holds; returns how many events were relayed.
pub async fn relay_pending(app: &App) -> Result<usize, StoreError> {
    let mut relayed = 0;
    loop {
        let events = app.store.pending_events(BATCH).await?;
        if events.is_empty() {
            return Ok(relayed);
        }
        for event in &events {
            fan_out(app, event).await?;
        }
        let ids: Vec<String> = events.iter().map(|e| e.id.clone()).collect();
        app.store.mark_relayed(&ids).await?;
        relayed += events.len();
    }
}
