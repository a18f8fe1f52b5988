//! The HTTP functions' Lambda entry: a router behind an API Gateway HTTP API.

use axum::Router;
use hosting_app::App;
use hosting_http::GatewayRequestId;
use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};
use tower::ServiceBuilder;

use super::{Error, runtime_from_env};

/// `routes(app)` as a Lambda HTTP service: request ids from the gateway, trailing slashes
/// trimmed, the 404 envelope for unknown routes.
pub fn http_service(
    routes: fn(App) -> Router,
    app: App,
) -> impl tower::Service<
    Request,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone {
    ServiceBuilder::new()
        .map_request(from_gateway)
        .service(hosting_http::finish(routes(app)))
}

/// Serves `routes(app)` until the runtime stops.
pub async fn run_http(routes: fn(App) -> Router) -> Result<(), Error> {
    let runtime = runtime_from_env().await?;
    lambda_http::run(http_service(routes, runtime.app)).await
}

/// Carries the gateway's request id into the response header and normalizes the path.
fn from_gateway(mut request: Request) -> Request {
    let gateway_id = match request.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(context)) => context.request_id.clone(),
        _ => None,
    };
    if let Some(id) = gateway_id {
        request.extensions_mut().insert(GatewayRequestId(id));
    }
    hosting_http::trim_trailing_slash(request)
}
