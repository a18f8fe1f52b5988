//! Processing one queued delivery: attempt it, record the attempt in the webhook's delivery
//! log, then retry later, deactivate the webhook, or dead-letter, as the outcome says.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::app::App;
use crate::metrics::{self, Metric};
use hosting_domain::delivery_log::{DeliveredEvent, DeliveryAttempt};
use hosting_domain::error::StoreError;
use hosting_domain::ports::{DeadLetter, Delivery, ParkedClaim, StoreResult, WebhookDisable};
use hosting_domain::sealed::SecretScope;
use hosting_domain::webhook::DisabledReason;
use hosting_domain::{StreamEvent, Webhook};

use super::client::{AttemptOutcome, Deliverer, Signing};
use super::parking;
use super::retry;

/// Attempts one brand may have in flight at once, across every worker (docs/webhooks.md, "Fair
/// delivery"): however slow its receivers, a brand holds at most this many workers, each for
/// at most one attempt's timeout.
pub const BRAND_DELIVERY_SLOTS: u32 = 3;
/// A slot is held for the attempt's timeout and this much more; a worker that died holding
/// it frees it then.
const SLOT_MARGIN: Duration = Duration::from_secs(5);

/// How long a task goes on handing its slot to parked deliveries: each attempt it begins ends
/// within this time from its message's receipt, well inside the delivery function's timeout
/// (60 s) and the queue's visibility timeout.
pub const HANDOVER_WINDOW: Duration = Duration::from_secs(30);

/// Parked deliveries a slot's holder claims at once when its receivers answer fast: fewer
/// requests per delivery, a claim covering at most this many attempts.
const MAX_HANDOVER_BATCH: usize = 8;
/// A batch that took less than this grows; a slower one falls back to one delivery.
const FAST_BATCH: Duration = Duration::from_secs(1);

/// How long a slot is held at most: the attempt's timeout and [`SLOT_MARGIN`].
pub fn slot_lease(app: &App) -> Duration {
    app.config.webhook_timeout + SLOT_MARGIN
}

/// What became of a delivery after this attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Processed {
    Delivered,
    /// The webhook is gone or inactive: nothing was sent.
    Skipped,
    /// The brand held every delivery slot: parked until one frees, nothing sent.
    Parked,
    Deactivated,
    RetryScheduled,
    DeadLettered,
}

pub async fn process(
    app: &App,
    deliverer: &Deliverer,
    delivery: Delivery,
) -> Result<Processed, StoreError> {
    let started = Instant::now();
    // The slot first: a brand holding every slot costs a waiting delivery one read and its
    // parking.
    let holder = uuid::Uuid::new_v4().simple().to_string();
    let now = app.clock.now();
    let Some(slot) = app
        .delivery_slots()
        .acquire_delivery_slot(
            &delivery.brand_id,
            BRAND_DELIVERY_SLOTS,
            &holder,
            now,
            now + lease(slot_lease(app)),
        )
        .await?
    else {
        let brand_id = delivery.brand_id.clone();
        parking::park(app, &brand_id, vec![delivery]).await?;
        return Ok(Processed::Parked);
    };
    let held = HeldSlot {
        brand_id: delivery.brand_id.clone(),
        slot,
        holder,
        until: now + lease(slot_lease(app)),
    };
    // A store failure here keeps the message, for the queue to deliver it again.
    let processed = match deliver(app, deliverer, &delivery).await {
        Ok(processed) => processed,
        Err(err) => {
            held.release(app).await;
            return Err(err);
        }
    };
    hand_over(app, deliverer, held, started).await;
    Ok(processed)
}

/// A delivery slot this task holds, until `until`.
struct HeldSlot {
    brand_id: String,
    slot: u32,
    holder: String,
    until: DateTime<Utc>,
}

impl HeldSlot {
    /// Whether an attempt begun now ends within [`HANDOVER_WINDOW`] of the message's receipt.
    fn fits_another(&self, app: &App, started: Instant) -> bool {
        started.elapsed() + slot_lease(app) <= HANDOVER_WINDOW
    }

