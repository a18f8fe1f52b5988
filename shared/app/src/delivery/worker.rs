//! Processing one queued delivery: attempt it, record the attempt in the webhook's delivery
//! log, then retry later, deactivate the webhook, or dead-letter, as the outcome says.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::app::App;
use crate::metrics::{self, Metric};
use hosting_domain::Webhook;
use hosting_domain::delivery_log::{DeliveredEvent, DeliveryAttempt};
use hosting_domain::error::StoreError;
use hosting_domain::ports::{DeadLetter, Delivery};

use super::client::{AttemptOutcome, Deliverer};
use super::retry;

/// Attempts one brand may have in flight at once, across every worker (docs/webhooks.md, "Fair
/// delivery"): however slow its receivers, a brand holds at most this many workers, each for
/// at most one attempt's timeout.
pub const BRAND_DELIVERY_SLOTS: u32 = 3;
/// A delivery whose brand holds every slot goes back to the queue for at least this long,
/// without an attempt; longer each time it is put back, up to [`MAX_SLOT_WAIT`].
pub const SLOT_WAIT: Duration = Duration::from_secs(3);
pub const MAX_SLOT_WAIT: Duration = Duration::from_secs(60);
/// A slot is held for the attempt's timeout and this much more; a worker that died holding
/// it frees it then.
const SLOT_MARGIN: Duration = Duration::from_secs(5);

/// What became of a delivery after this attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Processed {
    Delivered,
    /// The webhook is gone or inactive: nothing was sent.
    Skipped,
    /// The brand held every delivery slot: queued again for later, nothing sent.
    Deferred,
    Deactivated,
    RetryScheduled,
    DeadLettered,
}

pub async fn process(
    app: &App,
    deliverer: &Deliverer,
    delivery: Delivery,
) -> Result<Processed, StoreError> {
    // The slot first: a brand holding every slot costs its deferred deliveries one read.
    let holder = uuid::Uuid::new_v4().simple().to_string();
    let now = app.clock.now();
    let lease = chrono::TimeDelta::from_std(app.config.webhook_timeout + SLOT_MARGIN)
        .unwrap_or(chrono::TimeDelta::MAX);
    let Some(slot) = app
        .delivery_slots()
        .acquire_delivery_slot(
            &delivery.brand_id,
            BRAND_DELIVERY_SLOTS,
            &holder,
            now,
            now + lease,
        )
        .await?
    else {
        return defer(app, delivery).await;
    };
    let release = || async {
        if let Err(err) = app
            .delivery_slots()
            .release_delivery_slot(&delivery.brand_id, slot, &holder)
            .await
        {
            tracing::warn!(brand_id = %delivery.brand_id, error = %err, "delivery slot not freed; it frees itself when its time runs out");
        }
    };
    // A deleted or deactivated webhook receives nothing more.
    let webhook = match app
        .webhooks()
        .get_webhook(&delivery.brand_id, delivery.webhook_id)
        .await
    {
        Ok(Some(webhook)) if webhook.active => webhook,
        Ok(_) => {
            release().await;
            return Ok(Processed::Skipped);
        }
        Err(err) => {
            release().await;
            return Err(err);
        }
    };
    let (outcome, attempted_at, duration_ms) = attempt(app, deliverer, &webhook, &delivery).await;
    release().await;
    let (processed, next_attempt_at) = match &outcome {
        AttemptOutcome::Delivered { .. } => (Processed::Delivered, None),
        AttemptOutcome::Gone => {
            app.webhooks()
                .deactivate_webhook(&webhook.brand_id, webhook.id)
                .await?;
            (Processed::Deactivated, None)
        }
        AttemptOutcome::Failed {
            reason,
            retry_after,
            ..
        } => {
            tracing::info!(
                event_id = %delivery.event_id,
                webhook_id = %delivery.webhook_id,
                attempt = delivery.attempt,
                reason = %reason,
                "delivery attempt failed"
            );
            match retry::next_delay(
                &app.config.webhook_retry_delays,
                delivery.attempt,
                *retry_after,
            ) {
                Some(delay) => {
                    let next = Delivery {
                        attempt: delivery.attempt + 1,
                        deferrals: 0,
                        ..delivery.clone()
                    };
                    app.queue.enqueue(next, delay).await?;
                    let at = chrono::TimeDelta::from_std(delay)
                        .ok()
                        .map(|d| app.clock.now() + d);
                    (Processed::RetryScheduled, at)
                }
                None => {
                    app.queue
                        .dead_letter(DeadLetter {
                            delivery: delivery.clone(),
                            last_error: reason.clone(),
                            failed_at: app.clock.now(),
                        })
                        .await?;
                    (Processed::DeadLettered, None)
                }
            }
        }
    };
    count(&processed);
    record(
        app,
        &delivery,
        &outcome,
        attempted_at,
        duration_ms,
        next_attempt_at,
    )
    .await;
    Ok(processed)
}

