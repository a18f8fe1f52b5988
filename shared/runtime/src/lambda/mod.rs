//! Running the functions in AWS Lambda: the instance's set-up (configuration, the LiveKit
//! secret, DynamoDB, SQS and Scheduler) for the background handlers (SQS, EventBridge
//! Scheduler, DynamoDB Streams), and with the `lambda-http` feature the HTTP routers behind an
//! API Gateway HTTP API (`http.rs`), which background functions do not link.
//!
//! Every function's `main` runs on tokio's current-thread runtime. An instance serves one
//! invocation at a time on a fraction of a vCPU (a 128 MB function), so worker threads add
//! nothing but their start and a hand-over between threads for every wake-up: without them the
//! floor's hello-world takes less CPU and far fewer context switches to its first answer
//! (BENCHMARKS.md, "Cold start").
//! The one other thread is the LiveKit secret's reader ([`read_secret_aside`]), which ends
//! with its read.
//!
//! The functions allocate with glibc's allocator, not the local server's mimalloc
//! ([`crate::Allocator`]). mimalloc pays off under many threads; an instance has one, and
//! mimalloc's start (its options read from the environment, a fresh page per size class, more
//! page faults) costs a cold start more CPU than glibc's allocator costs warm invocations
//! (BENCHMARKS.md, "Cold start").

use std::sync::Arc;

use crate::telemetry;
use hosting_app::app::{App, AppParts};
use hosting_aws::dynamodb::DynamoStore;
use hosting_aws::kms::KmsKeyVault;
use hosting_aws::scheduler::{SchedulerTimers, TimerQueue};
use hosting_aws::sqs::SqsQueue;
use hosting_support::config::{ApiSecret, Config, ConfigError, SecretArrival, StoreKind};

/// Reports a failure that stops the instance: in its log, and on stderr, which Lambda shows
/// for a failed start.
fn report(err: &dyn std::fmt::Display) {
    tracing::error!("{err}");
    eprintln!("{err}");
}

/// Milliseconds, for the set-up's log lines.
fn ms(elapsed: std::time::Duration) -> f64 {
    elapsed.as_micros() as f64 / 1000.0
}

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
/// stops the instance at start-up with a message naming it, before any AWS call; an
/// unreadable LiveKit secret stops it as soon as its read gives up.
pub async fn runtime_from_env() -> Result<LambdaRuntime, Error> {
    let started = std::time::Instant::now();
    telemetry::init_json();
    let secret_parameter = named_secret_parameter(LIVEKIT_API_SECRET, LIVEKIT_API_SECRET_PARAMETER)
        .inspect_err(|err| report(err))?;
    let webhook_secret_parameter = named_secret_parameter(
        LIVEKIT_WEBHOOK_API_SECRET,
        LIVEKIT_WEBHOOK_API_SECRET_PARAMETER,
    )
    .inspect_err(|err| report(err))?;
    // The secret is read once the rest of the configuration is known to be complete (below),
    // so an instance missing a variable stops before any AWS call.
    let (arrival, api_secret) = ApiSecret::pending();
    let mut config = Config::from_lookup(StoreKind::DynamoDb, |name| match name {
        LIVEKIT_API_SECRET => secret_parameter
            .as_ref()
            .map(|_| String::from("<from SSM>")),
        LIVEKIT_WEBHOOK_API_SECRET => webhook_secret_parameter
            .as_ref()
            .map(|_| String::from("<from SSM>")),
        _ => std::env::var(name).ok(),
    })
    .and_then(|config| config.check_for_lambda().map(|()| config))
    .inspect_err(|err| report(err))?;
    let configured = started.elapsed();
    let sdk = hosting_aws::lambda_sdk_config().inspect_err(|err| report(err))?;
    let sdk_loaded = started.elapsed();
    let (store, queue, timers, vault) =
        build_clients(&config, &sdk).inspect_err(|err| report(err))?;
    // The secrets' round trips to SSM run while the instance starts serving: only what signs
    // or verifies with them (LiveKit's calls and tokens, its webhooks, an egress's upload)
    // waits for them.
    let mut reads = Vec::new();
    if let (Some(livekit), Some(parameter)) = (config.livekit.as_mut(), secret_parameter) {
        livekit.api_secret = api_secret;
        reads.push((parameter, arrival));
    }
    if let (Some(webhook_key), Some(parameter)) = (
        config
            .livekit
            .as_mut()
            .and_then(|livekit| livekit.webhook_key.as_mut()),
        webhook_secret_parameter,
    ) {
        let (arrival, secret) = ApiSecret::pending();
        webhook_key.api_secret = secret;
        reads.push((parameter, arrival));
    }
    if let Some(parameter) = upload_key_parameter() {
        let (arrival, upload_key) = ApiSecret::pending();
        config.recordings.upload_key = Some(upload_key);
        reads.push((parameter, arrival));
    }
    if !reads.is_empty() {
        read_secrets_aside(sdk.clone(), reads, started).inspect_err(|err| report(err))?;
    }
    // Signed with sessions of the download role: the environment's credentials carry no
    // expiry to bound a URL by (docs/recordings.md, "Downloads"). Its first URL assumes it.
    let recordings = hosting_aws::s3::S3Recordings::new(
        hosting_aws::LazyClient::new({
            let sdk = sdk.clone();
            move || hosting_aws::s3::client(&sdk)
        }),
        config
            .required("RECORDINGS_BUCKET")
            .inspect_err(|err| report(err))?
            .to_owned(),
    )
    .signing_as(
        &sdk,
        config
            .required("RECORDING_DOWNLOAD_ROLE_ARN")
            .inspect_err(|err| report(err))?,
    );
    // LiveKit's client is built on its first call (hosting_livekit::LiveKitRooms).
    let rooms = hosting_livekit::rooms_from_config(&config);
    // Where an instance's set-up time goes, for sizing and for cold-start work.
    tracing::info!(
        configuration_ms = ms(configured),
        sdk_config_ms = ms(sdk_loaded - configured),
        clients_ms = ms(started.elapsed() - sdk_loaded),
        "instance set up"
    );
    let clips_sqs = sdk.clone();
    let clip_queue = hosting_aws::sqs::SqsClipQueue::new(
        hosting_aws::LazyClient::new(move || aws_sdk_sqs::Client::new(&clips_sqs)),
        config
            .required("CLIPS_QUEUE_URL")
            .inspect_err(|err| report(err))?
            .to_owned(),
    );
    let app = App::new(AppParts {
        config,
        clock: Arc::new(hosting_domain::clock::SystemClock),
        store: Arc::new(store),
        timers: Arc::new(timers),
        queue: Arc::new(queue.clone()),
        clip_queue: Arc::new(clip_queue),
        rooms,
        recordings: Arc::new(recordings),
        vault: Arc::new(vault),
    });
    Ok(LambdaRuntime { app, queue })
}

