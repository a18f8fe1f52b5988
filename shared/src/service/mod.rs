//! The operations of the API. Handlers parse HTTP and call these; these hold the rules.

pub mod analytics;
pub mod creators;
pub mod idempotency;
pub mod provider_events;
pub mod streams;
pub mod timers;
pub mod webhooks;
