//! Errors of every layer, and the one place where they become the API's error envelope.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::domain::Scope;

/// A failure of a backend (store, queue, timers). Details go to the log, never to the client.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("backend request failed: {0}")]
    Backend(String),
    #[error("stored data is malformed: {0}")]
    Corrupt(String),
}

/// A failure of the room provider (LiveKit).
#[derive(Debug, thiserror::Error)]
#[error("room provider: {0}")]
pub struct RoomError(pub String);

/// Every error the public API answers with. `code()` and `status()` are the spec's error table.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    MissingFields(String),
    #[error("{0}")]
    InvalidFields(String),
    #[error("creator_id does not match any creator.")]
    InvalidCreator,
    #[error("{0}")]
    InvalidUrl(String),
    #[error("{0}")]
    InvalidEvents(String),
    #[error("A valid API key is required.")]
    Unauthorized,
    #[error("Live keys require the Growth plan or above.")]
    PlanRequired,
    #[error("This API key lacks the required scope: {0}.")]
    InsufficientScope(Scope),
    #[error("{0}")]
    VerticalMismatch(String),
    #[error("The requested resource was not found.")]
    NotFound,
    #[error("Rate limit exceeded: at most 100 requests per minute.")]
    RateLimited,
    #[error("The brand already has 3 active streams.")]
    ConcurrencyLimit,
    #[error("A request with this Idempotency-Key is still in progress; retry once it answered.")]
    IdempotencyKeyInUse,
    #[error("This Idempotency-Key was used with a different request body.")]
    IdempotencyKeyMismatch,
    #[error("A database error occurred.")]
    Db(#[source] StoreError),
    #[error("The stream could not be launched.")]
    LaunchFailed(#[source] RoomError),
}

impl ApiError {
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::MissingFields(_) => "missing_fields",
            ApiError::InvalidFields(_) => "invalid_fields",
            ApiError::InvalidCreator => "invalid_creator",
            ApiError::InvalidUrl(_) => "invalid_url",
            ApiError::InvalidEvents(_) => "invalid_events",
            ApiError::Unauthorized => "unauthorized",
            ApiError::PlanRequired => "plan_required",
            ApiError::InsufficientScope(_) => "insufficient_scope",
            ApiError::VerticalMismatch(_) => "vertical_mismatch",
            ApiError::NotFound => "not_found",
            ApiError::RateLimited => "rate_limited",
            ApiError::ConcurrencyLimit => "concurrency_limit",
            ApiError::IdempotencyKeyInUse => "idempotency_key_in_use",
            ApiError::IdempotencyKeyMismatch => "idempotency_key_mismatch",
            ApiError::Db(_) => "db_error",
            ApiError::LaunchFailed(_) => "launch_failed",
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::MissingFields(_)
            | ApiError::InvalidFields(_)
            | ApiError::InvalidCreator
            | ApiError::InvalidUrl(_)
            | ApiError::InvalidEvents(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::PlanRequired => StatusCode::PAYMENT_REQUIRED,
            ApiError::InsufficientScope(_) | ApiError::VerticalMismatch(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::RateLimited | ApiError::ConcurrencyLimit => StatusCode::TOO_MANY_REQUESTS,
            ApiError::IdempotencyKeyInUse => StatusCode::CONFLICT,
            ApiError::IdempotencyKeyMismatch => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Db(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::LaunchFailed(_) => StatusCode::BAD_GATEWAY,
        }
    }

    /// The client-facing sentence. Backend details stay in the log.
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// The envelope, `{"error": {"code", "message"}}`, as sent.
    pub fn body(&self) -> String {
        serde_json::json!({
            "error": { "code": self.code(), "message": self.message() }
        })
        .to_string()
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        ApiError::Db(err)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Db(source) => tracing::error!(error = %source, "store failure"),
            ApiError::LaunchFailed(source) => tracing::warn!(error = %source, "launch failed"),
            _ => {}
        }
        let mut response = (
            self.status(),
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            self.body(),
        )
            .into_response();
        if matches!(self, ApiError::Unauthorized) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
