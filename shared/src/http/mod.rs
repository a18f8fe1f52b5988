//! What every HTTP endpoint shares: the request pipeline, body and query parsing, the request
//! id, the 404 envelope for unknown routes, and the discovery table.

pub mod body;
pub mod endpoints;
pub mod openapi;
pub mod pipeline;
pub mod query;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Every public path lives under this prefix.
pub const API_PREFIX: &str = "/api/v1";

/// The id of the request as the API gateway assigned it, when there is a gateway.
#[derive(Debug, Clone)]
pub struct GatewayRequestId(pub String);

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Completes a router for serving: the 404 envelope for unknown paths and for methods a path
/// does not serve, reads' deferred rate-limit counts settled, and `X-Request-Id` on every
/// response.
pub fn finish(router: Router) -> Router {
    router
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
        .layer(middleware::from_fn(pipeline::settle_deferred_count))
        .layer(middleware::from_fn(request_id))
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
