//! Every endpoint of the API, declared once: method, path, access, parameters, request body
//! and responses. The router ([`super::routes`]), the discovery document (`GET /`), the
//! OpenAPI document (`hosting_docs::openapi`) and the scope tests all read these declarations.
//! Adding an endpoint starts with one declaration here, inside its module's
//! `declare_endpoints!` (ARCHITECTURE.md, "Adding an endpoint", has the rest). The declarations
//! themselves make [`ENDPOINTS`]: no list to keep in step.
//!
//! Bodies are named by their Rust types, whose schemas are derived (`schemars`) with the
//! limits the validation enforces. Responses every keyed endpoint shares (401, 402, 403, 429,
//! 500, and 409/422 of idempotent creates) are added by the OpenAPI builder; a declared 403
//! or 429 adds its codes to the shared ones. Descriptions name limits by placeholder
//! (`{max_webhooks}`), filled from the constants the rules use when the document is built.

use std::collections::BTreeMap;

use axum::http::Method;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Serialize;

use hosting_domain::Scope;
use hosting_domain::error::ErrorCode;
use hosting_domain::paging::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};

/// Declares a module's endpoints and lists them, in the order written, as its `DECLARED`.
macro_rules! declare_endpoints {
    ($($(#[$attr:meta])* pub static $name:ident: Endpoint = $value:expr;)+) => {
        $($(#[$attr])* pub static $name: Endpoint = $value;)+

        /// This module's endpoints, in the order written.
        pub(super) static DECLARED: &[&Endpoint] = &[$(&$name),+];
    };
}

// The modules in the order the documents list their endpoints.
mod clips;
mod public;
mod shows;
mod streams;
mod test_helpers;
mod webhooks;

pub use clips::*;
pub use public::*;
pub use shows::*;
pub use streams::*;
pub use test_helpers::*;
pub use webhooks::*;

/// Who may call an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No key; any `Authorization` header is ignored.
    Public,
    /// A key holding this scope, through the whole pipeline (docs/request-pipeline.md,
    /// "The order of checks").
    Keyed(Scope),
}

/// The Lambda function that serves an endpoint: its crate under `functions/` builds its router
/// from the declarations that name it ([`super::routes::Routes`] checks both ways), and
/// `template.yaml` routes the endpoint to its resource (a test checks both ways too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Function {
    Discovery,
    Streams,
    Analytics,
    Webhooks,
}

impl Function {
    pub const ALL: [Function; 4] = [
        Function::Discovery,
        Function::Streams,
        Function::Analytics,
        Function::Webhooks,
    ];

    /// Its logical id in `template.yaml`.
    pub fn template_resource(self) -> &'static str {
        match self {
            Function::Discovery => "DiscoveryFunction",
            Function::Streams => "StreamsFunction",
            Function::Analytics => "AnalyticsFunction",
            Function::Webhooks => "WebhooksFunction",
        }
    }
}

/// Where a parameter is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    Path,
    Query,
}

/// A schema by name: `schema_of::<T>` for a Rust type, or a hand-written one.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// The schema of `T`, registered as a named component.
pub fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

pub struct Parameter {
    pub name: &'static str,
    pub location: In,
    pub required: bool,
    pub description: &'static str,
    pub schema: SchemaFn,
}

