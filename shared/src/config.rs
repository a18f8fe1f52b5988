//! Configuration from the environment (decisions.md section 9), read and validated once at
//! start-up. The same variable names hold in Lambda, the local server and tests.

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Memory,
    DynamoDb,
}

#[derive(Clone, PartialEq, Eq)]
pub struct LiveKitConfig {
    /// As configured; `ws_url` is derived from it.
    pub url: String,
    pub api_key: String,
    pub api_secret: String,
    pub agent_name: String,
}

impl fmt::Debug for LiveKitConfig {
    // The secret never reaches a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveKitConfig")
            .field("url", &self.url)
            .field("api_key", &self.api_key)
            .field("api_secret", &"<redacted>")
            .field("agent_name", &self.agent_name)
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub store: StoreKind,
    pub table_name: Option<String>,
    pub delivery_queue_url: Option<String>,
    pub delivery_dlq_url: Option<String>,
    pub scheduler_group: Option<String>,
    pub scheduler_target_arn: Option<String>,
    pub scheduler_role_arn: Option<String>,
    /// `None` when `LIVEKIT_URL` is unset: live-key starts then fail with `502 launch_failed`.
    pub livekit: Option<LiveKitConfig>,
    pub preparing_timeout: Duration,
    pub webhook_retry_delays: Vec<Duration>,
    pub webhook_timeout: Duration,
    pub webhook_allow_private_urls: bool,
    pub public_base_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid configuration: {variable}: {reason}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub reason: String,
}

fn error(variable: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        variable,
        reason: reason.into(),
    }
}

pub const DEFAULT_AGENT_NAME: &str = "stream-host";
pub const DEFAULT_RETRY_DELAYS_SECS: &str = "30,300,1800,7200,28800";

impl Config {
    /// Reads the process environment. `default_store` is `memory` for the local server and
    /// `dynamodb` for Lambda.
    pub fn from_env(default_store: StoreKind) -> Result<Self, ConfigError> {
        Self::from_lookup(default_store, |name| std::env::var(name).ok())
    }

    /// Reads configuration through `lookup`; empty values count as unset.
    pub fn from_lookup(
        default_store: StoreKind,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());

        let store = match get("STORE").as_deref().map(str::trim) {
            None => default_store,
            Some("memory") => StoreKind::Memory,
            Some("dynamodb") => StoreKind::DynamoDb,
            Some(other) => {
                return Err(error(
                    "STORE",
                    format!("`{other}` is not one of `memory`, `dynamodb`"),
                ));
            }
        };
        let table_name = get("TABLE_NAME");
        if store == StoreKind::DynamoDb && table_name.is_none() {
            return Err(error("TABLE_NAME", "required when STORE=dynamodb"));
        }

        let livekit = match get("LIVEKIT_URL") {
            None => None,
            Some(url) => {
                let parsed = url::Url::parse(&url)
                    .map_err(|e| error("LIVEKIT_URL", format!("not a URL: {e}")))?;
                if !matches!(parsed.scheme(), "wss" | "ws" | "https" | "http") {
                    return Err(error(
                        "LIVEKIT_URL",
                        "scheme must be wss, ws, https or http",
                    ));
                }
                Some(LiveKitConfig {
                    url,
                    api_key: get("LIVEKIT_API_KEY")
                        .ok_or_else(|| error("LIVEKIT_API_KEY", "required with LIVEKIT_URL"))?,
                    api_secret: get("LIVEKIT_API_SECRET")
                        .ok_or_else(|| error("LIVEKIT_API_SECRET", "required with LIVEKIT_URL"))?,
                    agent_name: get("LIVEKIT_AGENT_NAME")
                        .unwrap_or_else(|| DEFAULT_AGENT_NAME.to_owned()),
                })
            }
        };

