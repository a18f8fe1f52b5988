//! `POST /webhooks`, `GET /webhooks`, `DELETE /webhooks?id=`, and one webhook's operations:
//! `GET` and `PATCH /webhooks/{id}`, `POST /webhooks/{id}/rotate-secret`,
//! `POST /webhooks/{id}/test`, `GET /webhooks/{id}/deliveries`, `POST /webhooks/{id}/redeliver`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::{Json, Router};
use hosting_app::App;
use hosting_app::service::webhooks;
use hosting_domain::delivery_log::{DeliveryLog, Redelivered, TestDelivery};
use hosting_domain::paging::limit_and_offset;
use hosting_domain::webhook::{SecretRotated, WebhookDeleted, WebhookDetail, WebhookList};
use hosting_http::body::{JsonObject, OptionalJsonObject};
use hosting_http::endpoints::{
    DELETE_WEBHOOK, DeleteWebhookParams, DeliveriesParams, Function, GET_WEBHOOK, LIST_DELIVERIES,
    LIST_WEBHOOKS, REDELIVER, REGISTER_WEBHOOK, ROTATE_WEBHOOK_SECRET, TEST_WEBHOOK,
    UPDATE_WEBHOOK,
};
use hosting_http::query::Query;
use hosting_http::routes::{Admitted, Routes};
use hosting_http::{CreateAnswer, HandlerResult, PathId, idempotency_key};

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
) -> HandlerResult<CreateAnswer> {
    let answer = webhooks::register(&app, &caller, &body, idempotency_key(&headers)).await?;
    Ok(CreateAnswer(answer))
}

async fn list(
    State(app): State<App>,
    Admitted(caller): Admitted,
) -> HandlerResult<Json<WebhookList>> {
    Ok(Json(webhooks::list(&app, &caller).await?))
}

async fn delete(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Query(query): Query<DeleteWebhookParams>,
) -> HandlerResult<Json<WebhookDeleted>> {
    Ok(Json(
        webhooks::delete(&app, &caller, query.id.as_deref()).await?,
    ))
}

async fn get_one(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: PathId,
) -> HandlerResult<Json<WebhookDetail>> {
    Ok(Json(webhooks::get(&app, &caller, id.found()?).await?))
}

// A path that names nothing is `404` whatever the body: the path first, then the body, then the
// lookup.

async fn update(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: PathId,
    body: HandlerResult<JsonObject>,
) -> HandlerResult<Json<WebhookDetail>> {
    let id = id.found()?;
    let JsonObject(body) = body?;
    Ok(Json(webhooks::update(&app, &caller, id, &body).await?))
}

async fn rotate_secret(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: PathId,
    body: HandlerResult<OptionalJsonObject>,
) -> HandlerResult<Json<SecretRotated>> {
    let id = id.found()?;
    let OptionalJsonObject(body) = body?;
    Ok(Json(
        webhooks::rotate_secret(&app, &caller, id, body.as_ref()).await?,
    ))
}

async fn send_test(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: PathId,
) -> HandlerResult<Json<TestDelivery>> {
    Ok(Json(webhooks::send_test(&app, &caller, id.found()?).await?))
}

async fn deliveries(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: PathId,
    Query(query): Query<DeliveriesParams>,
) -> HandlerResult<Json<DeliveryLog>> {
    let (limit, _) = limit_and_offset(query.limit.as_deref(), None);
    let log = webhooks::deliveries(
        &app,
        &caller,
        id.found()?,
        webhooks::DeliveriesQuery {
            limit,
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
    id: PathId,
    body: HandlerResult<JsonObject>,
) -> HandlerResult<(StatusCode, Json<Redelivered>)> {
    let id = id.found()?;
    let JsonObject(body) = body?;
    let queued = webhooks::redeliver(&app, &caller, id, &body).await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}
