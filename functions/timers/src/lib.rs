//! Stream deadlines: a timer fired by EventBridge Scheduler (the schedule's input is the timer
//! itself), or, every minute, the sweep that ends streams whose timer was lost.

use hosting_app::App;
use hosting_app::sweep_budget::SweepBudget;
use hosting_domain::ports::Timer;
use serde::{Deserialize, Serialize};

/// What the function is invoked with.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Invocation {
    Timer(Timer),
    /// The sweep's schedule (any other input).
    Sweep(serde_json::Value),
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Fired {
    /// How many streams it ended: a timer changes at most its own stream, and nothing once
    /// the stream moved on or when it fired early (it is then armed again).
    pub changed: usize,
}

pub async fn handle(
    app: &App,
    invocation: Invocation,
) -> Result<Fired, hosting_domain::error::StoreError> {
    handle_within(app, invocation, SweepBudget::default()).await
}

/// [`handle`], a sweep stopping within `budget` (in Lambda: before the invocation's timeout).
pub async fn handle_within(
    app: &App,
    invocation: Invocation,
    budget: SweepBudget,
) -> Result<Fired, hosting_domain::error::StoreError> {
    let changed = match invocation {
        Invocation::Timer(timer) => {
            usize::from(hosting_app::service::timers::fire(app, &timer).await?)
        }
        Invocation::Sweep(_) => hosting_app::service::timers::sweep_within(app, budget).await?,
    };
    Ok(Fired { changed })
}
