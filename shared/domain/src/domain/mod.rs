//! The domain model: what the API is about, free of HTTP and of any backend.

pub mod account;
pub mod analytics;
pub mod creator;
pub mod delivery_log;
pub mod event;
pub mod host;
pub mod idempotency;
pub mod paging;
pub mod room_cleanup;
pub mod stream;
pub mod webhook;

pub use account::{ApiKey, Brand, Caller, KeyEnvironment, Plan, Scope};
pub use creator::Creator;
pub use event::{EventType, StreamEvent};
pub use room_cleanup::RoomCleanup;
pub use stream::{EndReason, Stream, StreamStatus, TimerKind, Transition};
pub use webhook::Webhook;
