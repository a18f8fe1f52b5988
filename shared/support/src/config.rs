//! Configuration from the environment (docs/configuration.md, "Environment variables"), read and
//! validated once at start-up. The same variable names hold in Lambda, the local server and tests.

use std::time::Duration;

/// The streams function's timeout: `StreamsFunction`'s `Timeout` in template.yaml (a test
/// reads both). A start must answer inside it, or the client gets the gateway's bare 5xx.
pub const STREAMS_FUNCTION_TIMEOUT: Duration = Duration::from_secs(29);
/// What a live start needs besides its LiveKit calls (the key, the record, a failed launch's
/// transition, the answer), with room for a slow store.
pub const START_BESIDES_LAUNCH: Duration = Duration::from_secs(9);
/// `LAUNCH_TIMEOUT_SECS` when unset: what the streams function's timeout leaves the launch.
pub const DEFAULT_LAUNCH_TIMEOUT: Duration =
    STREAMS_FUNCTION_TIMEOUT.saturating_sub(START_BESIDES_LAUNCH);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// `STORE=embedded`: every backend inside the process (`hosting-embedded`).
    Embedded,
    DynamoDb,
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
    /// Where Scheduler puts timer invocations it could not make.
    pub scheduler_dlq_arn: Option<String>,
    /// The SQS queue a Scheduler timer is handed to for its last seconds (docs/lifecycle.md,
    /// "Timers on AWS").
    pub timer_queue_url: Option<String>,
    /// The KMS key that seals stored secrets on DynamoDB (docs/security.md, "Secrets at
    /// rest"); unset locally: the alias `alias/<TABLE_NAME>-secrets`.
    pub secrets_key_id: Option<String>,
    /// `None` when `LIVEKIT_URL` is unset: live-key starts then fail with `502 launch_failed`.
    pub livekit: Option<LiveKitConfig>,
    pub preparing_timeout: Duration,
    /// How long after its last dispatch a preparing stream whose agent has not joined is dispatched
    /// again, and how often during a reconnect window (docs/lifecycle.md, "The show goes on").
    pub dispatch_retry: Duration,
    /// How long a live stream whose agent dropped waits for an agent to join again.
    pub reconnect_window: Duration,
    /// `HOST_READBACK_SECS`: how long after a dispatch without a join the room is read back
    /// for its host (docs/livekit.md, "Read-backs").
    pub host_readback: Duration,
    /// `HOST_READBACK_INTERVAL_SECS`: how often, at most, a live stream's room is read back.
    pub host_readback_interval: Duration,
    /// `EGRESS_START_RETRY_SECS`: how long an egress start is retried before its destinations
    /// fail with `egress_unavailable`.
    pub egress_start_retry: Duration,
    /// `EGRESS_RECONCILE_SECS`: how long an egress may go unheard of (and a recording stay
    /// `processing`) before it is read back from LiveKit.
    pub egress_reconcile: Duration,
    /// Bound on a live start's room-provider calls, so the start answers inside the
    /// function's timeout.
    pub launch_timeout: Duration,
    /// How often the local server sweeps for streams past their deadline (in Lambda, the
    /// template's schedule).
    pub sweep_interval: Duration,
    /// Delays before each retry of relaying an event to the delivery queue; then it is set
    /// aside.
    pub outbox_retry_delays: Vec<Duration>,
    pub webhook_retry_delays: Vec<Duration>,
    pub webhook_timeout: Duration,
    /// A webhook failing without a success for this long is disabled at its next failure
    /// (docs/webhooks.md, "Endpoint health").
    pub webhook_disable_after: Duration,
    /// `SHOW_MIN_LEAD_SECS`: how soon a show may be scheduled (docs/shows.md).
    pub show_min_lead: Duration,
    pub webhook_allow_private_urls: bool,
    pub public_base_url: Option<String>,
    pub transport: TransportLimits,
    pub recordings: RecordingsConfig,
    /// `CLIP_MAX_SECONDS`: the longest clip (docs/clips.md).
    pub clip_max_seconds: u32,
    /// `CLIPS_QUEUE_URL`: the SQS queue of cuts; unset locally, cuts run in the process.
    pub clips_queue_url: Option<String>,
    /// `CLIP_LEASE_SECS`: how long a cut holds its clip before another may take it.
    pub clip_lease: Duration,
}

/// The longest `CLIP_MAX_SECONDS`: an hour.
pub const MAX_CLIP_MAX_SECONDS: u32 = 3600;

mod lambda;
pub use lambda::*;

mod livekit;
pub use livekit::*;

mod recordings;
pub use recordings::*;

mod transport;
pub use transport::*;

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
/// `EGRESS_LAYOUT` when unset.
pub const DEFAULT_EGRESS_LAYOUT: &str = "speaker";
pub const DEFAULT_RETRY_DELAYS_SECS: &str = "30,300,1800,7200,28800";
pub const DEFAULT_OUTBOX_RETRY_DELAYS_SECS: &str = "5,30,120,600,1800";
/// Five days of nothing but failures (docs/webhooks.md, "Endpoint health").
pub const DEFAULT_WEBHOOK_DISABLE_AFTER_SECS: &str = "432000";

