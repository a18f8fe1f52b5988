//! `GET /analytics`.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use shared::domain::analytics::Analytics;
use shared::http::API_PREFIX;
use shared::http::pipeline::{AnalyticsRead, Authorized};
use shared::http::query::QueryParams;
use shared::service::analytics;
use shared::{ApiResult, App};

pub fn router(app: App) -> Router {
    Router::new()
        .route(&format!("{API_PREFIX}/analytics"), get(get_analytics))
        .with_state(app)
}

async fn get_analytics(
    State(app): State<App>,
    Authorized(caller, _): Authorized<AnalyticsRead>,
    query: QueryParams,
) -> ApiResult<Json<Analytics>> {
    let analytics =
        analytics::get(&app, &caller, query.get("period"), query.get("stream_id")).await?;
    Ok(Json(analytics))
}
