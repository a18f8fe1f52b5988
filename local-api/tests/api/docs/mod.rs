//! The API's documents: the OpenAPI document, in step with the router and the discovery table,
//! and the reference page rendered from it.

mod endpoint_lists;
mod openapi;
mod page;
