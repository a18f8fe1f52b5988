//! The request pipeline (docs/request-pipeline.md, "The order of checks"; docs/rate-limits.md):
//! routing, authentication, rate limit and its headers, scope, plan gate, refused requests doing
//! no work; and the two public endpoints.

mod auth;
mod public;
mod rate_limit;
mod rate_limit_headers;
mod refusals;
mod routes;
