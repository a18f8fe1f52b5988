//! Every public route of every function on one router. The gateway sends each exact route
//! to its own function and everything else here (`$default`): trailing-slash variants, unknown
//! paths, methods a path does not serve. The local server serves this same router.

use axum::Router;
use hosting_app::App;
use hosting_http::routes::Routes;

pub fn router(app: App) -> Router {
    let routes = Routes::every_function(app);
    let routes = discovery_api::routes(routes);
    let routes = streams_api::routes(routes);
    let routes = analytics_api::routes(routes);
    let routes = webhooks_api::routes(routes);
    livekit_webhook::routes(routes).into_router()
}
