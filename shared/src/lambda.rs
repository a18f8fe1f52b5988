//! Running the API's routers in AWS Lambda behind an API Gateway HTTP API.

use axum::Router;
use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};
use tower::ServiceBuilder;

use crate::app::App;
use crate::config::{Config, StoreKind};
use crate::http::{self, GatewayRequestId};
use crate::telemetry;

pub type Error = lambda_http::Error;

/// Builds the app from the environment and serves `routes(app)` until the runtime stops.
pub async fn run_http(routes: fn(App) -> Router) -> Result<(), Error> {
    telemetry::init_json();
    let config = Config::from_env(StoreKind::DynamoDb)?;
    let app = build_app(config).await?;
    let service = ServiceBuilder::new()
        .map_request(from_gateway)
        .service(http::finish(routes(app)));
    lambda_http::run(service).await
}

/// The app on the backends the configuration names.
pub async fn build_app(config: Config) -> Result<App, Error> {
    let clock = std::sync::Arc::new(crate::clock::SystemClock);
    Ok(crate::runtime::Runtime::from_config(config, clock)
        .await?
        .app)
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
