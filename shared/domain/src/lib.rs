//! The bottom layer of the Live Stream Hosting API: what the API is about, free of HTTP and of
//! any backend. The domain model and its lifecycle, the rules every layer applies (request
//! validation, webhook URLs, configuration), the errors with their envelope, and the ports the
//! backends implement (`hosting-aws`, `hosting-embedded`). Nothing here depends on an adapter,
//! an operation or the HTTP layer: those are crates above this one.

pub mod admission;
pub mod cache;
pub mod clock;
pub mod config;
pub mod domain;
pub mod error;
pub mod metrics;
pub mod ports;
pub mod telemetry;
pub mod validation;
pub mod webhook_url;

pub use error::{ApiError, ApiResult};

/// Every public path lives under this prefix.
pub const API_PREFIX: &str = "/api/v1";