    /// Holds the slot for one more attempt from now, extending it only when the time left
    /// would not cover one; `false` when it is no longer this task's.
    async fn cover_an_attempt(&mut self, app: &App) -> Result<bool, StoreError> {
        let now = app.clock.now();
        if self.until - now > lease(app.config.webhook_timeout + Duration::from_secs(1)) {
            return Ok(true);
        }
        let until = now + lease(slot_lease(app));
        let extended = app
            .delivery_slots()
            .extend_delivery_slot(&self.brand_id, self.slot, &self.holder, until)
            .await?;
        if extended {
            self.until = until;
        }
        Ok(extended)
    }

    /// Frees the slot, then hands the brand's free slots to its parked deliveries through the
    /// queue.
    async fn release(&self, app: &App) {
        match app
            .delivery_slots()
            .release_delivery_slot(&self.brand_id, self.slot, &self.holder)
            .await
        {
            Ok(()) => parking::after_release(app, &self.brand_id).await,
            Err(err) => {
                tracing::warn!(brand_id = %self.brand_id, error = %err, "delivery slot not freed; it frees itself when its time runs out, and the sweep hands it over");
            }
        }
    }
}

/// The slot passes to the brand's oldest parked deliveries, in this task, a batch after
/// another while [`HANDOVER_WINDOW`] lasts, and is released when none waits (docs/webhooks.md,
/// "Fair delivery"). A batch grows while its receivers answer fast and falls to one when they
/// do not, so a slow receiver holds no more than one claimed delivery at a time. A claimed
/// delivery that the window (or a lost slot) leaves unattempted goes back through the queue;
/// one that fails on a store error stays parked under its claim, and is handed over again once
/// the claim runs out.
async fn hand_over(app: &App, deliverer: &Deliverer, mut held: HeldSlot, started: Instant) {
    let brand_id = held.brand_id.clone();
    let brand_id = brand_id.as_str();
    let mut batch = 1;
    loop {
        if !held.fits_another(app, started) {
            held.release(app).await;
            return;
        }
        match app
            .delivery_slots()
            .release_delivery_slot_unless_parked(brand_id, held.slot, &held.holder)
            .await
        {
            Ok(true) => return,
            Ok(false) => {}
            Err(err) => {
                tracing::warn!(brand_id, error = %err, "delivery slot not handed over");
                held.release(app).await;
                return;
            }
        }
        let now = app.clock.now();
        let claim = ParkedClaim {
            limit: batch,
            // Each slot's holder takes its own stretch of the oldest.
            offset: held.slot as usize * batch,
            now,
            until: now + lease(slot_lease(app).saturating_mul(batch as u32)),
        };
        let claimed = match app
            .parked_deliveries()
            .claim_parked_deliveries(brand_id, claim)
            .await
        {
            Ok((claimed, more)) if claimed.is_empty() => {
                held.release(app).await;
                if !more {
                    // Nothing parked at all: the wake-up is settled, so releases stop
                    // looking.
                    if let Err(err) = parking::settle_wake(app, brand_id).await {
                        tracing::warn!(brand_id, error = %err, "wake-up not settled; the sweep will");
                    }
                }
                return;
            }
            Ok((claimed, _)) => claimed,
            Err(err) => {
                tracing::warn!(brand_id, error = %err, "parked deliveries not handed over");
                held.release(app).await;
                return;
            }
        };
        metrics::count_many(Metric::ParkedDeliveriesWoken, claimed.len());
        let batch_started = Instant::now();
        let mut done = Vec::with_capacity(claimed.len());
        let mut slot_lost = false;
        let mut left = Vec::new();
        let mut claimed = claimed.into_iter();
        for parked in claimed.by_ref() {
            if !held.fits_another(app, started) {
                left.push(parked);
                break;
            }
            match held.cover_an_attempt(app).await {
                Ok(true) => {}
                Ok(false) => slot_lost = true,
                Err(err) => {
                    tracing::warn!(brand_id, error = %err, "delivery slot not extended");
                    slot_lost = true;
                }
            }
            if slot_lost {
                left.push(parked);
                break;
            }
            match deliver(app, deliverer, &parked.delivery).await {
                Ok(_) => done.push(parked.key),
                Err(err) => {
                    tracing::warn!(brand_id, error = %err, "parked delivery left parked until its claim runs out");
                }
            }
        }
        // Those the window or a lost slot left unattempted go back through the queue now,
        // not after their claim.
        left.extend(claimed);
        if !left.is_empty() {
            let keys: Vec<String> = left.iter().map(|p| p.key.clone()).collect();
            match app
                .queue
                .enqueue_now(left.into_iter().map(|p| p.delivery).collect())
                .await
            {
                Ok(()) => done.extend(keys),
                Err(err) => {
                    tracing::warn!(brand_id, error = %err, "parked deliveries left parked until their claim runs out");
                }
            }
        }
        if let Err(err) = app
            .parked_deliveries()
            .remove_parked_deliveries(brand_id, &done)
            .await
        {
            // Their claims run out and they are attempted again: at least once.
            tracing::warn!(brand_id, error = %err, "delivered parked deliveries not removed");
        }
        if slot_lost {
            // Its time ran out and another holds it: nothing of it is left to pass on.
            return;
        }
        batch = if batch_started.elapsed() < FAST_BATCH {
            (batch * 2).min(MAX_HANDOVER_BATCH)
        } else {
            1
        };
    }
}

