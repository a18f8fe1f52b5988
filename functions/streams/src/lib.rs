//! `POST /streams`, `GET /streams`, `GET /streams/{id}`, `DELETE /streams/{id}`.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::{Json, Router};
use shared::domain::Caller;
use shared::domain::paging::ListQuery;
use shared::http::body::JsonObject;
use shared::http::endpoints::{END_STREAM, GET_STREAM, LIST_STREAMS, START_STREAM};
use shared::http::idempotency_key;
use shared::http::query::QueryParams;
use shared::http::routes::Routes;
use shared::service::streams;
use shared::{ApiError, ApiResult, App};

pub fn router(app: App) -> Router {
    Routes::new(app)
        .serve(&START_STREAM, start)
        .serve(&LIST_STREAMS, list)
        .serve(&GET_STREAM, get_one)
        .serve(&END_STREAM, end)
        .into_router()
}

async fn start(
    State(app): State<App>,
    caller: Caller,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> ApiResult<impl IntoResponse> {
    streams::start(&app, &caller, &body, idempotency_key(&headers)).await
}

async fn list(
    State(app): State<App>,
    caller: Caller,
    query: QueryParams,
) -> ApiResult<impl IntoResponse> {
    let query = ListQuery::new(query.get("status"), query.get("limit"), query.get("offset"));
    Ok(Json(streams::list(&app, &caller, query).await?))
}

async fn get_one(
    State(app): State<App>,
    caller: Caller,
    id: Result<Path<String>, PathRejection>,
) -> ApiResult<impl IntoResponse> {
    let Path(id) = id.map_err(|_| ApiError::NotFound)?;
    Ok(Json(streams::get(&app, &caller, &id).await?))
}

async fn end(
    State(app): State<App>,
    caller: Caller,
    id: Result<Path<String>, PathRejection>,
) -> ApiResult<impl IntoResponse> {
    let Path(id) = id.map_err(|_| ApiError::NotFound)?;
    Ok(Json(streams::end(&app, &caller, &id).await?))
}
