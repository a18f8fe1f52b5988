//! AWS adapters: DynamoDB for all state, SQS for webhook deliveries, EventBridge Scheduler
//! for stream timers.

use std::ops::Deref;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

pub mod dynamodb;
pub mod kms;
pub mod lambda_config;
pub mod s3;
mod s3_objects;
pub mod scheduler;
pub mod sqs;
pub mod ssm;
pub mod trust;

/// The SDK's shared configuration, from which every client is built.
pub use aws_types::SdkConfig;
pub use lambda_config::{LambdaSdkConfigError, lambda_sdk_config};

/// The SDK configuration through `aws-config`'s chains (environment, profile files, single
/// sign-on, instance metadata), for the local server, the admin tool and tests: its clients
/// share one HTTP client that trusts the roots of [`trust`]. Fails only on a bundle named by
/// `AWS_CA_BUNDLE` that cannot be used. Lambda functions use [`lambda_sdk_config`].
pub async fn sdk_config() -> Result<SdkConfig, trust::CaBundleError> {
    let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(trust::http_client(trust::trusted_roots()?));
    // Credentials in these variables (as the test scripts and emulators set them) are taken as
    // they are. The SDK's default chain would take them too, but only after building its other
    // providers (web identity with an STS client, container, instance metadata).
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_some()
        && std::env::var_os("AWS_SECRET_ACCESS_KEY").is_some()
    {
        loader = loader.credentials_provider(
            aws_config::environment::EnvironmentVariableCredentialsProvider::new(),
        );
    }
    Ok(loader.load().await)
}

/// An SDK client built on its first use, so that an instance pays only for the clients its
/// requests use: building one parses its SDK's table of endpoint partitions (BENCHMARKS.md,
/// "Cold start"), and a function that reads streams never queues a delivery or sets a timer.
pub struct LazyClient<C>(Arc<LazyLock<C, Box<dyn FnOnce() -> C + Send>>>);

impl<C> LazyClient<C> {
    pub fn new(build: impl FnOnce() -> C + Send + 'static) -> Self {
        Self(Arc::new(LazyLock::new(Box::new(build))))
    }
}

impl<C> Clone for LazyClient<C> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<C> Deref for LazyClient<C> {
    type Target = C;

    fn deref(&self) -> &C {
        &self.0
    }
}

/// A client built already.
impl<C: Send + 'static> From<C> for LazyClient<C> {
    fn from(client: C) -> Self {
        Self::new(move || client)
    }
}

/// A DynamoDB client whose SDK retries are quick: the store retries throttling and conflicts
/// itself with longer backoff ([`dynamodb`]'s request layer), and a request must settle well
/// inside a function's timeout.
pub fn dynamodb_client(sdk: &SdkConfig) -> aws_sdk_dynamodb::Client {
    let retry = aws_sdk_dynamodb::config::retry::RetryConfig::standard()
        .with_max_attempts(3)
        .with_initial_backoff(Duration::from_millis(20))
        .with_max_backoff(Duration::from_millis(500));
    let config = aws_sdk_dynamodb::config::Builder::from(sdk)
        .retry_config(retry)
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

/// One readable line describing an SDK error and its causes (their messages, without the
/// SDK's debug detail), for logs and `StoreError`.
pub fn describe<E: std::error::Error>(err: &E) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_lazy_client_is_built_once_on_first_use_and_shared_by_its_clones() {
        let builds = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&builds);
        let client = LazyClient::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            String::from("client")
        });
        let clone = client.clone();
        assert_eq!(
            builds.load(Ordering::SeqCst),
            0,
            "built before its first use"
        );
        assert_eq!(clone.as_str(), "client");
        assert_eq!(client.len(), 6);
        assert_eq!(builds.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_built_client_is_used_as_it_is() {
        let client = LazyClient::from(String::from("built"));
        assert_eq!(&*client, "built");
    }
}
