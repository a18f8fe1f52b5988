//! The whole API on one router: every function's routes, served by the same handlers as in
//! Lambda.

use axum::extract::Request;
use hosting_app::App;
use hosting_http::{Edge, finish, trim_trailing_slash};
use tower::ServiceExt;
use tower::util::MapRequest;

pub mod downloads;
pub mod log_writer;
pub mod transport;

/// Every public route, and the downloads of recordings kept in the local folder, completed
/// with the 404 envelope and request ids.
pub fn router(app: App) -> Edge {
    let downloads = downloads::routes(app.clone());
    finish(gateway_default::router(app).merge(downloads))
}

pub type ApiService = MapRequest<Edge, fn(Request) -> Request>;

/// [`router`] with trailing slashes trimmed before routing, ready to serve.
pub fn service(app: App) -> ApiService {
    router(app).map_request(trim_trailing_slash as fn(Request) -> Request)
}
