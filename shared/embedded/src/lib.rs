//! Embedded backends: the whole product in one process, with the same atomicity as DynamoDB
//! (every port call holds one lock for its whole read-check-write).

mod accounts;
mod analytics;
mod clip_queue;
mod clips;
mod delivery_log;
mod delivery_slots;
mod idempotency;
mod ordered;
mod outbox;
mod queue;
mod recordings;
mod room_cleanups;
mod shows;
mod store;
mod streams;
mod timers;
mod webhooks;

pub use clip_queue::EmbeddedClipQueue;
pub use queue::EmbeddedQueue;
pub use recordings::FolderRecordings;
pub use store::EmbeddedStore;
pub use timers::EmbeddedTimers;
