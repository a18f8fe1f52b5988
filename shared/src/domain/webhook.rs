use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::event::EventType;

/// Most webhooks one brand may hold.
pub const MAX_WEBHOOKS_PER_BRAND: usize = 25;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Webhook {
    pub id: Uuid,
    pub brand_id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub secret: String,
    pub active: bool,
    pub created_at: DateTime<Utc>,
}

impl Webhook {
    pub fn wants(&self, event_type: EventType) -> bool {
        self.active && self.events.contains(&event_type)
    }
}

/// `whsec_` and the standard base64 of 24 random bytes (32 characters).
pub fn generate_secret() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}
