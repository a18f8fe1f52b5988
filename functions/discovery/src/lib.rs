//! Public endpoints: the discovery document (`GET /`), the OpenAPI description
//! (`GET /openapi.json`), the reference page rendered from it (`GET /docs`), the console
//! (`GET /console` and its files) and the creators catalog (`GET /creators`).

use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HOST};
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::Html;
use axum::{Json, Router};
use hosting_app::App;
use hosting_app::service::creators;
use hosting_docs::{console, docs_page, openapi};
use hosting_domain::creator::CreatorList;
use hosting_http::API_PREFIX;
use hosting_http::HandlerResult;
use hosting_http::endpoints::{self, DOCS_CACHE_CONTROL, Discovery, Function, discovery_document};
use hosting_http::routes::Routes;

pub fn router(app: App) -> Router {
    routes(Routes::new(app, Function::Discovery)).into_router()
}

/// This function's endpoints, added to `routes` (its own router, or the gateway's of every
/// function).
pub fn routes(routes: Routes) -> Routes {
    routes
        .serve(&endpoints::DISCOVERY, discovery)
        .serve(&endpoints::LIST_CREATORS, list_creators)
        .serve(&endpoints::OPENAPI, openapi)
        .serve(&endpoints::DOCS, docs)
        .serve(&endpoints::CONSOLE, console_page)
        .serve(&endpoints::CONSOLE_SCRIPT, console_script)
        .serve(&endpoints::CONSOLE_STYLE, console_style)
        .serve(&endpoints::CONSOLE_ICON, console_icon)
}

async fn discovery(State(app): State<App>, headers: HeaderMap) -> Json<Discovery> {
    Json(discovery_document(&base_url(&app, &headers)))
}

async fn openapi(State(app): State<App>, headers: HeaderMap) -> Json<serde_json::Value> {
    Json(openapi::document(&base_url(&app, &headers)))
}

async fn docs(
    State(app): State<App>,
    headers: HeaderMap,
) -> ([(HeaderName, HeaderValue); 1], Html<String>) {
    let page = docs_page::render(&openapi::document(&base_url(&app, &headers)));
    (
        [(CACHE_CONTROL, HeaderValue::from_static(DOCS_CACHE_CONTROL))],
        Html(page),
    )
}

/// A console file with its type, its cache and the page's policy (docs/console.md).
type ConsoleFile<Body> = ([(HeaderName, HeaderValue); 3], Body);

fn console_file<Body>(app: &App, content_type: &'static str, body: Body) -> ConsoleFile<Body> {
    let recordings = &app.config.recordings;
    let endpoint = std::env::var("AWS_ENDPOINT_URL").ok();
    let origin = console::recordings_origin(
        recordings.bucket.as_deref(),
        recordings.region.as_deref(),
        endpoint.as_deref(),
    );
    // A bucket name or an endpoint that cannot be a header falls back to this host alone.
    let policy = HeaderValue::from_str(&console::content_security_policy(origin.as_deref()))
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"));
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                CACHE_CONTROL,
                HeaderValue::from_static(console::CACHE_CONTROL),
            ),
            (CONTENT_SECURITY_POLICY, policy),
        ],
        body,
    )
}

async fn console_page(State(app): State<App>, headers: HeaderMap) -> ConsoleFile<String> {
    let page = console::page(&base_url(&app, &headers));
    console_file(&app, "text/html; charset=utf-8", page)
}

async fn console_script(State(app): State<App>) -> ConsoleFile<&'static str> {
    console_file(&app, "text/javascript; charset=utf-8", console::SCRIPT)
}

async fn console_style(State(app): State<App>) -> ConsoleFile<&'static str> {
    console_file(&app, "text/css; charset=utf-8", console::STYLE)
}

async fn console_icon(State(app): State<App>) -> ConsoleFile<&'static str> {
    console_file(&app, "image/svg+xml", console::ICON)
}

/// `PUBLIC_BASE_URL` when set, else what the request was addressed to.
fn base_url(app: &App, headers: &HeaderMap) -> String {
    if let Some(base) = &app.config.public_base_url {
        return base.clone();
    }
    let host = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("http");
    format!("{scheme}://{host}{API_PREFIX}")
}

async fn list_creators(
    State(app): State<App>,
) -> HandlerResult<([(HeaderName, HeaderValue); 1], Json<CreatorList>)> {
    let creators = creators::catalog(&app).await?;
    Ok((
        [(
            CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=60"),
        )],
        Json(CreatorList {
            creators: creators.creators().to_vec(),
        }),
    ))
}