pub enum Body {
    /// `application/json` of this schema.
    Json(SchemaFn),
    /// The error envelope, with one of these codes.
    Error(&'static [ErrorCode]),
    /// A web page.
    Html,
    /// A static file of this media type (the console's script and style).
    Text(&'static str),
}

pub struct Header {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: SchemaFn,
}

pub struct Response {
    pub status: u16,
    pub description: &'static str,
    pub body: Body,
    pub headers: &'static [Header],
}

pub struct Endpoint {
    /// The OpenAPI `operationId`, the name generated clients give the call.
    pub operation_id: &'static str,
    /// The group generated clients file the call under (`streams`, `webhooks`, ...).
    pub tag: &'static str,
    /// The function that serves it.
    pub function: Function,
    pub method: Method,
    /// Relative to the base URL (`/api/v1`), in axum's `{param}` syntax.
    pub path: &'static str,
    pub access: Access,
    /// One line: the discovery document's description and the OpenAPI summary.
    pub summary: &'static str,
    pub description: &'static str,
    /// Path parameters.
    pub parameters: &'static [Parameter],
    /// Query parameters, from the endpoint's query type (`T::PARAMETERS`, see
    /// [`super::query`]).
    pub query: &'static [Parameter],
    pub request_body: Option<SchemaFn>,
    /// The request body may be left out entirely.
    pub body_optional: bool,
    pub responses: &'static [Response],
    /// A create that takes `Idempotency-Key` (docs/idempotency.md).
    pub idempotent: bool,
    /// A write whose handler runs alongside the request's rate-limit count, as every read's
    /// does, so that its first read shares a round trip with the count; its writes wait for
    /// the count to admit the request ([`hosting_support::admission`]).
    pub write_counted_alongside: bool,
}

impl Endpoint {
    /// What a declaration leaves out: no parameters, no body, not idempotent, counted first.
    pub const DEFAULT: Endpoint = Endpoint {
        operation_id: "",
        tag: "",
        function: Function::Discovery,
        method: Method::GET,
        path: "",
        access: Access::Public,
        summary: "",
        description: "",
        parameters: &[],
        query: &[],
        request_body: None,
        body_optional: false,
        responses: &[],
        idempotent: false,
        write_counted_alongside: false,
    };

    /// The handler runs alongside the rate-limit count rather than after it: every read
    /// (`GET`, `HEAD`), and the writes that say so.
    pub fn counted_alongside(&self) -> bool {
        matches!(self.method, Method::GET | Method::HEAD) || self.write_counted_alongside
    }

    pub fn scope(&self) -> Option<Scope> {
        match self.access {
            Access::Public => None,
            Access::Keyed(scope) => Some(scope),
        }
    }

    /// A document for people or programs (the OpenAPI document, the reference page, the
    /// console and its files), as opposed to an operation on the brand's data.
    pub fn is_document(&self) -> bool {
        matches!(
            self.path,
            "/openapi.json"
                | "/docs"
                | "/console"
                | "/console.js"
                | "/console.css"
                | "/console.svg"
        )
    }

    /// The discovery document's description: the summary and who may call.
    pub fn discovery_description(&self) -> String {
        match self.access {
            Access::Public => format!("{} Public, no key needed.", self.summary),
            Access::Keyed(scope) => format!("{} Requires scope {scope}.", self.summary),
        }
    }
}
pub(super) fn string(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string" })
}

pub(super) fn list_limit(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": MAX_LIST_LIMIT, "default": DEFAULT_LIST_LIMIT })
}

pub(super) fn list_offset(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 0, "default": 0 })
}

/// Every endpoint, in the order the documents list them: the modules' declarations, module by
/// module.
pub static ENDPOINTS: std::sync::LazyLock<Vec<&'static Endpoint>> =
    std::sync::LazyLock::new(|| {
        [
            public::DECLARED,
            streams::DECLARED,
            clips::DECLARED,
            shows::DECLARED,
            webhooks::DECLARED,
            test_helpers::DECLARED,
        ]
        .concat()
    });
// The discovery document, `GET /api/v1/` (docs/request-pipeline.md, "Public endpoints").
/// What the API is and which endpoints it serves.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Discovery {
    pub name: &'static str,
    pub version: &'static str,
    pub status: &'static str,
    /// The reference page, for people.
    #[schemars(url)]
    pub docs: String,
    /// The OpenAPI document, for programs.
    #[schemars(url)]
    pub openapi: String,
    /// `"<METHOD> <path>"` -> what it does and the scope it needs.
    pub endpoints: BTreeMap<String, String>,
    pub authentication: String,
}

/// The discovery document for an API served at `base_url` (ending in `/api/v1`).
pub fn discovery_document(base_url: &str) -> Discovery {
    let scopes: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    let public: Vec<String> = ENDPOINTS
        .iter()
        .filter(|e| e.access == Access::Public && !e.is_document())
        .map(|e| format!("{} {}", e.method, e.path))
        .collect();
    Discovery {
        name: "Live Stream Hosting API",
        version: "v1",
        status: "early_access",
        docs: format!("{base_url}{}", DOCS.path),
        openapi: format!("{base_url}{}", OPENAPI.path),
        endpoints: ENDPOINTS
            .iter()
            .map(|e| {
                (
                    format!("{} {}", e.method, e.path),
                    e.discovery_description(),
                )
            })
            .collect(),
        authentication: format!(
            "Send `Authorization: Bearer <API_KEY>`. Keys start with svc_live_ (live) or svc_test_ (test) and carry scopes: {}. {} are public.",
            scopes.join(", "),
            public.join(" and ")
        ),
    }
}
