//! The API's documents, apart from the HTTP layer so that only the function serving them (the
//! discovery function) carries them: the OpenAPI document and the reference page.

pub mod docs_page;
pub mod openapi;
mod snippets;
