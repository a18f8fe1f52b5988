//! The HTTP-level suite of the local server, as one test binary: a module per resource, a file
//! per operation or concern, and the harness in `common/`. Tests that need something a plain
//! `cargo test` lacks are `#[ignore]`d with the reason and run by scripts/test.sh; those named
//! `dynamodb_only_` run only in its DynamoDB stage.

mod analytics;
mod aws_adapters;
mod clips;
mod common;
mod delivery;
mod destinations;
mod docs;
mod faults;
mod invariants;
mod lambda;
mod layout;
mod livekit;
mod operations;
mod permissions;
mod pipeline;
mod recordings;
mod round_trips;
mod server;
mod shows;
mod streams;
mod template;
mod usage;
pub(crate) mod webhooks;
