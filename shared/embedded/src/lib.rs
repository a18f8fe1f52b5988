//! Embedded backends: the whole product in one process, with the same atomicity as DynamoDB
//! (every port call holds one lock for its whole read-check-write).

mod accounts;
mod admin;
mod analytics;
mod idempotency;
mod ordered;
mod outbox;
mod queue;
mod store;
mod timers;
mod webhooks;

pub use queue::MemoryQueue;
pub use store::MemoryStore;
pub use timers::MemoryTimers;
