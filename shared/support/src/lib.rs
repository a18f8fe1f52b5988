//! Below every other crate of the project: configuration from the environment, read and
//! validated once ([`config`]), and the admission gate that holds a request's costly reads and
//! writes until the rate limit has counted it ([`admission`]). Nothing here knows the model.

pub mod admission;
pub mod config;