/// Reads the secrets (the LiveKit secret, the recording upload key) from SSM on a thread of
/// its own at idle priority, and delivers each to whatever waits for it. The reads' own work
/// (their SSM client, the connection, signing: CPU a start would otherwise wait for) then runs
/// only while the instance's thread is idle, not ahead of the first answer on the one thread
/// (BENCHMARKS.md, "Cold start"). A read that fails for good stops the instance, naming the
/// parameter, as a failed start-up would.
fn read_secrets_aside(
    sdk: hosting_aws::SdkConfig,
    reads: Vec<(String, SecretArrival)>,
    started: std::time::Instant,
) -> Result<(), Error> {
    let read = move || -> Result<(), SecretReadError> {
        lower_to_idle_priority();
        // A runtime of the thread's own: the read's connection and timers live and end with it.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(SecretReadError::Runtime)?;
        runtime.block_on(async {
            let ssm = hosting_aws::ssm::client(&sdk)?;
            for (parameter, arrival) in reads {
                let secret = hosting_aws::ssm::read_secure_string(&ssm, &parameter).await?;
                // Logged before it is handed over, so the line precedes whatever waited for
                // it, even when this idle-priority thread gets no CPU for a while after.
                tracing::info!(parameter = %parameter, secret_ms = ms(started.elapsed()), "secret read");
                arrival.deliver(secret);
            }
            Ok::<_, SecretReadError>(())
        })?;
        Ok(())
    };
    std::thread::Builder::new()
        .name("secrets".into())
        .spawn(move || {
            if let Err(err) = read() {
                report(&err);
                std::process::exit(1);
            }
        })
        .map(drop)
        .map_err(|err| SecretReadError::Thread(err).into())
}

