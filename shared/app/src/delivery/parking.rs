//! Deliveries parked while their brand holds every delivery slot (docs/webhooks.md, "Fair
//! delivery"). A saturated brand's waiting deliveries leave the shared queue for the brand's own
//! list in the store; a slot's holder hands the slot to the oldest of them when its attempt
//! ends (`worker::hand_over`), and a sweep catches a hand-over that a dead process never made.
//! A parked delivery keeps its attempt number and body: parking is not an attempt, counts none
//! and logs none.
//!
//! No wake-up is lost between a park and a release:
//! - a parker writes its deliveries, then reads the slots and the brand's wake-up (when it had
//!   none, it sets it and reads the slots again), and hands its deliveries to a free slot;
//! - a release frees its slot only if no wake-up is set, checked in the same transaction; when
//!   one is set, the holder keeps the slot and hands it over;
//! - the sweep clears a wake-up, then looks for parked deliveries, sets the wake-up again when
//!   any remain, and only then reads the slots.
//!
//! A release before a parker's read is seen by that read; one after it meets the wake-up.

use std::time::Duration;

use chrono::TimeDelta;

use crate::app::App;
use crate::metrics::{self, Metric};
use hosting_domain::error::StoreError;
use hosting_domain::ports::{BrandDeliveryState, Delivery, ParkedClaim, ParkedWake};

use super::worker::{BRAND_DELIVERY_SLOTS, lease, slot_lease};

/// How long a claim on parked deliveries lasts: longer than putting them on the queue takes. A
/// process that died holding one leaves them to the next hand-over or sweep after this.
pub const CLAIM_LEASE: Duration = Duration::from_secs(30);
/// Wake-ups the sweep takes per pass.
const SWEEP_BATCH: usize = 100;

/// Who moved parked deliveries back to the queue, for the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waker {
    /// A slot's release, or a parker that found a slot free.
    HandOver,
    /// The sweep.
    Sweep,
}

/// Puts new deliveries of one brand (an event's, or a redelivery's) on the queue, or parks
/// them when the brand holds every slot or already has deliveries parked: a saturated brand's
/// backlog never reaches the shared queue, and never overtakes the deliveries parked before it.
pub async fn queue_or_park(
    app: &App,
    brand_id: &str,
    deliveries: Vec<Delivery>,
) -> Result<(), StoreError> {
    if deliveries.is_empty() {
        return Ok(());
    }
    let state = app
        .parked_deliveries()
        .brand_delivery_state(brand_id, BRAND_DELIVERY_SLOTS, app.clock.now())
        .await?;
    if state.wake_due.is_some() || state.free_slots == 0 {
        return park(app, brand_id, deliveries).await;
    }
    let free = state.free_slots as usize;
    if deliveries.len() > free {
        // What the free slots cannot take is parked first, its wake-up set, then the rest
        // queued: each of those, released or parked in its turn, hands over to the parked
        // ones, so none waits for the sweep.
        let mut deliveries = deliveries;
        let waiting = deliveries.split_off(free);
        let parked = app.parked_deliveries();
        let now = app.clock.now();
        let after = parked
            .park_deliveries(brand_id, &waiting, BRAND_DELIVERY_SLOTS, now)
            .await?;
        metrics::count_many(Metric::DeliveriesParked, waiting.len());
        if after.wake_due.is_none() {
            parked
                .set_parked_wake(brand_id, now + wake_after(app))
                .await?;
        }
        return app.queue.enqueue_now(deliveries).await;
    }
    app.queue.enqueue_now(deliveries).await
}

/// Parks `deliveries` (all of `brand_id`), then hands over to any slot that is free by now.
/// `Err` only when the deliveries may not be parked, or parked without the wake-up that the
/// sweep needs: the caller keeps them and tries again (a repeat is a duplicate, which
/// receivers deduplicate, never a loss).
pub async fn park(app: &App, brand_id: &str, deliveries: Vec<Delivery>) -> Result<(), StoreError> {
    let parked = app.parked_deliveries();
    let now = app.clock.now();
    let mut state = parked
        .park_deliveries(brand_id, &deliveries, BRAND_DELIVERY_SLOTS, now)
        .await?;
    metrics::count_many(Metric::DeliveriesParked, deliveries.len());
    if state.wake_due.is_none() {
        parked
            .set_parked_wake(brand_id, now + wake_after(app))
            .await?;
        // A release that read no wake-up freed its slot before this read: it is seen here.
        state = parked
            .brand_delivery_state(brand_id, BRAND_DELIVERY_SLOTS, app.clock.now())
            .await?;
    }
    hand_over_to_free_slots(app, brand_id, state).await;
    Ok(())
}

/// After a slot's release: the brand's oldest parked deliveries, one per free slot, go back
/// to the queue. Failures are logged: the parked deliveries stay, for the next release or the
/// sweep.
pub async fn after_release(app: &App, brand_id: &str) {
    match app
        .parked_deliveries()
        .brand_delivery_state(brand_id, BRAND_DELIVERY_SLOTS, app.clock.now())
        .await
    {
        Ok(state) if state.wake_due.is_some() => {
            hand_over_to_free_slots(app, brand_id, state).await;
        }
        Ok(_) => {}
        Err(err) => {
            tracing::warn!(brand_id, error = %err, "parked deliveries not looked at after a release; the sweep will");
        }
    }
}

