//! Errors of every layer, and the one place where they become the API's error envelope.

use schemars::JsonSchema;
use serde::Serialize;

use crate::Scope;

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
    /// LiveKit's webhook receiver could not read the secret it checks signatures with: a
    /// backend failure (`db_error`) answered `503`, which LiveKit sends again (docs/livekit.md,
    /// "LiveKit webhooks").
    #[error("The signing secret could not be read; send the event again.")]
    SecretUnavailable,
    /// A clip asked of a recording that is not `ready` (docs/clips.md).
    #[error("The stream's recording is not ready; clips are cut from a ready recording.")]
    RecordingNotReady,
    /// Refused by the local server's transport before routing (docs/request-pipeline.md,
    /// "Limits of the transport").
    #[error("The request line exceeds {0} bytes.")]
    RequestLineTooLong(usize),
    #[error("{0}")]
    HeaderFieldsTooLarge(String),
    #[error("The request is not valid HTTP/1.1: {0}.")]
    MalformedRequest(&'static str),
}

/// The `code` of an error: stable, for programs to match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    MissingFields,
    InvalidFields,
    InvalidCreator,
    InvalidUrl,
    InvalidEvents,
    Unauthorized,
    PlanRequired,
    InsufficientScope,
    VerticalMismatch,
    NotFound,
    RateLimited,
    ConcurrencyLimit,
    IdempotencyKeyInUse,
    IdempotencyKeyMismatch,
    DbError,
    LaunchFailed,
    RecordingNotReady,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MissingFields => "missing_fields",
            ErrorCode::InvalidFields => "invalid_fields",
            ErrorCode::InvalidCreator => "invalid_creator",
            ErrorCode::InvalidUrl => "invalid_url",
            ErrorCode::InvalidEvents => "invalid_events",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::PlanRequired => "plan_required",
            ErrorCode::InsufficientScope => "insufficient_scope",
            ErrorCode::VerticalMismatch => "vertical_mismatch",
            ErrorCode::NotFound => "not_found",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::ConcurrencyLimit => "concurrency_limit",
            ErrorCode::IdempotencyKeyInUse => "idempotency_key_in_use",
            ErrorCode::IdempotencyKeyMismatch => "idempotency_key_mismatch",
            ErrorCode::DbError => "db_error",
            ErrorCode::LaunchFailed => "launch_failed",
            ErrorCode::RecordingNotReady => "recording_not_ready",
        }
    }
}

/// The error envelope every failure answers with: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "Error")]
pub struct ErrorEnvelope {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    /// A sentence for people; match on `code`, never on this.
    #[schemars(length(min = 1))]
    pub message: String,
}

impl ApiError {
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::MissingFields(_) => ErrorCode::MissingFields,
            ApiError::InvalidFields(_) => ErrorCode::InvalidFields,
            ApiError::InvalidCreator => ErrorCode::InvalidCreator,
            ApiError::InvalidUrl(_) => ErrorCode::InvalidUrl,
            ApiError::InvalidEvents(_) => ErrorCode::InvalidEvents,
            ApiError::Unauthorized => ErrorCode::Unauthorized,
            ApiError::PlanRequired => ErrorCode::PlanRequired,
            ApiError::InsufficientScope(_) => ErrorCode::InsufficientScope,
            ApiError::VerticalMismatch(_) => ErrorCode::VerticalMismatch,
            ApiError::NotFound => ErrorCode::NotFound,
            ApiError::RateLimited => ErrorCode::RateLimited,
            ApiError::ConcurrencyLimit => ErrorCode::ConcurrencyLimit,
            ApiError::IdempotencyKeyInUse => ErrorCode::IdempotencyKeyInUse,
            ApiError::IdempotencyKeyMismatch => ErrorCode::IdempotencyKeyMismatch,
            ApiError::Db(_) | ApiError::SecretUnavailable => ErrorCode::DbError,
            ApiError::LaunchFailed(_) => ErrorCode::LaunchFailed,
            ApiError::RecordingNotReady => ErrorCode::RecordingNotReady,
            ApiError::RequestLineTooLong(_)
            | ApiError::HeaderFieldsTooLarge(_)
            | ApiError::MalformedRequest(_) => ErrorCode::InvalidFields,
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            ApiError::MissingFields(_)
            | ApiError::InvalidFields(_)
            | ApiError::InvalidCreator
            | ApiError::InvalidUrl(_)
            | ApiError::InvalidEvents(_)
            | ApiError::MalformedRequest(_) => 400,
            ApiError::RequestLineTooLong(_) => 414,
            ApiError::HeaderFieldsTooLarge(_) => 431,
            ApiError::Unauthorized => 401,
            ApiError::PlanRequired => 402,
            ApiError::InsufficientScope(_) | ApiError::VerticalMismatch(_) => 403,
            ApiError::NotFound => 404,
            ApiError::RateLimited | ApiError::ConcurrencyLimit => 429,
            ApiError::IdempotencyKeyInUse | ApiError::RecordingNotReady => 409,
            ApiError::IdempotencyKeyMismatch => 422,
            ApiError::Db(_) => 500,
            ApiError::LaunchFailed(_) => 502,
            ApiError::SecretUnavailable => 503,
        }
    }

    /// The client-facing sentence. Backend details stay in the log.
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// The envelope, `{"error": {"code", "message"}}`, as sent.
    pub fn body(&self) -> String {
        let envelope = ErrorEnvelope {
            error: ErrorDetail {
                code: self.code(),
                message: self.message(),
            },
        };
        serde_json::to_string(&envelope).unwrap_or_default()
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        ApiError::Db(err)
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
