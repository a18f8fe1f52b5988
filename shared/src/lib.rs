//! The library every function of the Live Stream Hosting API is built from: configuration,
//! the domain model and its lifecycle, the request pipeline, the operations, and the ports with
//! their adapters.

pub mod admission;
pub mod app;
pub mod aws;
pub mod cache;
pub mod clock;
pub mod config;
pub mod delivery;
pub mod domain;
pub mod error;
pub mod http;
#[cfg(feature = "lambda")]
pub mod lambda;
pub mod livekit;
pub mod memory;
pub mod metrics;
pub mod ports;
pub mod ratelimit;
pub mod runtime;
pub mod seed;
pub mod service;
pub mod telemetry;
pub mod validation;
pub mod webhook_url;

pub use app::App;

/// Every public path lives under this prefix.
pub const API_PREFIX: &str = "/api/v1";
pub use error::{ApiError, ApiResult};
