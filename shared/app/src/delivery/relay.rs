//! From the outbox to the delivery queue: one delivery per (event, webhook that wants it).
//!
//! Each event is relayed on its own: a relay claims it ([`hosting_domain::ports::Outbox::claim_event`]),
//! queues its deliveries and marks it relayed. An event whose deliveries cannot be queued is
//! retried after `OUTBOX_RETRY_DELAYS_SECS`, then set aside with its reason for an operator
//! (`admin outbox list` / `admin outbox replay`); it never holds up another event. A relay
//! that dies mid-way leaves its claim to expire, and the event is relayed again: deliveries
//! may repeat (receivers deduplicate on the event id), never go missing.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use super::parking;
use crate::app::App;
use crate::metrics::{self, Metric};
use crate::sweep_budget::SweepBudget;
use hosting_domain::StreamEvent;
use hosting_domain::error::StoreError;
use hosting_domain::ports::Delivery;

/// How long a claim holds an event: longer than relaying one event can take.
pub const LEASE: Duration = Duration::from_secs(60);
/// In Lambda, the scheduled sweep leaves events younger than this to the table's stream.
pub const SWEEP_GRACE: Duration = Duration::from_secs(30);
/// Events taken per sweep pass, and relayed at once.
const BATCH: usize = 100;
const IN_FLIGHT: usize = 16;

/// What became of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Relayed {
    /// Its deliveries are queued (as many as webhooks wanted it).
    Queued(usize),
    /// Another relay holds it, it is already relayed, or it waits for its retry.
    NotClaimed,
    /// Queuing failed; it will be tried again.
    RetryScheduled(String),
    /// Queuing failed on the last attempt: set aside for an operator.
    SetAside(String),
}

/// Queues the deliveries of one event; parks them instead when the brand holds every delivery
/// slot or already has deliveries parked (docs/webhooks.md, "Fair delivery"), so a saturated
/// brand's backlog never reaches the shared queue.
pub async fn fan_out(app: &App, event: &StreamEvent) -> Result<usize, StoreError> {
    // A test recording's file is in place before anyone hears it is ready; a failure retries
    // the event as a queue failure does.
    crate::service::recordings::before_relay(app, event).await?;
    let webhooks = app.webhooks().list_webhooks(&event.brand_id).await?;
    let deliveries: Vec<Delivery> = webhooks
        .iter()
        .filter(|w| w.wants(event.event_type))
        .map(|webhook| Delivery {
            event_id: event.id.clone(),
            event_type: event.event_type,
            brand_id: event.brand_id.clone(),
            webhook_id: webhook.id,
            attempt: 1,
            body: event.body.clone(),
        })
        .collect();
    let queued = deliveries.len();
    parking::queue_or_park(app, &event.brand_id, deliveries).await?;
    Ok(queued)
}

fn after(now: DateTime<Utc>, delay: Duration) -> DateTime<Utc> {
    now + TimeDelta::from_std(delay).unwrap_or(TimeDelta::MAX)
}

/// Relays one event, if this relay can claim it. `Err` only when the store itself failed
/// before anything was decided; the event then stays pending for the next sweep.
pub async fn relay_event(app: &App, event: &StreamEvent) -> Result<Relayed, StoreError> {
    let now = app.clock.now();
    let Some(claim) = app
        .outbox()
        .claim_event(&event.id, now, after(now, LEASE))
        .await?
    else {
        return Ok(Relayed::NotClaimed);
    };
    match fan_out(app, event).await {
        Ok(queued) => {
            app.outbox().mark_relayed(&event.id, &claim).await?;
            Ok(Relayed::Queued(queued))
        }
        Err(err) => {
            let reason = err.to_string();
            let delays = &app.config.outbox_retry_delays;
            let retry_at = usize::try_from(claim.attempt)
                .ok()
                .and_then(|attempt| delays.get(attempt.checked_sub(1)?))
                .map(|delay| after(app.clock.now(), *delay));
            tracing::warn!(
                event_id = %event.id,
                attempt = claim.attempt,
                error = %reason,
                set_aside = retry_at.is_none(),
                "relaying an event failed"
            );
            app.outbox()
                .relay_failed(&event.id, &claim, &reason, retry_at)
                .await?;
            Ok(match retry_at {
                Some(_) => Relayed::RetryScheduled(reason),
                None => {
                    metrics::count(Metric::RelayEventsSetAside);
                    Relayed::SetAside(reason)
                }
            })
        }
    }
}

/// Relays `events` concurrently, each on its own; returns how many were queued.
pub async fn relay_events(app: &App, events: Vec<StreamEvent>) -> usize {
    let mut in_flight = tokio::task::JoinSet::new();
    let mut queued = 0;
    for event in events {
        if in_flight.len() >= IN_FLIGHT
            && let Some(done) = in_flight.join_next().await
        {
            queued += usize::from(matches!(done, Ok(Ok(Relayed::Queued(_)))));
        }
        let app = app.clone();
        in_flight.spawn(async move {
            let relayed = relay_event(&app, &event).await;
            if let Err(err) = &relayed {
                tracing::error!(event_id = %event.id, error = %err, "event left for the next sweep");
            }
            relayed
        });
    }
    while let Some(done) = in_flight.join_next().await {
        queued += usize::from(matches!(done, Ok(Ok(Relayed::Queued(_)))));
    }
    queued
}

/// Relays the pending events written (or last failed) at least `grace` ago; returns how many
/// were queued. In Lambda the table's stream relays new events at once, and this sweep, on a
/// schedule, only picks up what a failed or lost invocation left; the grace keeps it from
/// racing the stream for fresh events (the claims would keep either from sending twice).
pub async fn sweep(app: &App, grace: Duration) -> Result<usize, StoreError> {
    sweep_within(app, grace, SweepBudget::default()).await
}

/// [`sweep`], taking no further batch once `budget` is spent: the rest is the next run's.
pub async fn sweep_within(
    app: &App,
    grace: Duration,
    budget: SweepBudget,
) -> Result<usize, StoreError> {
    let due_by = app.clock.now() - TimeDelta::from_std(grace).unwrap_or(TimeDelta::zero());
    let mut queued = 0;
    loop {
        let events = app.outbox().pending_events(due_by, BATCH).await?;
        let count = events.len();
        let relayed = relay_events(app, events).await;
        queued += relayed;
        // A short batch was everything due; a batch none of which could be taken is held by
        // others or waiting, and reading it again would only spin.
        if count < BATCH || relayed == 0 {
            return Ok(queued);
        }
        if !budget.allows_another() {
            tracing::info!(queued, "relay sweep budget spent; the next run goes on");
            return Ok(queued);
        }
    }
}

/// How long the oldest event due by now has waited for the relay (zero when none waits):
/// what is left after a sweep is what the relay cannot get through.
pub async fn oldest_pending_age(app: &App) -> Result<Duration, StoreError> {
    let now = app.clock.now();
    // Taken in due order, which a retry moves later than the event's creation: the oldest
    // of a batch, not its first.
    let pending = app.outbox().pending_events(now, BATCH).await?;
    Ok(pending
        .iter()
        .map(|event| event.created_at)
        .min()
        .and_then(|oldest| (now - oldest).to_std().ok())
        .unwrap_or_default())
}
