//! The `{id}` of a path, typed. Every id the API hands out is a UUID, so a path segment that
//! is not one names nothing: it is `404`, decided without a store read. The extractor never
//! rejects, so each handler states where that `404` falls among its other checks
//! ([`PathId::found`] where the path comes first; the raw option where a body is checked
//! before it).

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use hosting_domain::error::ApiError;
use uuid::Uuid;

#[derive(Debug, Clone, Copy)]
pub struct PathId(pub Option<Uuid>);

impl PathId {
    /// The id, or `404` when the path names nothing.
    pub fn found(self) -> Result<Uuid, ApiError> {
        self.0.ok_or(ApiError::NotFound)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let id = Path::<String>::from_request_parts(parts, state)
            .await
            .ok()
            .and_then(|Path(raw)| Uuid::parse_str(&raw).ok());
        Ok(PathId(id))
    }
}

/// The `{id}` and `{destination_id}` of a destination's path: the stream's id as [`PathId`]
/// reads it, and the destination's id as sent (an id the stream does not hold is not found).
#[derive(Debug, Clone)]
pub struct DestinationPath {
    pub stream_id: Option<Uuid>,
    pub destination_id: String,
}

impl<S: Send + Sync> FromRequestParts<S> for DestinationPath {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let (stream_id, destination_id) =
            Path::<(String, String)>::from_request_parts(parts, state)
                .await
                .map(|Path((id, destination_id))| (Uuid::parse_str(&id).ok(), destination_id))
                .unwrap_or_default();
        Ok(DestinationPath {
            stream_id,
            destination_id,
        })
    }
}

/// The `{id}` and `{clip_id}` of a clip's path: the stream's id as [`PathId`] reads it, and the
/// clip's id as sent (one that cannot name a clip is not found).
#[derive(Debug, Clone)]
pub struct ClipPath {
    pub stream_id: Option<Uuid>,
    pub clip_id: String,
}

impl<S: Send + Sync> FromRequestParts<S> for ClipPath {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let (stream_id, clip_id) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map(|Path((id, clip_id))| (Uuid::parse_str(&id).ok(), clip_id))
            .unwrap_or_default();
        Ok(ClipPath { stream_id, clip_id })
    }
}
