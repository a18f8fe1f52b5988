//! AWS adapters: DynamoDB for all state, SQS for webhook deliveries, EventBridge Scheduler
//! for stream timers.

pub mod dynamodb;
mod positions;
pub mod scheduler;
pub mod sqs;

/// The SDK configuration from the environment (`AWS_REGION`, credentials, and
/// `AWS_ENDPOINT_URL` for a local emulator).
pub async fn sdk_config() -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .load()
        .await
}

/// One line describing an SDK error with its cause, for logs and `StoreError`.
pub fn describe<E: std::error::Error>(err: &E) -> String {
    aws_sdk_dynamodb::error::DisplayErrorContext(err).to_string()
}
