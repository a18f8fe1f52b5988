//! Relays the event outbox to the delivery queue. The table's stream invokes it with the
//! events just written, and it relays those, each on its own; a schedule invokes it as a
//! sweep, which relays whatever a failed or lost invocation left pending and hands parked
//! deliveries whose wake-up is due to their brand's free slots.

use hosting_app::App;
use hosting_app::delivery::{parking, relay};
use hosting_app::sweep_budget::SweepBudget;
use hosting_aws::dynamodb::event_from_stream_image;
use serde::Serialize;

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Relayed {
    pub relayed: usize,
}

/// A DynamoDB stream batch (it has `Records`), or anything else from the schedule: a sweep.
pub async fn handle(
    app: &App,
    invocation: serde_json::Value,
) -> Result<Relayed, hosting_domain::error::StoreError> {
    handle_within(app, invocation, SweepBudget::default()).await
}

/// [`handle`], a sweep stopping within `budget` (in Lambda: before the invocation's timeout).
pub async fn handle_within(
    app: &App,
    invocation: serde_json::Value,
    budget: SweepBudget,
) -> Result<Relayed, hosting_domain::error::StoreError> {
    if invocation.get("Records").is_none() {
        let relayed = relay::sweep_within(app, relay::SWEEP_GRACE, budget).await?;
        // Measured once a minute, by the scheduled sweep: the alarm on it needs no other
        // source.
        hosting_app::metrics::oldest_pending_event_age(relay::oldest_pending_age(app).await?);
        // Catches the hand-overs no release made (docs/webhooks.md, "Fair delivery").
        let woken = parking::sweep(app).await?;
        if woken > 0 {
            tracing::info!(woken, "parked deliveries swept back to the queue");
        }
        return Ok(Relayed { relayed });
    }
    let batch: aws_lambda_events::event::dynamodb::Event = serde_json::from_value(invocation)
        .map_err(|e| hosting_domain::error::StoreError::Corrupt(format!("stream batch: {e}")))?;
    let mut events = Vec::with_capacity(batch.records.len());
    for record in batch.records.iter().filter(|r| r.event_name == "INSERT") {
        let image = serde_json::to_value(&record.change.new_image).unwrap_or_default();
        match event_from_stream_image(&image) {
            Ok(event) => events.push(event),
            // Not an event item (the trigger's filter lets only events through), or damaged:
            // the sweep still finds a pending event in the table.
            Err(err) => tracing::warn!(error = %err, "stream record skipped"),
        }
    }
    // Failures are kept per event in the outbox; the batch itself never fails, so one bad
    // event never holds up the stream's shard.
    Ok(Relayed {
        relayed: relay::relay_events(app, events).await,
    })
}
