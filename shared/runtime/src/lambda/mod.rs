//! Running the functions in AWS Lambda: the instance's set-up (configuration, the LiveKit
//! secret, DynamoDB, SQS and Scheduler) for the background handlers (SQS, EventBridge
//! Scheduler, DynamoDB Streams), and with the `lambda-http` feature the HTTP routers behind an
//! API Gateway HTTP API (`http.rs`), which background functions do not link.

use std::sync::Arc;

use hosting_app::app::{App, AppParts};
use hosting_aws::dynamodb::DynamoStore;
use hosting_aws::scheduler::SchedulerTimers;
use hosting_aws::sqs::SqsQueue;
use hosting_domain::config::{Config, ConfigError, StoreKind};
use hosting_domain::telemetry;

/// What a function's `main` returns (the Lambda runtime's own error type).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

#[cfg(feature = "lambda-http")]
mod http;
#[cfg(feature = "lambda-http")]
pub use http::{http_service, run_http};

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
    let sdk = hosting_aws::sdk_config().await;
    let sdk_loaded = started.elapsed();
    // The secret's round trip to SSM runs while the clients are built: the client futures
    // below never wait, so the join polls the read first, builds the clients while its
    // request is in flight, then waits for the answer.
    let read_secret = async {
        match (config.livekit.is_some(), &secret_parameter) {
            (true, Some(parameter)) => {
                let ssm = hosting_aws::ssm::client(&sdk);
                hosting_aws::ssm::read_secure_string(&ssm, parameter)
                    .await
                    .map(Some)
            }
            _ => Ok(None),
        }
    };
    let build_clients = async {
        let required = |name| config.required(name).map(str::to_owned);
        let store = DynamoStore::new(hosting_aws::dynamodb_client(&sdk), required("TABLE_NAME")?);
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
        Ok::<_, ConfigError>((store, queue, timers))
    };
    let (secret, clients) = tokio::join!(read_secret, build_clients);
    let (store, queue, timers) = clients.inspect_err(|err| report(err))?;
    if let (Some(livekit), Some(secret)) = (
        config.livekit.as_mut(),
        secret.inspect_err(|err| report(err))?,
    ) {
        livekit.api_secret = secret;
    }
    // LiveKit's client is built on its first call (hosting_livekit::LiveKitRooms).
    let rooms = hosting_livekit::rooms_from_config(&config);
    // Where an instance's set-up time goes, for sizing and for cold-start work.
    let ms = |elapsed: std::time::Duration| elapsed.as_micros() as f64 / 1000.0;
    tracing::info!(
        configuration_ms = ms(configured),
        sdk_config_ms = ms(sdk_loaded - configured),
        secret_and_clients_ms = ms(started.elapsed() - sdk_loaded),
        "instance set up"
    );
    let app = App::new(AppParts {
        config,
        clock: Arc::new(hosting_domain::clock::SystemClock),
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
    for missing in hosting_domain::config::LAMBDA_REQUIRED {
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
        for variable in hosting_domain::config::LAMBDA_REQUIRED {
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
