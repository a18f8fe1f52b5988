//! The AWS SDK's configuration in a Lambda function, from the variables Lambda sets (docs/aws.md,
//! "The AWS SDK's configuration in Lambda").
//!
//! `aws-config`'s loader resolves every setting through a chain (environment, profile files,
//! the instance metadata service, STS for web identity), and builds a provider for each link
//! before asking it: work and code pages on every cold start (BENCHMARKS.md, "Cold start"),
//! for settings Lambda always gives in the environment. A function builds its
//! configuration from those variables alone; the local server and the admin tool keep the full
//! chain ([`crate::sdk_config`]), for profiles and single sign-on on a developer's machine.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use aws_credential_types::Credentials;
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_smithy_async::rt::sleep::default_async_sleep;
use aws_smithy_async::time::SharedTimeSource;
use aws_smithy_runtime::client::identity::IdentityCache;
use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use aws_smithy_types::retry::RetryConfig;
use aws_smithy_types::timeout::TimeoutConfig;
use aws_types::SdkConfig;
use aws_types::region::Region;
use aws_types::service_config::{LoadServiceConfig, ServiceConfigKey};
use hosting_support::config::ConfigError;

use crate::trust::{self, CaBundleError};

/// The variables a function's SDK configuration is read from. Lambda sets the first four for
/// every function (the credentials are its execution role's); `AWS_ENDPOINT_URL` and its
/// per-service variants point the clients at an emulator.
pub const AWS_REGION: &str = "AWS_REGION";
pub const AWS_ACCESS_KEY_ID: &str = "AWS_ACCESS_KEY_ID";
pub const AWS_SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";
pub const AWS_SESSION_TOKEN: &str = "AWS_SESSION_TOKEN";
pub const AWS_ENDPOINT_URL: &str = "AWS_ENDPOINT_URL";

/// The connect timeout `aws-config` gives every client, kept so that a function's clients
/// behave as they did with it.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(3100);

/// Why a function has no SDK configuration; the instance stops at start-up, naming it.
#[derive(Debug, thiserror::Error)]
pub enum LambdaSdkConfigError {
    #[error(transparent)]
    Missing(#[from] ConfigError),
    #[error(transparent)]
    CaBundle(#[from] CaBundleError),
}

/// A function's SDK configuration from its environment: region, the execution role's
/// credentials, the endpoint overrides, and the HTTP client that trusts [`trust`]'s roots.
/// Retries, timeouts and the identity cache are the SDK's defaults for its latest behavior
/// version, as `aws-config` sets them.
pub fn lambda_sdk_config() -> Result<SdkConfig, LambdaSdkConfigError> {
    let http_client = trust::http_client(trust::trusted_roots()?);
    let mut config = config_from(Arc::new(|name| std::env::var(name).ok()))?;
    config.set_http_client(Some(http_client));
    Ok(config.build())
}

/// Reads a variable; the process environment, or a test's.
type Lookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The configuration from `lookup`'s variables, without its HTTP client.
fn config_from(lookup: Lookup) -> Result<aws_types::sdk_config::Builder, ConfigError> {
    let present = |variable: &str| lookup(variable).filter(|value| !value.is_empty());
    let required = |variable: &'static str| {
        present(variable).ok_or_else(|| ConfigError {
            variable,
            reason: "required (Lambda sets it for every function)".into(),
        })
    };
    let region = required(AWS_REGION)?;
    let credentials = Credentials::new(
        required(AWS_ACCESS_KEY_ID)?,
        required(AWS_SECRET_ACCESS_KEY)?,
        present(AWS_SESSION_TOKEN),
        None,
        "lambda-environment",
    );
    let endpoint_url = present(AWS_ENDPOINT_URL);
    let mut builder = SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region))
        .credentials_provider(SharedCredentialsProvider::new(credentials))
        .identity_cache(IdentityCache::lazy().build())
        .retry_config(RetryConfig::standard())
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .build(),
        )
        .time_source(SharedTimeSource::default())
        .service_config(EndpointOverrides(lookup));
    builder.set_sleep_impl(default_async_sleep());
    builder.set_endpoint_url(endpoint_url);
    Ok(builder)
}

/// Per-service settings from the environment, which the clients ask for their endpoint as they
/// are built: `AWS_ENDPOINT_URL_<SERVICE>` (the service's id in capitals, spaces as
/// underscores, e.g. `AWS_ENDPOINT_URL_DYNAMODB`), else `AWS_ENDPOINT_URL`, as the SDKs read
/// them. An empty variable counts as unset.
struct EndpointOverrides(Lookup);