/// Attempts one delivery whose brand's slot is held: a deleted webhook receives nothing, a
/// disabled one's delivery ends failed unattempted; the outcome is retried, dead-lettered or
/// disables the webhook; the attempt is logged, and the webhook's health kept
/// (docs/webhooks.md, "Endpoint health").
async fn deliver(
    app: &App,
    deliverer: &Deliverer,
    delivery: &Delivery,
) -> Result<Processed, StoreError> {
    let webhook = match app
        .webhooks()
        .get_webhook(&delivery.brand_id, delivery.webhook_id)
        .await?
    {
        Some(webhook) if webhook.active => webhook,
        Some(_) => {
            // Recoverable with `redeliver` `since` once the webhook is enabled again.
            record(
                app,
                delivery,
                &AttemptOutcome::NotAttempted,
                app.clock.now(),
                0,
                None,
            )
            .await;
            return Ok(Processed::Skipped);
        }
        None => return Ok(Processed::Skipped),
    };
    let (outcome, attempted_at, duration_ms) = attempt(app, deliverer, &webhook, delivery).await?;
    let (processed, next_attempt_at) = match &outcome {
        AttemptOutcome::Delivered { .. } => {
            // A healthy webhook costs no write here.
            if webhook.failing_since.is_some()
                && let Err(err) = app
                    .webhooks()
                    .clear_webhook_failing(&webhook.brand_id, webhook.id)
                    .await
            {
                tracing::warn!(webhook_id = %webhook.id, error = %err, "failing_since not cleared; the next success clears it");
            }
            (Processed::Delivered, None)
        }
        AttemptOutcome::Gone => {
            disable(app, &webhook, DisabledReason::Gone, attempted_at).await?;
            (Processed::Deactivated, None)
        }
        AttemptOutcome::NotAttempted => (Processed::Skipped, None),
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
            let disable_after = lease(app.config.webhook_disable_after);
            if webhook.fails_too_long(attempted_at, disable_after)
                && disable(app, &webhook, DisabledReason::Failing, attempted_at).await?
            {
                (Processed::Deactivated, None)
            } else {
                if webhook.failing_since.is_none()
                    && let Err(err) = app
                        .webhooks()
                        .mark_webhook_failing(&webhook.brand_id, webhook.id, attempted_at)
                        .await
                {
                    tracing::warn!(webhook_id = %webhook.id, error = %err, "failing_since not set; the next failure sets it");
                }
                retry_or_dead_letter(app, delivery, reason, *retry_after).await?
            }
        }
    };
    count(&processed);
    record(
        app,
        delivery,
        &outcome,
        attempted_at,
        duration_ms,
        next_attempt_at,
    )
    .await;
    Ok(processed)
}

