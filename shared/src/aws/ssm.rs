//! Secrets from SSM Parameter Store: in Lambda the LiveKit API secret is a `SecureString`
//! parameter, read once per instance at start-up, so it is in no environment variable that
//! `lambda:GetFunctionConfiguration` would show.

/// Why a secret parameter could not be read. Never carries the value.
#[derive(Debug, thiserror::Error)]
#[error("SSM parameter {name}: {reason}")]
pub struct ParameterError {
    pub name: String,
    pub reason: String,
}

/// The decrypted value of the `SecureString` (or `String`) parameter `name`. The SDK retries
/// throttling; anything else stops the instance at start-up.
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
