//! The whole API on one router: every function's routes under `/api/v1`, served by the same
//! handlers as in Lambda.

use axum::Router;
use axum::extract::Request;
use shared::App;
use shared::http::{finish, trim_trailing_slash};
use tower::ServiceExt;
use tower::util::MapRequest;

/// Every public route of every function, completed with the 404 envelope and request ids.
pub fn router(app: App) -> Router {
    finish(
        Router::new()
            .merge(discovery_api::router(app.clone()))
            .merge(streams_api::router(app.clone()))
            .merge(analytics_api::router(app.clone()))
            .merge(webhooks_api::router(app.clone()))
            .merge(livekit_webhook::router(app)),
    )
}

pub type ApiService = MapRequest<Router, fn(Request) -> Request>;

/// [`router`] with trailing slashes trimmed before routing, ready to serve.
pub fn service(app: App) -> ApiService {
    router(app).map_request(trim_trailing_slash as fn(Request) -> Request)
}