/// Puts a delivery whose brand holds every slot back on the queue, unattempted: for
/// [`SLOT_WAIT`] the first time, doubling with each deferral up to [`MAX_SLOT_WAIT`], each
/// between that and half as much again (spread, so a burst comes back a little at a time). A
/// brand whose receivers hang thus costs the queue a few requests a minute per delivery, not a
/// few a second.
pub async fn defer(app: &App, delivery: Delivery) -> Result<Processed, StoreError> {
    let base = SLOT_WAIT
        .saturating_mul(1u32 << delivery.deferrals.min(8))
        .min(MAX_SLOT_WAIT);
    let wait = base + base.mul_f64(rand::random_range(0.0..=0.5));
    let again = Delivery {
        deferrals: delivery.deferrals.saturating_add(1),
        ..delivery
    };
    app.queue.enqueue(again, wait).await?;
    metrics::count(Metric::DeliveriesDeferred);
    Ok(Processed::Deferred)
}

/// The metrics of an attempt that was made: a `410` counts as a failure, and a dead letter
/// both as a failure and as dead-lettered.
fn count(processed: &Processed) {
    match processed {
        Processed::Delivered => metrics::count(Metric::DeliveriesSucceeded),
        Processed::Skipped | Processed::Deferred => {}
        Processed::Deactivated | Processed::RetryScheduled => {
            metrics::count(Metric::DeliveriesFailed)
        }
        Processed::DeadLettered => {
            metrics::count(Metric::DeliveriesFailed);
            metrics::count(Metric::DeliveriesDeadLettered);
        }
    }
}

/// One attempt, timed.
pub async fn attempt(
    app: &App,
    deliverer: &Deliverer,
    webhook: &Webhook,
    delivery: &Delivery,
) -> (AttemptOutcome, DateTime<Utc>, u64) {
    let attempted_at = app.clock.now();
    let started = Instant::now();
    let outcome = deliverer.attempt(webhook, delivery, attempted_at).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    (outcome, attempted_at, duration_ms)
}

/// Adds the attempt to the webhook's delivery log. A log write that fails is reported, not
/// retried: retrying would send the delivery again.
pub async fn record(
    app: &App,
    delivery: &Delivery,
    outcome: &AttemptOutcome,
    attempted_at: DateTime<Utc>,
    duration_ms: u64,
    next_attempt_at: Option<DateTime<Utc>>,
) {
    let event_created_at = created_at(&delivery.body).unwrap_or(attempted_at);
    let entry = DeliveryAttempt {
        brand_id: delivery.brand_id.clone(),
        webhook_id: delivery.webhook_id,
        event_id: delivery.event_id.clone(),
        event_type: delivery.event_type,
        event_created_at,
        attempt: delivery.attempt,
        attempted_at,
        succeeded: matches!(outcome, AttemptOutcome::Delivered { .. }),
        response_status: outcome.response_status(),
        duration_ms,
        error: outcome.error(),
        next_attempt_at,
    };
    let event = DeliveredEvent {
        brand_id: delivery.brand_id.clone(),
        webhook_id: delivery.webhook_id,
        event_id: delivery.event_id.clone(),
        event_type: delivery.event_type,
        event_created_at,
        body: delivery.body.clone(),
    };
    if let Err(err) = app.delivery_log().record_attempt(&entry, &event).await {
        tracing::warn!(error = %err, event_id = %delivery.event_id, "delivery log write failed");
    }
}

/// The `created_at` of an event body.
fn created_at(body: &str) -> Option<DateTime<Utc>> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    DateTime::parse_from_rfc3339(value["created_at"].as_str()?)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
