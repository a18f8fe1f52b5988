//! Webhook delivery (docs/webhooks.md, "Delivery"): the outbox relay that fans each event out to
//! the webhooks that want it, and the worker that signs, sends and retries each delivery. The
//! same code runs on every backend.

pub mod client;
pub mod relay;
pub mod retry;
pub mod signing;
pub mod worker;

pub use client::{Deliverer, Dns, SystemDns};
