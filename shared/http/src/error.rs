//! The one place an [`ApiError`] becomes an HTTP answer: its status, the envelope as the body,
//! and `WWW-Authenticate: Bearer` on a `401`. Handlers and extractors return
//! [`HandlerResult`]; `?` on a service's `ApiResult` converts on the way.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hosting_domain::error::{ApiError, StoreError};

/// An error on its way to the client.
#[derive(Debug)]
pub struct ErrorResponse(pub ApiError);

/// What a handler or an extractor returns.
pub type HandlerResult<T> = Result<T, ErrorResponse>;

impl From<ApiError> for ErrorResponse {
    fn from(err: ApiError) -> Self {
        ErrorResponse(err)
    }
}

impl From<StoreError> for ErrorResponse {
    fn from(err: StoreError) -> Self {
        ErrorResponse(ApiError::Db(err))
    }
}

impl IntoResponse for ErrorResponse {
    fn into_response(self) -> Response {
        error_response(&self.0)
    }
}

/// The answer for `err`. Backend details go to the log here, never into the body.
pub fn error_response(err: &ApiError) -> Response {
    match err {
        ApiError::Db(source) => tracing::error!(error = %source, "store failure"),
        ApiError::LaunchFailed(source) => tracing::warn!(error = %source, "launch failed"),
        _ => {}
    }
    let status = StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        err.body(),
    )
        .into_response();
    if matches!(err, ApiError::Unauthorized) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}
