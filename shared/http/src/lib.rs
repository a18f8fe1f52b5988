//! What every HTTP endpoint shares: the request pipeline, body and query parsing, the request
//! id, the 404 envelope for unknown routes, and the discovery table.

pub mod body;
pub mod endpoints;
pub mod error;
pub mod path_id;
pub mod pipeline;
pub mod query;
pub mod record;
pub mod routes;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::Extension;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::MatchedPath;
use axum::http::header::{CONTENT_TYPE, LOCATION};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::{BoxError, Router};

use hosting_domain::error::ApiError;

use record::{Noted, RequestRecord};

pub use error::{ErrorResponse, HandlerResult, error_response};
pub use hosting_domain::API_PREFIX;
pub use path_id::{ClipPath, DestinationPath, PathId};

/// The id of the request as the API gateway assigned it, when there is a gateway.
#[derive(Debug, Clone)]
pub struct GatewayRequestId(pub String);

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Completes a router for serving: the 404 envelope for unknown paths and for methods a path
/// does not serve, then [`Edge`] around everything.
pub fn finish(router: Router) -> Edge {
    Edge {
        router: router
            .fallback(not_found)
            .method_not_allowed_fallback(not_found),
    }
}

/// What every request gets, around the whole router: a [`RequestRecord`] the router notes the
/// request's standing, route and brand in, the standing written onto the answer as the
/// rate-limit headers; `X-Request-Id` on every answer; and one access-log line.
///
/// A service of its own rather than a layer on the router: a router's layer wraps every route,
/// and costs every request a cloned service and boxed futures.
#[derive(Clone)]
pub struct Edge {
    router: Router,
}

impl<B> tower::Service<http::Request<B>> for Edge
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The router is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let mut request = request.map(Body::new);
        let (method, started) = (request.method().clone(), Instant::now());
        let gateway_id = request
            .extensions()
            .get::<GatewayRequestId>()
            .map(|id| id.0.clone());
        let record = RequestRecord::default();
        request.extensions_mut().insert(record.clone());
        let answer = self.router.call(request);
        Box::pin(async move {
            let Ok(mut response) = answer.await;
            let noted = record.take();
            let mut generated = uuid::Uuid::encode_buffer();
            let request_id: &str = match &gateway_id {
                Some(id) => id,
                None => uuid::Uuid::new_v4()
                    .hyphenated()
                    .encode_lower(&mut generated),
            };
            noted.write_standing(response.headers_mut());
            if let Ok(value) = HeaderValue::from_str(request_id) {
                response
                    .headers_mut()
                    .insert(HeaderName::from_static(REQUEST_ID_HEADER), value);
            }
            access_log(&method, started, request_id, &response, &noted);
            Ok(response)
        })
    }
}

/// One line per request: method, route template, status, latency, request id and, once the
/// pipeline admitted it, the brand. Never a key, a secret or a body.
fn access_log(
    method: &Method,
    started: Instant,
    request_id: &str,
    response: &Response,
    noted: &Noted,
) {
    let route = noted
        .route
        .as_ref()
        .map_or("(no route)", MatchedPath::as_str);
    let brand_id = noted.brand.as_ref().map_or("", |brand| brand.id.as_str());
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
                hosting_domain::idempotency::REPLAYED_HEADER,
                HeaderValue::from_static("true"),
            );
        }
        response
    }
}

/// The raw `Idempotency-Key` header, checked by the operation with the body.
pub fn idempotency_key(headers: &axum::http::HeaderMap) -> Option<&[u8]> {
    headers
        .get(hosting_domain::idempotency::HEADER)
        .map(HeaderValue::as_bytes)
}

/// The 404 envelope; for a method the path does not serve, the route is still noted for the
/// access log.
async fn not_found(
    matched: Option<MatchedPath>,
    record: Option<Extension<RequestRecord>>,
) -> Response {
    if let Some(Extension(record)) = record {
        record.note_route(matched);
    }
    error_response(&ApiError::NotFound)
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
