//! Running the functions in AWS Lambda: HTTP routers behind an API Gateway HTTP API, and the
//! background handlers (SQS, EventBridge Scheduler, DynamoDB Streams).

use axum::Router;
use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};
use tower::ServiceBuilder;

use std::sync::Arc;

use crate::app::{App, AppParts};
use crate::aws::dynamodb::DynamoStore;
use crate::aws::scheduler::SchedulerTimers;
use crate::aws::sqs::SqsQueue;
use crate::config::{Config, ConfigError, StoreKind};
use crate::http::{self, GatewayRequestId};
use crate::telemetry;

pub type Error = lambda_http::Error;

/// What a function instance runs on: DynamoDB, SQS and EventBridge Scheduler, each named by
/// its variable. Nothing falls back to an in-process backend, which would die with the
/// instance.
pub struct LambdaRuntime {
    pub app: App,
    pub queue: SqsQueue,
}

/// Reads the configuration and builds the runtime, once per instance. A missing variable
/// stops the instance at start-up with a message naming it, before any AWS call.
pub async fn runtime_from_env() -> Result<LambdaRuntime, Error> {
    let started = std::time::Instant::now();
    telemetry::init_json();
    let report = |err: &dyn std::fmt::Display| {
        tracing::error!("{err}");
        eprintln!("{err}");
    };
    let secret_parameter = livekit_secret_parameter().inspect_err(|err| report(err))?;
    // The secret is read once the rest of the configuration is known to be complete, so an
    // instance missing a variable stops before any AWS call.
    let mut config = Config::from_lookup(StoreKind::DynamoDb, |name| match name {
        LIVEKIT_API_SECRET => secret_parameter
            .as_ref()
            .map(|_| String::from("<from SSM>")),
        _ => std::env::var(name).ok(),
    })
    .and_then(|config| config.check_for_lambda().map(|()| config))
    .inspect_err(|err| report(err))?;
    let configured = started.elapsed();
    let sdk = crate::aws::sdk_config().await;
    let sdk_loaded = started.elapsed();
    if let (Some(livekit), Some(parameter)) = (config.livekit.as_mut(), &secret_parameter) {
        let ssm = crate::aws::ssm::client(&sdk);
        livekit.api_secret = crate::aws::ssm::read_secure_string(&ssm, parameter)
            .await
            .inspect_err(|err| report(err))?;
    }
    let secret_read = started.elapsed();
    let required = |name| config.required(name).map(str::to_owned);
    let store = DynamoStore::new(crate::aws::dynamodb_client(&sdk), required("TABLE_NAME")?);
    let queue = SqsQueue::new(
        aws_sdk_sqs::Client::new(&sdk),
        required("DELIVERY_QUEUE_URL")?,
        required("DELIVERY_DLQ_URL")?,
    );
    let timers = SchedulerTimers::new(
        aws_sdk_scheduler::Client::new(&sdk),
        required("SCHEDULER_GROUP")?,
        required("SCHEDULER_TARGET_ARN")?,
        required("SCHEDULER_ROLE_ARN")?,
        required("SCHEDULER_DLQ_ARN")?,
    );
    let rooms = crate::livekit::rooms_from_config(&config);
    // Where an instance's set-up time goes, for sizing and for cold-start work.
    let ms = |elapsed: std::time::Duration| elapsed.as_micros() as f64 / 1000.0;
    tracing::info!(
        configuration_ms = ms(configured),
        sdk_config_ms = ms(sdk_loaded - configured),
        secret_ms = ms(secret_read - sdk_loaded),
        clients_ms = ms(started.elapsed() - secret_read),
        "instance set up"
    );
    let app = App::new(AppParts {
        config,
        clock: Arc::new(crate::clock::SystemClock),
        store: Arc::new(store),
        timers: Arc::new(timers),
        queue: Arc::new(queue.clone()),
        rooms,
    });
    Ok(LambdaRuntime { app, queue })
}

const LIVEKIT_API_SECRET: &str = "LIVEKIT_API_SECRET";
/// Names the SSM parameter holding the LiveKit API secret.
pub const LIVEKIT_API_SECRET_PARAMETER: &str = "LIVEKIT_API_SECRET_PARAMETER";

/// The SSM parameter holding the LiveKit API secret, if one is named. A secret in the
/// environment itself is refused: anyone allowed to read the function's configuration could
/// read it.
fn livekit_secret_parameter() -> Result<Option<String>, ConfigError> {
    if std::env::var_os(LIVEKIT_API_SECRET).is_some() {
        return Err(ConfigError {
            variable: LIVEKIT_API_SECRET,
            reason: format!(
                "not read in Lambda; name an SSM SecureString parameter in \
                 {LIVEKIT_API_SECRET_PARAMETER}"
            ),
        });
    }
    Ok(std::env::var(LIVEKIT_API_SECRET_PARAMETER)
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty()))
}

/// Starts `binary` without each required variable in turn and checks that it exits at once,
/// naming the variable (the test of every function's `main`).
#[doc(hidden)]
pub fn assert_fails_fast_without_configuration(binary: &str) {
    use std::process::{Command, Stdio};
    for missing in crate::config::LAMBDA_REQUIRED {
        let mut command = Command::new(binary);
        command
            .env_clear()
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            // Nothing may be contacted: an address that refuses at once. The LiveKit secret's
            // parameter is named, so reading it first would fail on SSM, not on the variable.
            .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .env("LIVEKIT_URL", "http://127.0.0.1:9")
            .env("LIVEKIT_API_KEY", "APIsample")
            .env(
                LIVEKIT_API_SECRET_PARAMETER,
                "/live-stream-hosting/livekit-api-secret",
            )
            .env("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9")
            .stdin(Stdio::null());
        for variable in crate::config::LAMBDA_REQUIRED {
            if variable != missing {
                command.env(variable, "configured");
            }
        }
        let output = command.output().expect("the function binary starts");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success(),
            "{binary} started without {missing}"
        );
        assert!(
            stderr.contains(&format!("invalid configuration: {missing}: required")),
            "{binary} without {missing}: {stderr}"
        );
    }
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
