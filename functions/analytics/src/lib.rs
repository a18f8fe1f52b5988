//! `GET /analytics`.

use axum::extract::State;
use axum::{Json, Router};
use shared::domain::Caller;
use shared::domain::analytics::Analytics;
use shared::http::endpoints::GET_ANALYTICS;
use shared::http::query::QueryParams;
use shared::http::routes::Routes;
use shared::service::analytics;
use shared::{ApiResult, App};

pub fn router(app: App) -> Router {
    Routes::new(app)
        .serve(&GET_ANALYTICS, get_analytics)
        .into_router()
}

async fn get_analytics(
    State(app): State<App>,
    caller: Caller,
    query: QueryParams,
) -> ApiResult<Json<Analytics>> {
    let analytics =
        analytics::get(&app, &caller, query.get("period"), query.get("stream_id")).await?;
    Ok(Json(analytics))
}