impl LoadServiceConfig for EndpointOverrides {
    fn load_config(&self, key: ServiceConfigKey<'_>) -> Option<String> {
        let present = |variable: &str| (self.0)(variable).filter(|value| !value.is_empty());
        let service = key.service_id().to_uppercase().replace(' ', "_");
        present(&format!("{}_{service}", key.env())).or_else(|| present(key.env()))
    }
}

impl fmt::Debug for EndpointOverrides {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EndpointOverrides(environment)")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_credential_types::provider::ProvideCredentials;

    use super::*;

    fn lambda_variables() -> HashMap<&'static str, &'static str> {
        HashMap::from([
            (AWS_REGION, "eu-west-1"),
            (AWS_ACCESS_KEY_ID, "ASIAEXAMPLE"),
            (AWS_SECRET_ACCESS_KEY, "secret"),
            (AWS_SESSION_TOKEN, "token"),
        ])
    }

    fn config(variables: HashMap<&'static str, &'static str>) -> Result<SdkConfig, ConfigError> {
        config_from(Arc::new(move |name| {
            variables.get(name).map(|value| value.to_string())
        }))
        .map(aws_types::sdk_config::Builder::build)
    }

    /// What a client built from `config` asks for its endpoint (as the generated clients do).
    fn endpoint_of(config: &SdkConfig, service_id: &str) -> Option<String> {
        let key = ServiceConfigKey::builder()
            .service_id(service_id)
            .env(AWS_ENDPOINT_URL)
            .profile("endpoint_url")
            .build()
            .expect("key");
        config
            .service_config()
            .expect("endpoint overrides")
            .load_config(key)
            .or_else(|| config.endpoint_url().map(str::to_owned))
    }

    async fn credentials_of(config: &SdkConfig) -> Credentials {
        config
            .credentials_provider()
            .expect("credentials")
            .provide_credentials()
            .await
            .expect("credentials")
    }

    #[tokio::test]
    async fn the_region_and_the_roles_credentials_come_from_lambdas_variables() {
        let config = config(lambda_variables()).expect("configuration");
        assert_eq!(config.region().map(Region::as_ref), Some("eu-west-1"));
        let credentials = credentials_of(&config).await;
        assert_eq!(credentials.access_key_id(), "ASIAEXAMPLE");
        assert_eq!(credentials.secret_access_key(), "secret");
        assert_eq!(credentials.session_token(), Some("token"));
        assert_eq!(credentials.expiry(), None);
        assert!(config.sleep_impl().is_some(), "timeouts and retries sleep");
        assert!(config.identity_cache().is_some());
        assert_eq!(
            config.timeout_config().and_then(|t| t.connect_timeout()),
            Some(CONNECT_TIMEOUT)
        );
        assert_eq!(
            config.retry_config().map(|r| r.max_attempts()),
            Some(RetryConfig::standard().max_attempts())
        );
        assert_eq!(
            endpoint_of(&config, "DynamoDB"),
            None,
            "AWS's own endpoints"
        );
    }

    #[test]
    fn each_required_variable_missing_or_empty_is_named() {
        for variable in [AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY] {
            for value in [None, Some("")] {
                let mut variables = lambda_variables();
                match value {
                    None => variables.remove(variable),
                    Some(empty) => variables.insert(variable, empty),
                };
                let err = config(variables).expect_err("refused");
                assert_eq!(err.variable, variable);
                assert!(err.to_string().contains("required"), "{err}");
            }
        }
    }

    #[tokio::test]
    async fn the_session_token_is_optional() {
        let mut variables = lambda_variables();
        variables.remove(AWS_SESSION_TOKEN);
        let config = config(variables).expect("configuration");
        let credentials = credentials_of(&config).await;
        assert_eq!(credentials.session_token(), None);
    }

    #[test]
    fn a_services_own_endpoint_comes_before_the_general_one() {
        let mut variables = lambda_variables();
        variables.extend([
            (AWS_ENDPOINT_URL, "http://general"),
            ("AWS_ENDPOINT_URL_DYNAMODB", "http://dynamodb"),
            ("AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING", "http://spaced"),
            ("AWS_ENDPOINT_URL_SQS", ""),
        ]);
        let config = config(variables).expect("configuration");
        assert_eq!(config.endpoint_url(), Some("http://general"));
        assert_eq!(
            endpoint_of(&config, "DynamoDB").as_deref(),
            Some("http://dynamodb")
        );
        assert_eq!(
            endpoint_of(&config, "Application Auto Scaling").as_deref(),
            Some("http://spaced")
        );
        assert_eq!(
            endpoint_of(&config, "SQS").as_deref(),
            Some("http://general"),
            "an empty variable is unset"
        );
        assert_eq!(
            endpoint_of(&config, "Scheduler").as_deref(),
            Some("http://general")
        );
    }
}