impl Config {
    /// Reads the process environment. `default_store` is `embedded` for the local server and
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
            // `memory` is the setting's earlier name, still accepted.
            Some("embedded" | "memory") => StoreKind::Embedded,
            Some("dynamodb") => StoreKind::DynamoDb,
            Some(other) => {
                return Err(error(
                    "STORE",
                    format!("`{other}` is not one of `embedded`, `dynamodb`"),
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
                    api_secret: get("LIVEKIT_API_SECRET").map(ApiSecret::known).ok_or_else(
                        || {
                            error(
                                "LIVEKIT_API_SECRET",
                                "required with LIVEKIT_URL (in Lambda, through \
                                 LIVEKIT_API_SECRET_PARAMETER)",
                            )
                        },
                    )?,
                    agent_name: get("LIVEKIT_AGENT_NAME")
                        .unwrap_or_else(|| DEFAULT_AGENT_NAME.to_owned()),
                    egress_layout: get("EGRESS_LAYOUT")
                        .filter(|layout| !layout.trim().is_empty())
                        .unwrap_or_else(|| DEFAULT_EGRESS_LAYOUT.to_owned()),
                    webhook_key: webhook_key(&get)?,
                })
            }
        };

        // A variable of seconds, or its default.
        let secs = |variable: &'static str, default: &str| {
            seconds(variable, get(variable).as_deref().unwrap_or(default))
        };
        let preparing_timeout = secs("PREPARING_TIMEOUT_SECS", "300")?;
        let launch_timeout = seconds(
            "LAUNCH_TIMEOUT_SECS",
            &get("LAUNCH_TIMEOUT_SECS")
                .unwrap_or_else(|| DEFAULT_LAUNCH_TIMEOUT.as_secs().to_string()),
        )?;
        let sweep_interval = secs("SWEEP_INTERVAL_SECS", "60")?;
        let dispatch_retry = secs("DISPATCH_RETRY_SECS", "60")?;
        let reconnect_window = secs("RECONNECT_WINDOW_SECS", "60")?;
        let host_readback = secs("HOST_READBACK_SECS", "20")?;
        let host_readback_interval = secs("HOST_READBACK_INTERVAL_SECS", "120")?;
        let egress_start_retry = secs("EGRESS_START_RETRY_SECS", "120")?;
        let egress_reconcile = secs("EGRESS_RECONCILE_SECS", "60")?;
        for (variable, value) in [
            ("EGRESS_RECONCILE_SECS", egress_reconcile),
            ("LAUNCH_TIMEOUT_SECS", launch_timeout),
            ("SWEEP_INTERVAL_SECS", sweep_interval),
            ("DISPATCH_RETRY_SECS", dispatch_retry),
            ("RECONNECT_WINDOW_SECS", reconnect_window),
            ("HOST_READBACK_SECS", host_readback),
            ("HOST_READBACK_INTERVAL_SECS", host_readback_interval),
            ("EGRESS_START_RETRY_SECS", egress_start_retry),
        ] {
            if value.is_zero() {
                return Err(error(variable, "must be greater than 0"));
            }
        }
        let delays = |variable: &'static str, default: &str| {
            get(variable)
                .as_deref()
                .unwrap_or(default)
                .split(',')
                .map(|part| seconds(variable, part))
                .collect::<Result<Vec<_>, _>>()
        };
        let outbox_retry_delays =
            delays("OUTBOX_RETRY_DELAYS_SECS", DEFAULT_OUTBOX_RETRY_DELAYS_SECS)?;
        let webhook_retry_delays = delays("WEBHOOK_RETRY_DELAYS_SECS", DEFAULT_RETRY_DELAYS_SECS)?;
        let webhook_timeout = secs("WEBHOOK_TIMEOUT_SECS", "10")?;
        if webhook_timeout.is_zero() {
            return Err(error("WEBHOOK_TIMEOUT_SECS", "must be greater than 0"));
        }
        let webhook_disable_after = seconds(
            "WEBHOOK_DISABLE_AFTER_SECS",
            get("WEBHOOK_DISABLE_AFTER_SECS")
                .as_deref()
                .unwrap_or(DEFAULT_WEBHOOK_DISABLE_AFTER_SECS),
        )?;
        let show_min_lead = secs("SHOW_MIN_LEAD_SECS", "60")?;
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

        let positive = |variable: &'static str, default: &str| {
            let value = seconds(variable, get(variable).as_deref().unwrap_or(default))?;
            if value.is_zero() {
                return Err(error(variable, "must be greater than 0"));
            }
            Ok(value)
        };
        let max_connections = match get("MAX_CONNECTIONS") {
            None => 1024,
            Some(raw) => match raw.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(error(
                        "MAX_CONNECTIONS",
                        format!("`{}` is not a whole number above 0", raw.trim()),
                    ));
                }
            },
        };
        let transport = TransportLimits {
            head_timeout: positive("HEAD_TIMEOUT_SECS", "10")?,
            body_timeout: positive("BODY_TIMEOUT_SECS", "10")?,
            idle_timeout: positive("IDLE_TIMEOUT_SECS", "60")?,
            max_connections,
            shutdown_timeout: positive("SHUTDOWN_TIMEOUT_SECS", "10")?,
        };

        let recordings = RecordingsConfig::from_lookup(&get)?;
        let clip_max_seconds = match get("CLIP_MAX_SECONDS") {
            None => 180,
            Some(raw) => match raw.trim().parse::<u32>() {
                Ok(n) if (1..=MAX_CLIP_MAX_SECONDS).contains(&n) => n,
                _ => {
                    return Err(error(
                        "CLIP_MAX_SECONDS",
                        format!(
                            "`{}` is not a whole number of seconds from 1 to {MAX_CLIP_MAX_SECONDS}",
                            raw.trim()
                        ),
                    ));
                }
            },
        };

        let config = Config {
            store,
            table_name,
            delivery_queue_url: get("DELIVERY_QUEUE_URL"),
            delivery_dlq_url: get("DELIVERY_DLQ_URL"),
            scheduler_group: get("SCHEDULER_GROUP"),
            scheduler_target_arn: get("SCHEDULER_TARGET_ARN"),
            scheduler_role_arn: get("SCHEDULER_ROLE_ARN"),
            scheduler_dlq_arn: get("SCHEDULER_DLQ_ARN"),
            timer_queue_url: get("TIMER_QUEUE_URL"),
            secrets_key_id: get("SECRETS_KEY_ID"),
            livekit,
            preparing_timeout,
            dispatch_retry,
            host_readback,
            host_readback_interval,
            reconnect_window,
            egress_start_retry,
            egress_reconcile,
            launch_timeout,
            sweep_interval,
            outbox_retry_delays,
            webhook_retry_delays,
            webhook_timeout,
            webhook_disable_after,
            show_min_lead,
            webhook_allow_private_urls,
            public_base_url,
            transport,
            recordings,
            clip_max_seconds,
            clips_queue_url: get("CLIPS_QUEUE_URL"),
            clip_lease: positive("CLIP_LEASE_SECS", "300")?,
        };
        Ok(config)
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

    /// The configuration of `vars` alone (the submodules' tests use it too).
    pub(super) fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(StoreKind::Embedded, |name| vars.get(name).cloned())
    }

    /// The streams function's `Timeout` in template.yaml, and whether the function sets
    /// `LAUNCH_TIMEOUT_SECS`.
    fn streams_function_in_template() -> (Duration, bool) {
        let template = include_str!("../../../template.yaml");
        let function = template
            .split("\n  StreamsFunction:\n")
            .nth(1)
            .expect("StreamsFunction in template.yaml");
        // Up to the next resource (a line indented by two spaces).
        let end = function
            .match_indices("\n  ")
            .find(|(at, _)| function[at + 3..].starts_with(|c: char| c.is_ascii_alphabetic()))
            .map_or(function.len(), |(at, _)| at);
        let function = &function[..end];
        let timeout = function
            .lines()
            .find_map(|line| line.strip_prefix("      Timeout: "))
            .expect("StreamsFunction's Timeout")
            .trim()
            .parse()
            .expect("a number of seconds");
        (
            Duration::from_secs(timeout),
            function.contains("LAUNCH_TIMEOUT_SECS"),
        )
    }

    #[test]
    fn the_launch_bound_is_what_the_streams_function_timeout_leaves() {
        let (timeout, overridden) = streams_function_in_template();
        assert_eq!(
            timeout, STREAMS_FUNCTION_TIMEOUT,
            "template.yaml and config.rs"
        );
        assert!(!overridden, "the template keeps the derived launch bound");
        let launch = config(&[]).unwrap().launch_timeout;
        assert_eq!(launch, DEFAULT_LAUNCH_TIMEOUT);
        assert_eq!(launch + START_BESIDES_LAUNCH, timeout);
        // A launch that hangs is answered `502` well inside the function's timeout.
        assert!(launch <= Duration::from_secs(20), "{launch:?}");
    }

    #[test]
    fn defaults() {
        let c = config(&[]).unwrap();
        assert_eq!(c.store, StoreKind::Embedded);
        assert_eq!(c.preparing_timeout, Duration::from_secs(300));
        assert_eq!(
            c.webhook_retry_delays,
            [30, 300, 1800, 7200, 28800]
                .map(Duration::from_secs)
                .to_vec()
        );
        assert_eq!(c.webhook_timeout, Duration::from_secs(10));
        assert_eq!(c.webhook_disable_after, Duration::from_secs(432_000));
        assert_eq!(
            c.transport,
            TransportLimits {
                head_timeout: Duration::from_secs(10),
                body_timeout: Duration::from_secs(10),
                idle_timeout: Duration::from_secs(60),
                max_connections: 1024,
                shutdown_timeout: Duration::from_secs(10),
            }
        );
        assert_eq!(
            c.transport.body_deadline(1024 * 1024),
            Duration::from_secs(26)
        );
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
