//! The local server's recording and clip downloads (docs/recordings.md, "Local server";
//! docs/clips.md): `GET /recordings/<brand_id>/<stream_id>.mp4?expires=...&signature=...` and
//! `GET /clips/<brand_id>/<stream_id>/<clip_id>.mp4?...`, the URLs the embedded recordings
//! folder signs. An expired, altered or unknown URL answers `404 not_found`, like
//! any path that names nothing. Lambda serves no such path: there the URLs are S3's.

use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use hosting_app::App;
use hosting_domain::ApiError;
use hosting_domain::ports::SignedDownload;
use hosting_domain::recording::{CLIPS_PREFIX, MP4_CONTENT_TYPE, RECORDINGS_PREFIX};
use hosting_http::ErrorResponse;

/// The download route, beside the API's.
pub fn routes(app: App) -> Router {
    Router::new()
        .route("/recordings/{*path}", get(recording))
        .route("/clips/{*path}", get(clip))
        .with_state(app)
}

async fn recording(
    State(app): State<App>,
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    download(app, format!("{RECORDINGS_PREFIX}{path}"), query).await
}

async fn clip(
    State(app): State<App>,
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    download(app, format!("{CLIPS_PREFIX}{path}"), query).await
}

async fn download(app: App, key: String, query: Option<String>) -> Response {
    let query = query.unwrap_or_default();
    let parameter = |name: &str| {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == name)
            .map_or("", |(_, v)| v)
    };
    match app
        .recordings
        .open_signed(&key, parameter("expires"), parameter("signature"))
        .await
    {
        SignedDownload::File(bytes) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, MP4_CONTENT_TYPE),
                (header::CACHE_CONTROL, "private, no-store"),
            ],
            bytes,
        )
            .into_response(),
        SignedDownload::Refused(why) => {
            tracing::info!(key = %key, reason = why, "recording download refused");
            ErrorResponse(ApiError::NotFound).into_response()
        }
        SignedDownload::Missing | SignedDownload::NotServed => {
            ErrorResponse(ApiError::NotFound).into_response()
        }
    }
}
