//! Relays the event outbox to the delivery queue. Triggered by the table's stream when events
//! are written (and on a schedule, as a sweep); either way it drains every event not yet
//! relayed, so a failed run leaves nothing behind.

use serde::Serialize;
use shared::App;
use shared::delivery::relay;

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Relayed {
    pub relayed: usize,
}

/// The trigger's payload does not matter: the outbox itself says what is pending.
pub async fn handle(app: &App) -> Result<Relayed, shared::error::StoreError> {
    Ok(Relayed {
        relayed: relay::relay_pending(app).await?,
    })
}
