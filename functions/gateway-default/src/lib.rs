//! Every public route of every function on one router. The gateway sends each exact route
//! to its own function and everything else here (`$default`): trailing-slash variants, unknown
//! paths, methods a path does not serve. The local server serves this same router.

use axum::Router;
use hosting_app::App;

pub fn router(app: App) -> Router {
    Router::new()
        .merge(discovery_api::router(app.clone()))
        .merge(streams_api::router(app.clone()))
        .merge(analytics_api::router(app.clone()))
        .merge(webhooks_api::router(app.clone()))
        .merge(livekit_webhook::router(app))
}
