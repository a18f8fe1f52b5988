//! `POST /webhooks`, `GET /webhooks`, `DELETE /webhooks?id=`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::{Json, Router};
use shared::domain::Caller;
use shared::http::body::JsonObject;
use shared::http::endpoints::{DELETE_WEBHOOK, LIST_WEBHOOKS, REGISTER_WEBHOOK};
use shared::http::idempotency_key;
use shared::http::query::QueryParams;
use shared::http::routes::Routes;
use shared::service::webhooks;
use shared::{ApiResult, App};

pub fn router(app: App) -> Router {
    Routes::new(app)
        .serve(&REGISTER_WEBHOOK, register)
        .serve(&LIST_WEBHOOKS, list)
        .serve(&DELETE_WEBHOOK, delete)
        .into_router()
}

async fn register(
    State(app): State<App>,
    caller: Caller,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> ApiResult<impl IntoResponse> {
    webhooks::register(&app, &caller, &body, idempotency_key(&headers)).await
}

async fn list(State(app): State<App>, caller: Caller) -> ApiResult<impl IntoResponse> {
    Ok(Json(webhooks::list(&app, &caller).await?))
}

async fn delete(
    State(app): State<App>,
    caller: Caller,
    query: QueryParams,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(
        webhooks::delete(&app, &caller, query.get("id")).await?,
    ))
}
