//! The bottom of the Live Stream Hosting API's own layers: what the API is about, free of HTTP
//! and of any backend. The model and its lifecycle (streams, webhooks, events, accounts, the
//! delivery log, analytics), the rules every layer applies (request validation, webhook URLs),
//! the errors with their envelope's codes, the clock, and the ports the backends implement
//! (`hosting-aws`, `hosting-embedded`). Configuration and request admission sit in
//! `hosting-support`, below; operations, HTTP and runtimes in the crates above.

pub mod account;
pub mod analytics;
pub mod clip;
pub mod clock;
pub mod creator;
pub mod delivery_log;
pub mod destination;
pub mod error;
pub mod event;
pub mod event_type;
pub mod host;
pub mod idempotency;
pub mod paging;
pub mod platform;
pub mod ports;
pub mod recording;
pub mod room_cleanup;
pub mod sealed;
pub mod show;
pub mod stream;
pub mod usage;
pub mod validation;
pub mod webhook;
pub mod webhook_url;

pub use account::{ApiKey, Brand, Caller, KeyEnvironment, Plan, Scope};
pub use creator::Creator;
pub use error::{ApiError, ApiResult};
pub use event::StreamEvent;
pub use event_type::EventType;
pub use room_cleanup::RoomCleanup;
pub use stream::{EndReason, Stream, StreamStatus, TimerKind, Transition};
pub use webhook::Webhook;

/// Every public path lives under this prefix.
pub const API_PREFIX: &str = "/api/v1";
