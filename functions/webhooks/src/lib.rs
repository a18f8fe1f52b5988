//! `POST /webhooks`, `GET /webhooks`, `DELETE /webhooks?id=`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::post;
use axum::{Json, Router};
use shared::http::body::JsonObject;
use shared::http::pipeline::{Authorized, WebhooksWrite};
use shared::http::query::QueryParams;
use shared::http::{API_PREFIX, idempotency_key};
use shared::service::webhooks;
use shared::{ApiResult, App};

pub fn router(app: App) -> Router {
    Router::new()
        .route(
            &format!("{API_PREFIX}/webhooks"),
            post(register).get(list).delete(delete),
        )
        .with_state(app)
}

async fn register(
    State(app): State<App>,
    Authorized(caller, _): Authorized<WebhooksWrite>,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> ApiResult<impl IntoResponse> {
    webhooks::register(&app, &caller, &body, idempotency_key(&headers)).await
}

async fn list(
    State(app): State<App>,
    Authorized(caller, _): Authorized<WebhooksWrite>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(webhooks::list(&app, &caller).await?))
}

async fn delete(
    State(app): State<App>,
    Authorized(caller, _): Authorized<WebhooksWrite>,
    query: QueryParams,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(
        webhooks::delete(&app, &caller, query.get("id")).await?,
    ))
}
