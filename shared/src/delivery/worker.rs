//! Processing one queued delivery: attempt it, then retry later, deactivate the webhook, or
//! dead-letter, as the outcome says.

use crate::app::App;
use crate::error::StoreError;
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
    match deliverer
        .attempt(&webhook, &delivery, app.clock.now())
        .await
    {
        AttemptOutcome::Delivered => Ok(Processed::Delivered),
        AttemptOutcome::Gone => {
            app.store
                .deactivate_webhook(&webhook.brand_id, webhook.id)
                .await?;
            Ok(Processed::Deactivated)
        }
        AttemptOutcome::Failed {
            reason,
            retry_after,
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
                retry_after,
            ) {
                Some(delay) => {
                    let next = Delivery {
                        attempt: delivery.attempt + 1,
                        ..delivery
                    };
                    app.queue.enqueue(next, delay).await?;
                    Ok(Processed::RetryScheduled)
                }
                None => {
                    app.queue
                        .dead_letter(DeadLetter {
                            delivery,
                            last_error: reason,
                            failed_at: app.clock.now(),
                        })
                        .await?;
                    Ok(Processed::DeadLettered)
                }
            }
        }
    }
}
