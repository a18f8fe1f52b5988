//! Processing one queued delivery: attempt it, record the attempt in the webhook's delivery
//! log, then retry later, deactivate the webhook, or dead-letter, as the outcome says.

use std::time::Instant;

use chrono::{DateTime, Utc};

use crate::app::App;
use crate::domain::Webhook;
use crate::domain::delivery_log::DeliveryAttempt;
use crate::error::StoreError;
use crate::metrics::{self, Metric};
use crate::ports::{DeadLetter, Delivery};

use super::client::{AttemptOutcome, Deliverer};
use super::retry;

/// What became of a delivery after this attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Processed {
    Delivered,
    /// The webhook is gone or inactive: nothing was sent.
    Skipped,
    Deactivated,
    RetryScheduled,
    DeadLettered,
}

pub async fn process(
    app: &App,
    deliverer: &Deliverer,
    delivery: Delivery,
) -> Result<Processed, StoreError> {
    // A deleted or deactivated webhook receives nothing more.
    let Some(webhook) = app
        .store
        .get_webhook(&delivery.brand_id, delivery.webhook_id)
        .await?
        .filter(|w| w.active)
    else {
        return Ok(Processed::Skipped);
    };
    let (outcome, attempted_at, duration_ms) = attempt(app, deliverer, &webhook, &delivery).await;
    let (processed, next_attempt_at) = match &outcome {
        AttemptOutcome::Delivered { .. } => (Processed::Delivered, None),
        AttemptOutcome::Gone => {
            app.store
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

/// The metrics of an attempt that was made: a `410` counts as a failure, and a dead letter
/// both as a failure and as dead-lettered.
fn count(processed: &Processed) {
    match processed {
        Processed::Delivered => metrics::count(Metric::DeliveriesSucceeded),
        Processed::Skipped => {}
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
    let entry = DeliveryAttempt {
        brand_id: delivery.brand_id.clone(),
        webhook_id: delivery.webhook_id,
        event_id: delivery.event_id.clone(),
        event_type: delivery.event_type,
        event_created_at: created_at(&delivery.body).unwrap_or(attempted_at),
        attempt: delivery.attempt,
        attempted_at,
        succeeded: matches!(outcome, AttemptOutcome::Delivered { .. }),
        response_status: outcome.response_status(),
        duration_ms,
        error: outcome.error(),
        next_attempt_at,
        body: delivery.body.clone(),
    };
    if let Err(err) = app.store.record_attempt(&entry).await {
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