/// Disables `webhook` for `reason` with its `webhook.disabled` event, unless another attempt,
/// a success or a `PATCH` changed it first; whether this call disabled it.
async fn disable(
    app: &App,
    webhook: &Webhook,
    reason: DisabledReason,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let mut disabled = webhook.clone();
    disabled.active = false;
    disabled.disabled_reason = Some(reason);
    disabled.failing_since.get_or_insert(at);
    let disable = WebhookDisable {
        brand_id: webhook.brand_id.clone(),
        webhook_id: webhook.id,
        reason,
        failing_since: webhook.failing_since,
        at,
        event: StreamEvent::webhook_disabled(&disabled, at),
    };
    let done = app.webhooks().disable_webhook(&disable).await?;
    if done {
        metrics::count(Metric::WebhooksDisabled);
        tracing::info!(webhook_id = %webhook.id, reason = reason.as_str(), "webhook disabled");
    }
    Ok(done)
}

/// A failed attempt's retry, after its delay, or its dead letter when none is left.
async fn retry_or_dead_letter(
    app: &App,
    delivery: &Delivery,
    reason: &str,
    retry_after: Option<Duration>,
) -> Result<(Processed, Option<DateTime<Utc>>), StoreError> {
    match retry::next_delay(
        &app.config.webhook_retry_delays,
        delivery.attempt,
        retry_after,
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
            Ok((Processed::RetryScheduled, at))
        }
        None => {
            app.queue
                .dead_letter(DeadLetter {
                    delivery: delivery.clone(),
                    last_error: reason.to_owned(),
                    failed_at: app.clock.now(),
                })
                .await?;
            Ok((Processed::DeadLettered, None))
        }
    }
}

/// A duration as a time span on the app's clock (saturating).
pub(super) fn lease(duration: Duration) -> chrono::TimeDelta {
    chrono::TimeDelta::from_std(duration).unwrap_or(chrono::TimeDelta::MAX)
}

/// The metrics of an attempt that was made: a `410` counts as a failure, and a dead letter
/// both as a failure and as dead-lettered.
fn count(processed: &Processed) {
    match processed {
        Processed::Delivered => metrics::count(Metric::DeliveriesSucceeded),
        Processed::Skipped | Processed::Parked => {}
        Processed::Deactivated | Processed::RetryScheduled => {
            metrics::count(Metric::DeliveriesFailed)
        }
        Processed::DeadLettered => {
            metrics::count(Metric::DeliveriesFailed);
            metrics::count(Metric::DeliveriesDeadLettered);
        }
    }
}

/// The secrets and private keys that sign for `webhook` at `at`, opened. A failure (the
/// stack's key unavailable) fails the delivery's processing, which is retried like any store
/// failure; nothing is sent unsigned.
pub async fn signing(app: &App, webhook: &Webhook, at: DateTime<Utc>) -> StoreResult<Signing> {
    let secrets = app.secrets();
    Ok(Signing {
        secrets: secrets
            .open_all(
                &SecretScope::WebhookSecret(&webhook.id),
                &webhook.signing_secrets(at),
            )
            .await?,
        keys: secrets
            .open_all(
                &SecretScope::WebhookSigningKey(&webhook.id),
                &webhook.signing_keys(at),
            )
            .await?,
    })
}

/// One attempt, timed.
pub async fn attempt(
    app: &App,
    deliverer: &Deliverer,
    webhook: &Webhook,
    delivery: &Delivery,
) -> StoreResult<(AttemptOutcome, DateTime<Utc>, u64)> {
    let attempted_at = app.clock.now();
    let signing = signing(app, webhook, attempted_at).await?;
    let started = Instant::now();
    let outcome = deliverer
        .attempt(webhook, &signing, delivery, attempted_at)
        .await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok((outcome, attempted_at, duration_ms))
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
