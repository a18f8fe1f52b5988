//! `GET /analytics`.

use axum::extract::State;
use axum::{Json, Router};
use hosting_app::App;
use hosting_app::service::analytics;
use hosting_domain::analytics::Analytics;
use hosting_http::HandlerResult;
use hosting_http::endpoints::{AnalyticsParams, Function, GET_ANALYTICS};
use hosting_http::query::Query;
use hosting_http::routes::{Admitted, Routes};

pub fn router(app: App) -> Router {
    routes(Routes::new(app, Function::Analytics)).into_router()
}

/// This function's endpoints, added to `routes` (its own router, or the gateway's of every
/// function).
pub fn routes(routes: Routes) -> Routes {
    routes.serve(&GET_ANALYTICS, get_analytics)
}

async fn get_analytics(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Query(query): Query<AnalyticsParams>,
) -> HandlerResult<Json<Analytics>> {
    let analytics = analytics::get(
        &app,
        &caller,
        query.period.as_deref(),
        query.stream_id.as_deref(),
    )
    .await?;
    Ok(Json(analytics))
}
