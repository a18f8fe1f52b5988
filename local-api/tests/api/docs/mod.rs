//! The API's documents: the OpenAPI document, in step with the router and the discovery table,
//! the reference page rendered from it, and the console.

mod console;
mod endpoint_lists;
mod openapi;
mod page;