/// The SSM parameter of the egress's upload key pair, when one is configured.
fn upload_key_parameter() -> Option<String> {
    std::env::var(hosting_support::config::RECORDING_UPLOAD_KEY_PARAMETER)
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

/// Why the LiveKit secret could not be read; the instance stops with it. Never the value.
#[derive(Debug, thiserror::Error)]
enum SecretReadError {
    #[error("the secrets' reader did not start: {0}")]
    Thread(std::io::Error),
    #[error("the secrets' reader has no runtime: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    CaBundle(#[from] hosting_aws::trust::CaBundleError),
    #[error(transparent)]
    Parameter(#[from] hosting_aws::ssm::ParameterError),
}

/// Puts the calling thread in `SCHED_IDLE`: it runs only when no other thread of the instance
/// wants the CPU. Lowering one's own priority needs no privilege; where it is refused anyway,
/// the read runs at normal priority and only its timing changes.
fn lower_to_idle_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid `sched_param` for the call's duration; pid 0 is the
        // calling thread.
        let refused = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0;
        if refused {
            tracing::debug!(
                error = %std::io::Error::last_os_error(),
                "the LiveKit secret's reader keeps its priority"
            );
        }
    }
}

/// The instance's AWS clients: DynamoDB, SQS and EventBridge Scheduler.
fn build_clients(
    config: &Config,
    sdk: &hosting_aws::SdkConfig,
) -> Result<(DynamoStore, SqsQueue, SchedulerTimers, KmsKeyVault), ConfigError> {
    let required = |name| config.required(name).map(str::to_owned);
    // Each client is built on its first use (hosting_aws::LazyClient): most requests of most
    // functions neither queue nor schedule, and some answers need no store at all.
    let dynamodb_config = sdk.clone();
    let store = DynamoStore::new(
        hosting_aws::LazyClient::new(move || hosting_aws::dynamodb_client(&dynamodb_config)),
        required("TABLE_NAME")?,
    );
    let sqs_config = sdk.clone();
    let queue = SqsQueue::new(
        hosting_aws::LazyClient::new(move || aws_sdk_sqs::Client::new(&sqs_config)),
        required("DELIVERY_QUEUE_URL")?,
        required("DELIVERY_DLQ_URL")?,
    );
    let scheduler_config = sdk.clone();
    let handover_config = sdk.clone();
    let timers = SchedulerTimers::new(
        hosting_aws::LazyClient::new(move || aws_sdk_scheduler::Client::new(&scheduler_config)),
        required("SCHEDULER_GROUP")?,
        required("SCHEDULER_TARGET_ARN")?,
        required("SCHEDULER_ROLE_ARN")?,
        required("SCHEDULER_DLQ_ARN")?,
        TimerQueue::new(
            hosting_aws::LazyClient::new(move || aws_sdk_sqs::Client::new(&handover_config)),
            required("TIMER_QUEUE_URL")?,
            Arc::new(hosting_domain::clock::SystemClock),
        ),
    );
    let kms_config = sdk.clone();
    let vault = KmsKeyVault::new(
        hosting_aws::LazyClient::new(move || hosting_aws::kms::client(&kms_config)),
        required("SECRETS_KEY_ID")?,
        required("TABLE_NAME")?,
    );
    Ok((store, queue, timers, vault))
}

const LIVEKIT_API_SECRET: &str = "LIVEKIT_API_SECRET";
/// Names the SSM parameter holding the LiveKit API secret.
pub const LIVEKIT_API_SECRET_PARAMETER: &str = "LIVEKIT_API_SECRET_PARAMETER";
const LIVEKIT_WEBHOOK_API_SECRET: &str = "LIVEKIT_WEBHOOK_API_SECRET";
/// Names the SSM parameter holding the secret of the key LiveKit signs its webhooks with.
pub const LIVEKIT_WEBHOOK_API_SECRET_PARAMETER: &str = "LIVEKIT_WEBHOOK_API_SECRET_PARAMETER";

/// The SSM parameter `parameter` names, holding the secret of `variable`, if one is named. A
/// secret in the environment itself is refused: anyone allowed to read the function's
/// configuration could read it.
fn named_secret_parameter(
    variable: &'static str,
    parameter: &'static str,
) -> Result<Option<String>, ConfigError> {
    if std::env::var_os(variable).is_some() {
        return Err(ConfigError {
            variable,
            reason: format!(
                "not read in Lambda; name an SSM SecureString parameter in {parameter}"
            ),
        });
    }
    Ok(std::env::var(parameter)
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty()))
}

/// Starts `binary` without each required variable in turn and checks that it exits at once,
/// naming the variable (the test of every function's `main`).
#[doc(hidden)]
pub fn assert_fails_fast_without_configuration(binary: &str) {
    use std::process::{Command, Stdio};
    for missing in hosting_support::config::LAMBDA_REQUIRED {
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
        for variable in hosting_support::config::LAMBDA_REQUIRED {
            if variable != missing {
                // A role's variable is checked as an ARN.
                let value = if variable.ends_with("_ROLE_ARN") {
                    "arn:aws:iam::123456789012:role/configured"
                } else {
                    "configured"
                };
                command.env(variable, value);
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
