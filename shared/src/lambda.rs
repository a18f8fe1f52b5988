//! Running the functions in AWS Lambda: HTTP routers behind an API Gateway HTTP API, and the
//! background handlers (SQS, EventBridge Scheduler, DynamoDB Streams).

use axum::Router;
use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};
use tower::ServiceBuilder;

use crate::app::App;
use crate::config::{Config, StoreKind};
use crate::http::{self, GatewayRequestId};
use crate::runtime::Runtime;
use crate::telemetry;

pub type Error = lambda_http::Error;

/// Reads the configuration and builds the runtime, once per instance.
pub async fn runtime_from_env() -> Result<Runtime, Error> {
    telemetry::init_json();
    let config = Config::from_env(StoreKind::DynamoDb)?;
    let clock = std::sync::Arc::new(crate::clock::SystemClock);
    Ok(Runtime::from_config(config, clock).await?)
}

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
        .service(http::finish(routes(app)))
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
    http::trim_trailing_slash(request)
}
