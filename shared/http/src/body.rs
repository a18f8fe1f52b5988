//! Request bodies: parsed as JSON whatever the `Content-Type`, at most 1 MiB.

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use serde_json::{Map, Value};

use hosting_domain::error::ApiError;

pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// A request body that is a JSON object.
#[derive(Debug, Clone)]
pub struct JsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = crate::ErrorResponse;

    async fn from_request(request: Request, _state: &S) -> Result<Self, crate::ErrorResponse> {
        let bytes = read_limited(request.into_body()).await?;
        Ok(parse_object(&bytes).map(JsonObject)?)
    }
}

/// The body's bytes, at most [`MAX_BODY_BYTES`].
pub async fn read_limited(body: Body) -> Result<bytes::Bytes, ApiError> {
    axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|err| {
            let too_large = std::error::Error::source(&err)
                .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
            if too_large {
                ApiError::InvalidFields("The request body exceeds 1 MiB.".into())
            } else {
                ApiError::MissingFields("The request body could not be read.".into())
            }
        })
}

pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ApiError::MissingFields(
            "The request body must be a JSON object.".into(),
        )),
        Err(_) => Err(ApiError::MissingFields(
            "The request body is not valid JSON.".into(),
        )),
    }
}

/// An optional request body: absent (empty or blank) is `None`; present, it must be a JSON
/// object, and anything else is `invalid_fields` (there is no field to be missing).
#[derive(Debug, Clone)]
pub struct OptionalJsonObject(pub Option<Map<String, Value>>);

impl<S: Send + Sync> FromRequest<S> for OptionalJsonObject {
    type Rejection = crate::ErrorResponse;

    async fn from_request(request: Request, _state: &S) -> Result<Self, crate::ErrorResponse> {
        let bytes = read_limited(request.into_body()).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJsonObject(None));
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(object)) => Ok(OptionalJsonObject(Some(object))),
            _ => Err(ApiError::InvalidFields(
                "The request body, when sent, must be a JSON object.".into(),
            )
            .into()),
        }
    }
}
