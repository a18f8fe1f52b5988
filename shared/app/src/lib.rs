//! The application of the Live Stream Hosting API over its ports: the `App` that holds the
//! configured backends, the operations (`service`), webhook delivery (`delivery`), the rate
//! limit and seeding. It knows the ports (`hosting-domain`) and no adapter, and nothing of
//! HTTP or of how a process runs: the HTTP layer (`hosting-http`) and the runtimes
//! (`hosting-runtime`) sit above it.

pub mod app;
pub mod cache;
pub mod delivery;
pub mod metrics;
pub mod ratelimit;
pub mod secrets;
pub mod seed;
pub mod service;
pub mod sweep_budget;

pub use app::App;
