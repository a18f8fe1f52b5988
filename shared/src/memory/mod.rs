//! Embedded backends: the whole product in one process, with the same atomicity as DynamoDB
//! (every port call holds one lock for its whole read-check-write).

mod store;
mod timers;

pub use store::MemoryStore;
pub use timers::MemoryTimers;
