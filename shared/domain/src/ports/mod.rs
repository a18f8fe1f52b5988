//! The ports the application needs from its backends. Each method is one atomic operation, so
//! that an adapter maps it to one store request or transaction: embedded adapters live in
//! the `hosting-embedded` crate, AWS adapters in `hosting-aws`.
//!
//! Reads whose cost grows with what they return (pages, windows, lists, the delivery log)
//! wait for the admission of the request they serve (`hosting_support::admission::admitted`) before
//! making those reads; what they read first to find them may go alongside the request's
//! rate-limit count.

mod accounts;
mod clips;
mod outbox;
mod providers;
mod shows;
mod streams;
mod webhooks;

pub use accounts::*;
pub use clips::*;
pub use outbox::*;
pub use providers::*;
pub use shows::*;
pub use streams::*;
pub use webhooks::*;

use crate::error::StoreError;

pub type StoreResult<T> = Result<T, StoreError>;

/// Everything the application keeps.
pub trait Store:
    AccountStore
    + RateLimitStore
    + CreatorStore
    + StreamStore
    + StreamListStore
    + StreamKeyStore
    + RoomCleanupStore
    + ShowStore
    + ShowStartStore
    + WebhookStore
    + DeliveryLogStore
    + DeliverySlotStore
    + ParkedDeliveryStore
    + Outbox
    + IdempotencyStore
    + ServiceKeyStore
    + AdminStore
    + ClipStore
{
}

impl<T> Store for T where
    T: AccountStore
        + RateLimitStore
        + CreatorStore
        + StreamStore
        + StreamListStore
        + StreamKeyStore
        + RoomCleanupStore
        + ShowStore
        + ShowStartStore
        + WebhookStore
        + DeliveryLogStore
        + DeliverySlotStore
        + ParkedDeliveryStore
        + Outbox
        + IdempotencyStore
        + ServiceKeyStore
        + AdminStore
        + ClipStore
{
}
