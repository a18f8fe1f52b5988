//! The API's operations as the contract lists them, written out once for the whole suite and
//! apart from the declarations (`hosting_http::endpoints`) that the router, the discovery
//! document and the OpenAPI document are built from. The tests compare those, the template's
//! routes and the docs' endpoint lists with this table, so an endpoint added in one place and
//! not the others fails. Adding an endpoint adds its row here.

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Public,
    /// A key holding this scope.
    Scope(&'static str),
    /// A test key holding this scope (the test helpers).
    TestKeys(&'static str),
}

impl Access {
    pub fn scope(self) -> Option<&'static str> {
        match self {
            Access::Public => None,
            Access::Scope(scope) | Access::TestKeys(scope) => Some(scope),
        }
    }
}

pub struct Operation {
    pub method: &'static str,
    /// Relative to `/api/v1`.
    pub path: &'static str,
    pub access: Access,
}

impl Operation {
    /// `"METHOD /path"`, as the discovery document keys it.
    pub fn key(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

const fn op(method: &'static str, path: &'static str, access: Access) -> Operation {
    Operation {
        method,
        path,
        access,
    }
}

use Access::{Public, Scope, TestKeys};

pub const OPERATIONS: &[Operation] = &[
    op("GET", "/", Public),
    op("GET", "/openapi.json", Public),
    op("GET", "/docs", Public),
    op("GET", "/console", Public),
    op("GET", "/console.js", Public),
    op("GET", "/console.css", Public),
    op("GET", "/console.svg", Public),
    op("GET", "/creators", Public),
    op("POST", "/streams", Scope("streams:write")),
    op("GET", "/streams", Scope("streams:read")),
    op("GET", "/streams/{id}", Scope("streams:read")),
    op("DELETE", "/streams/{id}", Scope("streams:write")),
    op("POST", "/streams/{id}/destinations", Scope("streams:write")),
    op(
        "DELETE",
        "/streams/{id}/destinations/{destination_id}",
        Scope("streams:write"),
    ),
    op("POST", "/streams/{id}/clips", Scope("streams:write")),
    op("GET", "/streams/{id}/clips", Scope("streams:read")),
    op(
        "GET",
        "/streams/{id}/clips/{clip_id}",
        Scope("streams:read"),
    ),
    op(
        "DELETE",
        "/streams/{id}/clips/{clip_id}",
        Scope("streams:write"),
    ),
    op("POST", "/shows", Scope("streams:write")),
    op("GET", "/shows", Scope("streams:read")),
    op("GET", "/shows/{id}", Scope("streams:read")),
    op("PATCH", "/shows/{id}", Scope("streams:write")),
    op("DELETE", "/shows/{id}", Scope("streams:write")),
    op("GET", "/analytics", Scope("analytics:read")),
    op("POST", "/webhooks", Scope("webhooks:write")),
    op("GET", "/webhooks", Scope("webhooks:write")),
    op("DELETE", "/webhooks", Scope("webhooks:write")),
    op("GET", "/webhooks/{id}", Scope("webhooks:write")),
    op("PATCH", "/webhooks/{id}", Scope("webhooks:write")),
    op(
        "POST",
        "/webhooks/{id}/rotate-secret",
        Scope("webhooks:write"),
    ),
    op("POST", "/webhooks/{id}/test", Scope("webhooks:write")),
    op("GET", "/webhooks/{id}/deliveries", Scope("webhooks:write")),
    op("POST", "/webhooks/{id}/redeliver", Scope("webhooks:write")),
    op(
        "POST",
        "/test_helpers/streams/{id}/viewers",
        TestKeys("streams:write"),
    ),
    op(
        "POST",
        "/test_helpers/streams/{id}/finish",
        TestKeys("streams:write"),
    ),
    op(
        "POST",
        "/test_helpers/streams/{id}/fail",
        TestKeys("streams:write"),
    ),
    op(
        "POST",
        "/test_helpers/streams/{id}/destinations/{destination_id}/fail",
        TestKeys("streams:write"),
    ),
    op(
        "POST",
        "/test_helpers/shows/{id}/start",
        TestKeys("streams:write"),
    ),
];

/// Every keyed operation: method, path and the scope it needs.
pub fn keyed() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    OPERATIONS
        .iter()
        .filter_map(|o| Some((o.method, o.path, o.access.scope()?)))
}