async fn hand_over_to_free_slots(app: &App, brand_id: &str, state: BrandDeliveryState) {
    if state.free_slots == 0 {
        return;
    }
    if let Err(err) = unpark(app, brand_id, state.free_slots as usize, Waker::HandOver).await {
        tracing::warn!(brand_id, error = %err, "parked deliveries not handed over; the sweep will");
    }
}

/// Moves up to `limit` of the brand's oldest parked deliveries to the queue: claimed, queued,
/// then removed, so a process that dies in between leaves them parked (claimed until
/// [`CLAIM_LEASE`]), never lost. Returns how many moved and whether others stay parked.
pub async fn unpark(
    app: &App,
    brand_id: &str,
    limit: usize,
    waker: Waker,
) -> Result<(usize, bool), StoreError> {
    let parked = app.parked_deliveries();
    let now = app.clock.now();
    let claim = ParkedClaim {
        limit,
        offset: 0,
        now,
        until: now + lease(CLAIM_LEASE),
    };
    let (claimed, more) = parked.claim_parked_deliveries(brand_id, claim).await?;
    if claimed.is_empty() {
        return Ok((0, more));
    }
    let keys: Vec<String> = claimed.iter().map(|p| p.key.clone()).collect();
    app.queue
        .enqueue_now(claimed.into_iter().map(|p| p.delivery).collect())
        .await?;
    parked.remove_parked_deliveries(brand_id, &keys).await?;
    metrics::count_many(
        match waker {
            Waker::HandOver => Metric::ParkedDeliveriesWoken,
            Waker::Sweep => Metric::ParkedDeliveriesSwept,
        },
        keys.len(),
    );
    Ok((keys.len(), more))
}

/// One pass over the brands whose wake-up is due: each one's free slots get its oldest parked
/// deliveries, and its wake-up is set again while any stay parked. Returns how many deliveries
/// went back to the queue. Reads a bounded number of items per brand, whatever its backlog.
pub async fn sweep(app: &App) -> Result<usize, StoreError> {
    let wakes = app
        .parked_deliveries()
        .due_parked_wakes(app.clock.now(), SWEEP_BATCH)
        .await?;
    let mut moved = 0;
    let mut failed = None;
    // One brand's failure leaves the others' wake-ups to this pass, its own to the next.
    for wake in wakes {
        match look_at(app, &wake, Waker::Sweep).await {
            Ok(count) => moved += count,
            Err(err) => {
                tracing::warn!(brand_id = %wake.brand_id, error = %err, "parked deliveries not swept; the next pass will");
                failed = Some(err);
            }
        }
    }
    match failed {
        Some(err) => Err(err),
        None => Ok(moved),
    }
}

/// Settles the brand's wake-up, as the sweep does, when a hand-over found nothing parked: a
/// wake-up left with nothing behind it would make each release look for nothing.
pub async fn settle_wake(app: &App, brand_id: &str) -> Result<(), StoreError> {
    let state = app
        .parked_deliveries()
        .brand_delivery_state(brand_id, BRAND_DELIVERY_SLOTS, app.clock.now())
        .await?;
    if let Some(due) = state.wake_due {
        let wake = ParkedWake {
            brand_id: brand_id.to_owned(),
            due,
        };
        look_at(app, &wake, Waker::HandOver).await?;
    }
    Ok(())
}

/// Clears `wake`, looks for parked deliveries, sets the wake-up again when any remain, then
/// hands the free slots over (in that order: see the module's note). Returns how many moved.
async fn look_at(app: &App, wake: &ParkedWake, waker: Waker) -> Result<usize, StoreError> {
    let parked = app.parked_deliveries();
    if !parked.clear_parked_wake(wake).await? {
        return Ok(0);
    }
    match look_after_clearing(app, &wake.brand_id, waker).await {
        Ok(moved) => Ok(moved),
        Err(err) => {
            // The wake-up goes back, so nothing parked is left without one (a spare one is
            // cleared by the next pass).
            if let Err(again) = parked
                .set_parked_wake(&wake.brand_id, app.clock.now())
                .await
            {
                tracing::error!(brand_id = %wake.brand_id, error = %again, "wake-up not set back after a failed look");
            }
            Err(err)
        }
    }
}

async fn look_after_clearing(app: &App, brand_id: &str, waker: Waker) -> Result<usize, StoreError> {
    let parked = app.parked_deliveries();
    // Claimed ones count as parked: a claim whose process died runs out and is swept.
    let now = app.clock.now();
    let look = ParkedClaim {
        limit: 0,
        offset: 0,
        now,
        until: now,
    };
    let (_, any) = parked.claim_parked_deliveries(brand_id, look).await?;
    if !any {
        return Ok(0);
    }
    parked
        .set_parked_wake(brand_id, app.clock.now() + wake_after(app))
        .await?;
    let state = parked
        .brand_delivery_state(brand_id, BRAND_DELIVERY_SLOTS, app.clock.now())
        .await?;
    if state.free_slots == 0 {
        return Ok(0);
    }
    Ok(unpark(app, brand_id, state.free_slots as usize, waker)
        .await?
        .0)
}

/// When the sweep looks at a brand with parked deliveries: once a slot whose holder died has
/// freed itself.
fn wake_after(app: &App) -> TimeDelta {
    lease(slot_lease(app))
}
