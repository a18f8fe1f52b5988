//! `POST /streams`, `GET /streams`, `GET /streams/{id}`, `DELETE /streams/{id}`.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use shared::domain::paging::ListQuery;
use shared::http::body::JsonObject;
use shared::http::pipeline::{Authorized, StreamsRead, StreamsWrite};
use shared::http::query::QueryParams;
use shared::http::{API_PREFIX, idempotency_key};
use shared::service::streams;
use shared::{ApiError, ApiResult, App};

pub fn router(app: App) -> Router {
    Router::new()
        .route(&format!("{API_PREFIX}/streams"), post(start).get(list))
        .route(
            &format!("{API_PREFIX}/streams/{{id}}"),
            get(get_one).delete(end),
        )
        .with_state(app)
}

async fn start(
    State(app): State<App>,
    Authorized(caller, _): Authorized<StreamsWrite>,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> ApiResult<impl IntoResponse> {
    streams::start(&app, &caller, &body, idempotency_key(&headers)).await
}

async fn list(
    State(app): State<App>,
    Authorized(caller, _): Authorized<StreamsRead>,
    query: QueryParams,
) -> ApiResult<impl IntoResponse> {
    let query = ListQuery::new(query.get("status"), query.get("limit"), query.get("offset"));
    Ok(Json(streams::list(&app, &caller, query).await?))
}

async fn get_one(
    State(app): State<App>,
    Authorized(caller, _): Authorized<StreamsRead>,
    id: Result<Path<String>, PathRejection>,
) -> ApiResult<impl IntoResponse> {
    let Path(id) = id.map_err(|_| ApiError::NotFound)?;
    Ok(Json(streams::get(&app, &caller, &id).await?))
}

async fn end(
    State(app): State<App>,
    Authorized(caller, _): Authorized<StreamsWrite>,
    id: Result<Path<String>, PathRejection>,
) -> ApiResult<impl IntoResponse> {
    let Path(id) = id.map_err(|_| ApiError::NotFound)?;
    Ok(Json(streams::end(&app, &caller, &id).await?))
}
