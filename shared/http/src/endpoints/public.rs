//! The public endpoints: discovery, the OpenAPI document, the reference page, the console,
//! creators.

use axum::http::Method;
use schemars::{Schema, SchemaGenerator, json_schema};

use super::{Access, Body, Discovery, Endpoint, Function, Header, Response, schema_of};
use hosting_domain::creator::CreatorList;
use hosting_domain::error::ErrorCode::*;

fn cache_control(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": ["public, max-age=60"] })
}

fn docs_cache_control(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": [DOCS_CACHE_CONTROL] })
}

/// The reference page changes only with a release.
pub const DOCS_CACHE_CONTROL: &str = "public, max-age=300";

fn content_security_policy(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string" })
}

/// The console's files: cached like the reference page, and confined to this host.
const CONSOLE_HEADERS: [Header; 2] = [
    Header {
        name: "Cache-Control",
        description: "Always `public, max-age=300`.",
        schema: docs_cache_control,
    },
    Header {
        name: "Content-Security-Policy",
        description: "Only this host (`default-src 'self'`); where replays download from the recordings bucket's host, that host for `<video>` alone.",
        schema: content_security_policy,
    },
];

fn openapi_document(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object", "required": ["openapi", "paths"] })
}

declare_endpoints! {
    pub static DISCOVERY: Endpoint = Endpoint {
        operation_id: "getDiscovery",
        tag: "discovery",
        function: Function::Discovery,
        method: Method::GET,
        path: "/",
        access: Access::Public,
        summary: "Discovery document; usable as a liveness check.",
        description: "Names the API and lists every endpoint with the scope it needs.",
        responses: &[Response {
            status: 200,
            description: "The discovery document.",
            body: Body::Json(schema_of::<Discovery>),
            headers: &[],
        }],
        ..Endpoint::DEFAULT
    };

    pub static OPENAPI: Endpoint = Endpoint {
        operation_id: "getOpenApi",
        tag: "discovery",
        function: Function::Discovery,
        method: Method::GET,
        path: "/openapi.json",
        access: Access::Public,
        summary: "This API's OpenAPI 3.1 description.",
        description: "The machine-readable description of every operation, built from the same declarations that route requests.",
        responses: &[Response {
            status: 200,
            description: "The OpenAPI document.",
            body: Body::Json(openapi_document),
            headers: &[],
        }],
        ..Endpoint::DEFAULT
    };

    pub static DOCS: Endpoint = Endpoint {
        operation_id: "getDocs",
        tag: "discovery",
        function: Function::Discovery,
        method: Method::GET,
        path: "/docs",
        access: Access::Public,
        summary: "This reference as a web page.",
        description: "HTML rendered from the OpenAPI document: every operation, the errors, the event catalogue and a guide to receiving webhooks. Self-contained: it loads nothing from another host and runs no script. Never rate limited.",
        responses: &[Response {
            status: 200,
            description: "The reference page.",
            body: Body::Html,
            headers: &[Header {
                name: "Cache-Control",
                description: "Always `public, max-age=300`.",
                schema: docs_cache_control,
            }],
        }],
        ..Endpoint::DEFAULT
    };

    pub static CONSOLE: Endpoint = Endpoint {
        operation_id: "getConsole",
        tag: "discovery",
        function: Function::Discovery,
        method: Method::GET,
        path: "/console",
        access: Access::Public,
        summary: "A console for test keys: see what the API does.",
        description: "A web page that calls this API with a test key kept in the browser's session storage: streams, webhooks and their delivery logs, shows, analytics and the test helpers. It refuses a live key before sending it anywhere, loads nothing from another host, and adds no endpoint: every action is one of this API's requests. Never rate limited (its own requests are, as any).",
        responses: &[Response {
            status: 200,
            description: "The console page.",
            body: Body::Html,
            headers: &CONSOLE_HEADERS,
        }],
        ..Endpoint::DEFAULT
    };

    pub static CONSOLE_SCRIPT: Endpoint = Endpoint {
        operation_id: "getConsoleScript",
        tag: "discovery",
        function: Function::Discovery,
        method: Method::GET,
        path: "/console.js",
        access: Access::Public,
        summary: "The console's script.",
        description: "Loaded by the console page. Never rate limited.",
        responses: &[Response {
            status: 200,
            description: "The script.",
            body: Body::Text("text/javascript"),
            headers: &CONSOLE_HEADERS,
        }],
        ..Endpoint::DEFAULT
    };

    pub static CONSOLE_STYLE: Endpoint = Endpoint {
        operation_id: "getConsoleStyle",
        tag: "discovery",
        function: Function::Discovery,
        method: Method::GET,
        path: "/console.css",
        access: Access::Public,
        summary: "The console's style sheet.",
        description: "Loaded by the console page. Never rate limited.",
        responses: &[Response {
            status: 200,
            description: "The style sheet.",
            body: Body::Text("text/css"),
            headers: &CONSOLE_HEADERS,
        }],
        ..Endpoint::DEFAULT
    };

    pub static CONSOLE_ICON: Endpoint = Endpoint {
        operation_id: "getConsoleIcon",
        tag: "discovery",
        function: Function::Discovery,
        method: Method::GET,
        path: "/console.svg",
        access: Access::Public,
        summary: "The console's icon.",
        description: "Named by the console page, so a browser asks for it instead of the host's `/favicon.ico`. Never rate limited.",
        responses: &[Response {
            status: 200,
            description: "The icon (SVG).",
            body: Body::Text("image/svg+xml"),
            headers: &CONSOLE_HEADERS,
        }],
        ..Endpoint::DEFAULT
    };

    pub static LIST_CREATORS: Endpoint = Endpoint {
        operation_id: "listCreators",
        tag: "creators",
        function: Function::Discovery,
        method: Method::GET,
        path: "/creators",
        access: Access::Public,
        summary: "Stock creators (AI hosts), sorted by name.",
        description: "Sorted by name (case-insensitive), then id. Never rate limited.",
        responses: &[
            Response {
                status: 200,
                description: "The creators.",
                body: Body::Json(schema_of::<CreatorList>),
                headers: &[Header {
                    name: "Cache-Control",
                    description: "Always `public, max-age=60`.",
                    schema: cache_control,
                }],
            },
            Response {
                status: 500,
                description: "Server-side database failure.",
                body: Body::Error(&[DbError]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };
}
