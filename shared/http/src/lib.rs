//! What every HTTP endpoint shares: the request pipeline, body and query parsing, the request
//! id, the 404 envelope for unknown routes, and the discovery table.

pub mod body;
pub mod endpoints;
pub mod pipeline;
pub mod query;
pub mod routes;

use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::http::header::{CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use hosting_domain::error::ApiError;

pub use hosting_domain::API_PREFIX;

/// The id of the request as the API gateway assigned it, when there is a gateway.
#[derive(Debug, Clone)]
pub struct GatewayRequestId(pub String);

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Completes a router for serving: the 404 envelope for unknown paths and for methods a path
/// does not serve, then [`edge`] around everything.
pub fn finish(router: Router) -> Router {
    router
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
        .layer(middleware::from_fn(edge))
}

/// The route template a request matched (`/api/v1/streams/{id}`), for the access log. Set on
/// the answer by the layer of the endpoint ([`routes`]), or by the 404 of a method the path
/// does not serve.
#[derive(Debug, Clone)]
pub(crate) struct Route(pub(crate) MatchedPath);

impl Route {
    /// Records the route a request `matched` onto its answer.
    pub(crate) fn record(matched: Option<MatchedPath>, response: &mut Response) {
        if let Some(matched) = matched {
            response.extensions_mut().insert(Route(matched));
        }
    }
}

/// What every request gets, in one layer (each layer costs every request a boxed future):
/// a slot for the standing the pipeline counts it at, written onto the answer as the
/// rate-limit headers ([`pipeline::RequestCount`]); `X-Request-Id` on every answer; and one
/// access-log line.
async fn edge(mut request: Request, next: Next) -> Response {
    let (method, started) = (request.method().clone(), Instant::now());
    let gateway_id = request
        .extensions()
        .get::<GatewayRequestId>()
        .map(|id| id.0.clone());
    let mut generated = uuid::Uuid::encode_buffer();
    let request_id: &str = match &gateway_id {
        Some(id) => id,
        None => uuid::Uuid::new_v4()
            .hyphenated()
            .encode_lower(&mut generated),
    };
    let count = pipeline::RequestCount::default();
    request.extensions_mut().insert(count.clone());
    let mut response = next.run(request).await;
    count.write_standing(response.headers_mut());
    if let Ok(value) = HeaderValue::from_str(request_id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    access_log(&method, started, request_id, &response);
    response
}

/// One line per request: method, route template, status, latency, request id and, once the
/// pipeline admitted it, the brand. Never a key, a secret or a body.
fn access_log(method: &Method, started: Instant, request_id: &str, response: &Response) {
    let route = response
        .extensions()
        .get::<Route>()
        .map_or("(no route)", |route| route.0.as_str());
    let brand_id = response
        .extensions()
        .get::<routes::AccessBrand>()
        .map_or("", |brand| brand.0.as_str());
    // Strings as `%` (Display): the text format writes them as they are, without escaping
    // each character.
    tracing::info!(
        method = %method,
        route = %route,
        status = response.status().as_u16(),
        latency_ms = started.elapsed().as_micros() as f64 / 1000.0,
        request_id = %request_id,
        brand_id = %brand_id,
        "request"
    );
}

/// A create's answer as a response: the stored status, body and `Location`, and
/// `Idempotent-Replayed: true` on a replay.
pub struct CreateAnswer(pub hosting_app::service::idempotency::Answer);

impl IntoResponse for CreateAnswer {
    fn into_response(self) -> Response {
        let CreateAnswer(answer) = self;
        let status =
            StatusCode::from_u16(answer.stored.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (
            status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            answer.stored.body,
        )
            .into_response();
        let headers = response.headers_mut();
        if let Some(location) = answer
            .stored
            .location
            .and_then(|l| HeaderValue::from_str(&l).ok())
        {
            headers.insert(LOCATION, location);
        }
        if answer.replayed {
            headers.insert(
                hosting_domain::domain::idempotency::REPLAYED_HEADER,
                HeaderValue::from_static("true"),
            );
        }
        response
    }
}

/// The raw `Idempotency-Key` header, checked by the operation with the body.
pub fn idempotency_key(headers: &axum::http::HeaderMap) -> Option<&[u8]> {
    headers
        .get(hosting_domain::domain::idempotency::HEADER)
        .map(HeaderValue::as_bytes)
}

async fn not_found(matched: Option<MatchedPath>) -> Response {
    let mut response = ApiError::NotFound.into_response();
    Route::record(matched, &mut response);
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
