//! What every HTTP endpoint shares: the request pipeline, body and query parsing, the request
//! id, the 404 envelope for unknown routes, and the discovery table.

pub mod body;
pub mod docs_page;
pub mod endpoints;
pub mod openapi;
pub mod pipeline;
pub mod query;
pub mod routes;

use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::http::header::{CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

pub use crate::API_PREFIX;

/// The id of the request as the API gateway assigned it, when there is a gateway.
#[derive(Debug, Clone)]
pub struct GatewayRequestId(pub String);

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Completes a router for serving: the 404 envelope for unknown paths and for methods a path
/// does not serve, every counted request's rate-limit headers, `X-Request-Id` on every
/// response, and one access-log line per request.
pub fn finish(router: Router) -> Router {
    router
        .route_layer(middleware::from_fn(remember_route))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
        .layer(middleware::from_fn(pipeline::settle_count))
        .layer(middleware::from_fn(request_id))
        .layer(middleware::from_fn(access_log))
}

/// The route template a request matched (`/api/v1/streams/{id}`), for the access log.
#[derive(Debug, Clone)]
struct Route(String);

async fn remember_route(matched: Option<MatchedPath>, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    if let Some(matched) = matched {
        response
            .extensions_mut()
            .insert(Route(matched.as_str().to_owned()));
    }
    response
}

/// One line per request: method, route template, status, latency, request id and, once the
/// pipeline admitted it, the brand. Never a key, a secret or a body.
async fn access_log(request: Request, next: Next) -> Response {
    let (method, started) = (request.method().clone(), std::time::Instant::now());
    let response = next.run(request).await;
    let route = response
        .extensions()
        .get::<Route>()
        .map_or("(no route)", |route| route.0.as_str());
    let request_id = response
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|id| id.to_str().ok())
        .unwrap_or_default();
    let brand_id = response
        .extensions()
        .get::<routes::AccessBrand>()
        .map_or("", |brand| brand.0.as_str());
    tracing::info!(
        method = %method,
        route,
        status = response.status().as_u16(),
        latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        request_id,
        brand_id,
        "request"
    );
    response
}

/// A create's answer: the stored status, body and `Location`, and `Idempotent-Replayed: true`
/// on a replay.
impl IntoResponse for crate::service::idempotency::Answer {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.stored.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (
            status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            self.stored.body,
        )
            .into_response();
        let headers = response.headers_mut();
        if let Some(location) = self
            .stored
            .location
            .and_then(|l| HeaderValue::from_str(&l).ok())
        {
            headers.insert(LOCATION, location);
        }
        if self.replayed {
            headers.insert(
                crate::domain::idempotency::REPLAYED_HEADER,
                HeaderValue::from_static("true"),
            );
        }
        response
    }
}

/// The raw `Idempotency-Key` header, checked by the operation with the body.
pub fn idempotency_key(headers: &axum::http::HeaderMap) -> Option<&[u8]> {
    headers
        .get(crate::domain::idempotency::HEADER)
        .map(HeaderValue::as_bytes)
}

async fn not_found() -> ApiError {
    ApiError::NotFound
}

async fn request_id(request: Request, next: Next) -> Response {
    let id = request
        .extensions()
        .get::<GatewayRequestId>()
        .map(|id| id.0.clone())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut response = next.run(request).await.into_response();
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    response
}

/// `/streams/` is the same route as `/streams`. Applied before routing, so it wraps the router.
pub fn trim_trailing_slash<B>(mut request: http::Request<B>) -> http::Request<B> {
    let uri = request.uri();
    let path = uri.path();
    if path.len() > 1 && path.ends_with('/') {
        let trimmed = path.trim_end_matches('/');
        let trimmed = if trimmed.is_empty() { "/" } else { trimmed };
        let path_and_query = match uri.query() {
            Some(query) => format!("{trimmed}?{query}"),
            None => trimmed.to_owned(),
        };
        let mut parts = uri.clone().into_parts();
        if let Ok(pq) = path_and_query.parse() {
            parts.path_and_query = Some(pq);
            if let Ok(uri) = Uri::from_parts(parts) {
                *request.uri_mut() = uri;
            }
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_trailing_slashes() {
        let trim = |uri: &str| {
            trim_trailing_slash(http::Request::builder().uri(uri).body(()).unwrap())
                .uri()
                .to_string()
        };
        assert_eq!(trim("/api/v1/streams/"), "/api/v1/streams");
        assert_eq!(trim("/api/v1/streams/?limit=5"), "/api/v1/streams?limit=5");
        assert_eq!(trim("/api/v1/"), "/api/v1");
        assert_eq!(trim("/"), "/");
        assert_eq!(trim("/api/v1/streams"), "/api/v1/streams");
    }
}
