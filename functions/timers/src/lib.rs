//! Stream timers fired by EventBridge Scheduler: the schedule's input is the timer itself.

use serde::Serialize;
use shared::App;
use shared::ports::Timer;

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Fired {
    /// Whether the timer changed the stream (it does nothing once the stream moved on).
    pub changed: bool,
}

pub async fn handle(app: &App, timer: Timer) -> Result<Fired, shared::error::StoreError> {
    let changed = shared::service::timers::fire(app, &timer).await?;
    Ok(Fired { changed })
}
