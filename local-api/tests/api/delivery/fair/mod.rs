//! One brand never hurts another, and its own deliveries run at its receivers' speed
//! (docs/webhooks.md, "Fair delivery"): a brand holds at most its delivery slots of the shared
//! workers; deliveries that wait for one are parked off the shared queue and handed over as
//! soon as one frees. Real HTTP to real receivers on loopback, through the background loops the
//! local server runs, on both backends (on DynamoDB and SQS behind the fault proxy, the slots,
//! parking and hand-overs go through moto).

mod faults;
mod healthy;
mod hung;
mod queue_work;

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use hosting_app::delivery::worker::BRAND_DELIVERY_SLOTS;
use serde_json::json;

use crate::common::receiver::Receiver;
use crate::common::*;

/// Registers `count` webhooks of `key`'s brand at `receiver`, for `events`.
async fn register_many(
    api: &TestApp,
    key: &str,
    receiver: &Receiver,
    count: usize,
    events: &[&str],
) {
    for _ in 0..count {
        api.post(
            "/webhooks",
            key,
            json!({"url": receiver.url(), "events": events}),
        )
        .await
        .assert_status(201);
    }
}

/// Asserts that no attempt to `receiver` began while as many as the brand's slots, begun
/// under `timeout` earlier (less a margin), could still be open.
fn assert_within_slots(receiver: &Receiver, timeout: Duration) {
    let starts: Vec<DateTime<Utc>> = receiver.hits().into_iter().map(|hit| hit.at).collect();
    let window = TimeDelta::from_std(timeout).unwrap() - TimeDelta::milliseconds(500);
    for at in &starts {
        let open = starts
            .iter()
            .filter(|other| **other <= *at && *at - **other < window)
            .count();
        assert!(
            open <= BRAND_DELIVERY_SLOTS as usize,
            "{open} attempts open at {at}: {starts:?}"
        );
    }
}
