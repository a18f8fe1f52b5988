//! `POST /webhooks`, `GET /webhooks`, `DELETE /webhooks?id=`, and one webhook's operations:
//! `GET` and `PATCH /webhooks/{id}`, `POST /webhooks/{id}/rotate-secret`,
//! `POST /webhooks/{id}/test`, `GET /webhooks/{id}/deliveries`, `POST /webhooks/{id}/redeliver`.

use axum::extract::Path;
use axum::extract::State;
use axum::extract::rejection::PathRejection;
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::{Json, Router};
use hosting_app::App;
use hosting_app::service::webhooks;
use hosting_domain::ApiError;
use hosting_domain::ApiResult;
use hosting_domain::domain::paging::ListQuery;
use hosting_http::body::{JsonObject, OptionalJsonObject};
use hosting_http::endpoints::{
    DELETE_WEBHOOK, DeleteWebhookParams, DeliveriesParams, Function, GET_WEBHOOK, LIST_DELIVERIES,
    LIST_WEBHOOKS, REDELIVER, REGISTER_WEBHOOK, ROTATE_WEBHOOK_SECRET, TEST_WEBHOOK,
    UPDATE_WEBHOOK,
};
use hosting_http::query::Query;
use hosting_http::routes::{Admitted, Routes};
use hosting_http::{CreateAnswer, idempotency_key};

pub fn router(app: App) -> Router {
    routes(Routes::new(app, Function::Webhooks)).into_router()
}

/// This function's endpoints, added to `routes` (its own router, or the gateway's of every
/// function).
pub fn routes(routes: Routes) -> Routes {
    routes
        .serve(&REGISTER_WEBHOOK, register)
        .serve(&LIST_WEBHOOKS, list)
        .serve(&DELETE_WEBHOOK, delete)
        .serve(&GET_WEBHOOK, get_one)
        .serve(&UPDATE_WEBHOOK, update)
        .serve(&ROTATE_WEBHOOK_SECRET, rotate_secret)
        .serve(&TEST_WEBHOOK, send_test)
        .serve(&LIST_DELIVERIES, deliveries)
        .serve(&REDELIVER, redeliver)
}

async fn register(
    State(app): State<App>,
    Admitted(caller): Admitted,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> ApiResult<impl IntoResponse> {
    webhooks::register(&app, &caller, &body, idempotency_key(&headers))
        .await
        .map(CreateAnswer)
}

async fn list(State(app): State<App>, Admitted(caller): Admitted) -> ApiResult<impl IntoResponse> {
    Ok(Json(webhooks::list(&app, &caller).await?))
}

async fn delete(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Query(query): Query<DeleteWebhookParams>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(
        webhooks::delete(&app, &caller, query.id.as_deref()).await?,
    ))
}

/// The webhook the path names; a path that names nothing is `404` whatever the body.
fn webhook_id(id: Result<Path<String>, PathRejection>) -> ApiResult<uuid::Uuid> {
    let Path(id) = id.map_err(|_| ApiError::NotFound)?;
    webhooks::webhook_id(&id)
}

async fn get_one(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: Result<Path<String>, PathRejection>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(webhooks::get(&app, &caller, webhook_id(id)?).await?))
}

async fn update(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: Result<Path<String>, PathRejection>,
    body: Result<JsonObject, ApiError>,
) -> ApiResult<impl IntoResponse> {
    // The path first, then the body, then the lookup.
    let id = webhook_id(id)?;
    let JsonObject(body) = body?;
    Ok(Json(webhooks::update(&app, &caller, id, &body).await?))
}

async fn rotate_secret(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: Result<Path<String>, PathRejection>,
    body: Result<OptionalJsonObject, ApiError>,
) -> ApiResult<impl IntoResponse> {
    let id = webhook_id(id)?;
    let OptionalJsonObject(body) = body?;
    Ok(Json(
        webhooks::rotate_secret(&app, &caller, id, body.as_ref()).await?,
    ))
}

async fn send_test(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: Result<Path<String>, PathRejection>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(
        webhooks::send_test(&app, &caller, webhook_id(id)?).await?,
    ))
}

async fn deliveries(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: Result<Path<String>, PathRejection>,
    Query(query): Query<DeliveriesParams>,
) -> ApiResult<impl IntoResponse> {
    let paging = ListQuery::new(None, query.limit.as_deref(), None);
    let log = webhooks::deliveries(
        &app,
        &caller,
        webhook_id(id)?,
        webhooks::DeliveriesQuery {
            limit: paging.limit,
            cursor: query.cursor.as_deref(),
            status: query.status.as_deref(),
            event_id: query.event_id.as_deref(),
        },
    )
    .await?;
    Ok(Json(log))
}

async fn redeliver(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: Result<Path<String>, PathRejection>,
    body: Result<JsonObject, ApiError>,
) -> ApiResult<impl IntoResponse> {
    let id = webhook_id(id)?;
    let JsonObject(body) = body?;
    let queued = webhooks::redeliver(&app, &caller, id, &body).await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}
