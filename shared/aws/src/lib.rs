//! AWS adapters: DynamoDB for all state, SQS for webhook deliveries, EventBridge Scheduler
//! for stream timers.

use std::time::Duration;

pub mod dynamodb;
pub mod scheduler;
pub mod sqs;
pub mod ssm;

/// The SDK's shared configuration, as the functions load it.
pub use aws_config::SdkConfig;

/// The SDK configuration from the environment (`AWS_REGION`, credentials, and
/// `AWS_ENDPOINT_URL` for a local emulator).
pub async fn sdk_config() -> SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .load()
        .await
}

/// A DynamoDB client whose SDK retries are quick: the store retries throttling and conflicts
/// itself with longer backoff ([`dynamodb`]'s request layer), and a request must settle well
/// inside a function's timeout.
pub fn dynamodb_client(sdk: &aws_config::SdkConfig) -> aws_sdk_dynamodb::Client {
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
