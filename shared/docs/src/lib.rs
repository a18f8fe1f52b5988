//! The API's documents, apart from the HTTP layer so that only the function serving them (the
//! discovery function) carries them: the OpenAPI document, the reference page and the console.

pub mod console;
pub mod docs_page;
pub mod openapi;
mod snippets;
