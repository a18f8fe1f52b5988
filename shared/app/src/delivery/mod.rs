//! Webhook delivery (docs/webhooks.md, "Delivery"): the outbox relay that fans each event out to
//! the webhooks that want it, the worker that signs, sends and retries each delivery, and the
//! parking of a saturated brand's deliveries off the shared queue. The
//! same code runs on every backend.

pub mod client;
pub mod parking;
pub mod relay;
pub mod retry;
pub mod signing;
pub mod worker;

pub use client::{Deliverer, Dns, SystemDns};
