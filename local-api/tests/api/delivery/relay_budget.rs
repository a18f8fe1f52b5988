//! A sweep's time budget (ARCHITECTURE.md, "Reliability on AWS", sweeps): after an outage the backlog is taken a batch at a
//! time, and a sweep whose budget is spent returns, leaving the rest to its next run, instead of
//! running into its invocation's timeout.

use std::time::Duration;

use hosting_app::delivery::relay;
use hosting_app::sweep_budget::SweepBudget;

use crate::common::*;

/// A start and an end of a test stream per cycle, two events each: more than one sweep batch
/// (100) in all, and fewer requests per brand than its rate limit (100 a minute).
const CYCLES_PER_BRAND: usize = 38;
const BACKLOG: usize = 2 * 2 * CYCLES_PER_BRAND;

#[tokio::test]
async fn a_spent_budget_leaves_the_rest_of_the_backlog_to_the_next_sweep() {
    let api = TestApp::new().await;
    for key in [Keys::test_a(), Keys::test_b()] {
        for _ in 0..CYCLES_PER_BRAND {
            let id = api.start_test_stream(&key).await;
            api.delete(&format!("/streams/{id}"), &key)
                .await
                .assert_status(200);
        }
    }
    // Starts within one instant of a frozen clock are placed microseconds apart, after it.
    api.advance(chrono::Duration::seconds(1));
    let app = &api.runtime.app;
    let pending = || async {
        app.store
            .pending_events(app.clock.now(), 1_000)
            .await
            .unwrap()
            .len()
    };
    assert_eq!(pending().await, BACKLOG);

    // No time left: one batch, then it returns.
    relay::sweep_within(app, Duration::ZERO, SweepBudget::of(Duration::ZERO))
        .await
        .unwrap();
    assert_eq!(pending().await, BACKLOG - 100, "one batch taken");
    // The next run goes on where it stopped.
    relay::sweep_within(app, Duration::ZERO, SweepBudget::default())
        .await
        .unwrap();
    assert_eq!(pending().await, 0);
}
