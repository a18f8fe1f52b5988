//! Secrets from SSM Parameter Store: in Lambda the LiveKit API secret is a `SecureString`
//! parameter, read once per instance at start-up, so it is in no environment variable that
//! `lambda:GetFunctionConfiguration` would show.

use std::time::Duration;

use crate::trust::CaBundleError;

/// An SSM client that outlasts throttling: every instance reads its secret at start-up, so a
/// burst of cold starts meets SSM's request-rate limit, and a throttled read retried for a few
/// seconds beats an instance that fails to start.
///
/// Its connections are its own, not pooled with the instance's other clients: the secret is
/// read on a thread and runtime of its own, which drive those connections and end with the
/// read. Fails only as [`crate::lambda_sdk_config`] would have, on the bundle `AWS_CA_BUNDLE`
/// names.
pub fn client(sdk: &crate::SdkConfig) -> Result<aws_sdk_ssm::Client, CaBundleError> {
    let retry = aws_sdk_ssm::config::retry::RetryConfig::standard()
        .with_max_attempts(8)
        .with_initial_backoff(Duration::from_millis(50))
        .with_max_backoff(Duration::from_secs(1));
    let config = aws_sdk_ssm::config::Builder::from(sdk)
        .http_client(crate::trust::http_client(crate::trust::trusted_roots()?))
        .retry_config(retry)
        .build();
    Ok(aws_sdk_ssm::Client::from_conf(config))
}

/// Why a secret parameter could not be read. Never carries the value.
#[derive(Debug, thiserror::Error)]
#[error("SSM parameter {name}: {reason}")]
pub struct ParameterError {
    pub name: String,
    pub reason: String,
}

/// The decrypted value of the `SecureString` (or `String`) parameter `name`. What [`client`]'s
/// retries do not overcome stops the instance at start-up.
pub async fn read_secure_string(
    client: &aws_sdk_ssm::Client,
    name: &str,
) -> Result<String, ParameterError> {
    let error = |reason: String| ParameterError {
        name: name.to_owned(),
        reason,
    };
    let output = client
        .get_parameter()
        .name(name)
        .with_decryption(true)
        .send()
        .await
        .map_err(|err| error(super::describe(&err)))?;
    output
        .parameter
        .and_then(|parameter| parameter.value)
        .filter(|value| !value.trim().is_empty())
        .ok_or_else(|| error("the parameter has no value".into()))
}