        let preparing_timeout = seconds(
            "PREPARING_TIMEOUT_SECS",
            get("PREPARING_TIMEOUT_SECS").as_deref().unwrap_or("300"),
        )?;
        let webhook_retry_delays = get("WEBHOOK_RETRY_DELAYS_SECS")
            .as_deref()
            .unwrap_or(DEFAULT_RETRY_DELAYS_SECS)
            .split(',')
            .map(|part| seconds("WEBHOOK_RETRY_DELAYS_SECS", part))
            .collect::<Result<Vec<_>, _>>()?;
        let webhook_timeout = seconds(
            "WEBHOOK_TIMEOUT_SECS",
            get("WEBHOOK_TIMEOUT_SECS").as_deref().unwrap_or("10"),
        )?;
        if webhook_timeout.is_zero() {
            return Err(error("WEBHOOK_TIMEOUT_SECS", "must be greater than 0"));
        }
        let webhook_allow_private_urls = match get("WEBHOOK_ALLOW_PRIVATE_URLS")
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("false" | "0" | "no") => false,
            Some("true" | "1" | "yes") => true,
            Some(other) => {
                return Err(error(
                    "WEBHOOK_ALLOW_PRIVATE_URLS",
                    format!("`{other}` is not true or false"),
                ));
            }
        };
        let public_base_url = match get("PUBLIC_BASE_URL") {
            None => None,
            Some(raw) => {
                url::Url::parse(&raw)
                    .map_err(|e| error("PUBLIC_BASE_URL", format!("not a URL: {e}")))?;
                Some(raw.trim_end_matches('/').to_owned())
            }
        };

        Ok(Config {
            store,
            table_name,
            delivery_queue_url: get("DELIVERY_QUEUE_URL"),
            delivery_dlq_url: get("DELIVERY_DLQ_URL"),
            scheduler_group: get("SCHEDULER_GROUP"),
            scheduler_target_arn: get("SCHEDULER_TARGET_ARN"),
            scheduler_role_arn: get("SCHEDULER_ROLE_ARN"),
            livekit,
            preparing_timeout,
            webhook_retry_delays,
            webhook_timeout,
            webhook_allow_private_urls,
            public_base_url,
        })
    }
}

/// A non-negative number of seconds; fractions are allowed so tests can shorten delays.
fn seconds(variable: &'static str, raw: &str) -> Result<Duration, ConfigError> {
    let value: f64 = raw.trim().parse().map_err(|_| {
        error(
            variable,
            format!("`{}` is not a number of seconds", raw.trim()),
        )
    })?;
    if !value.is_finite() || value < 0.0 {
        return Err(error(variable, "must be a non-negative number of seconds"));
    }
    Ok(Duration::from_secs_f64(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(StoreKind::Memory, |name| vars.get(name).cloned())
    }

    #[test]
    fn defaults() {
        let c = config(&[]).unwrap();
        assert_eq!(c.store, StoreKind::Memory);
        assert_eq!(c.preparing_timeout, Duration::from_secs(300));
        assert_eq!(
            c.webhook_retry_delays,
            [30, 300, 1800, 7200, 28800]
                .map(Duration::from_secs)
                .to_vec()
        );
        assert_eq!(c.webhook_timeout, Duration::from_secs(10));
        assert!(!c.webhook_allow_private_urls);
        assert!(c.livekit.is_none());
    }

    #[test]
    fn errors_name_the_variable() {
        assert_eq!(config(&[("STORE", "redis")]).unwrap_err().variable, "STORE");
        assert_eq!(
            config(&[("STORE", "dynamodb")]).unwrap_err().variable,
            "TABLE_NAME"
        );
        assert_eq!(
            config(&[("WEBHOOK_RETRY_DELAYS_SECS", "30,x")])
                .unwrap_err()
                .variable,
            "WEBHOOK_RETRY_DELAYS_SECS"
        );
        assert_eq!(
            config(&[("PREPARING_TIMEOUT_SECS", "-1")])
                .unwrap_err()
                .variable,
            "PREPARING_TIMEOUT_SECS"
        );
        assert_eq!(
            config(&[("LIVEKIT_URL", "wss://lk.example.com")])
                .unwrap_err()
                .variable,
            "LIVEKIT_API_KEY"
        );
        assert_eq!(
            config(&[("WEBHOOK_ALLOW_PRIVATE_URLS", "maybe")])
                .unwrap_err()
                .variable,
            "WEBHOOK_ALLOW_PRIVATE_URLS"
        );
    }

    #[test]
    fn secret_is_not_debug_printed() {
        let c = config(&[
            ("LIVEKIT_URL", "wss://lk.example.com"),
            ("LIVEKIT_API_KEY", "key"),
            ("LIVEKIT_API_SECRET", "very-secret"),
        ])
        .unwrap();
        assert_eq!(c.livekit.as_ref().unwrap().agent_name, "stream-host");
        assert!(!format!("{c:?}").contains("very-secret"));
    }
}
