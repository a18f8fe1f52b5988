//! One delivery attempt over HTTP, safe against server-side request forgery: the URL rules are
//! checked again at delivery time, and the client's resolver hands the connector only
//! addresses that pass them, so a name that resolves (or rebinds) to a private address is
//! never connected to.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};

use super::signing;
use hosting_domain::Webhook;
use hosting_domain::ports::Delivery;
use hosting_domain::webhook_url;

pub const USER_AGENT: &str = concat!("LiveStreamHostingAPI-Webhooks/", env!("CARGO_PKG_VERSION"));

/// Name resolution, replaceable in tests.
#[async_trait]
pub trait Dns: Send + Sync {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver.
pub struct SystemDns;

#[async_trait]
impl Dns for SystemDns {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok(tokio::net::lookup_host((host, 0))
            .await?
            .map(|addr| addr.ip())
            .collect())
    }
}

/// Resolves through `dns`, then drops every address that is not public.
struct GuardedResolver {
    dns: Arc<dyn Dns>,
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let dns = self.dns.clone();
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> = dns
                .lookup(&host)
                .await
                .map_err(|_| ResolveRefusal::NotResolved)?
                .into_iter()
                .filter(|ip| allow_private || webhook_url::is_public_ip(*ip))
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            if addrs.is_empty() {
                return Err(ResolveRefusal::NoPublicAddress.into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Why the resolver gave the client no address. Neither names the host: the failure class is
/// all a delivery's error says.
#[derive(Debug, thiserror::Error)]
enum ResolveRefusal {
    #[error("name not resolved")]
    NotResolved,
    #[error("refused address")]
    NoPublicAddress,
}

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Any 2xx within the timeout.
    Delivered { status: u16 },
    /// `410 Gone`: the receiver wants no more deliveries.
    Gone,
    /// Anything else: `status` when the receiver answered (`None` for a timeout, a refused
    /// address or a connection error); `retry_after` when a 429 or 503 asked for a delay.
    Failed {
        reason: String,
        status: Option<u16>,
        retry_after: Option<Duration>,
    },
    /// Nothing was sent: the webhook is disabled, and the delivery ends failed.
    NotAttempted,
}

/// What signs one delivery: the webhook's secrets and private keys that sign at its moment,
/// opened for the attempt alone (docs/security.md, "Secrets at rest"), current first.
pub struct Signing {
    pub secrets: Vec<String>,
    pub keys: Vec<String>,
}

impl std::fmt::Debug for Signing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Signing(<{} secrets, {} keys redacted>)",
            self.secrets.len(),
            self.keys.len()
        )
    }
}

/// The log's `error` of a delivery that ended failed, unattempted, on a disabled webhook.
pub const NOT_ATTEMPTED: &str = "webhook disabled: not attempted";

impl AttemptOutcome {
    /// The status the receiver answered with, if it answered.
    pub fn response_status(&self) -> Option<u16> {
        match self {
            AttemptOutcome::Delivered { status } => Some(*status),
            AttemptOutcome::Gone => Some(410),
            AttemptOutcome::Failed { status, .. } => *status,
            AttemptOutcome::NotAttempted => None,
        }
    }

    /// The log's `error`: why a failure had no HTTP answer, or that a redirect was refused;
    /// `None` for any other answer.
    pub fn error(&self) -> Option<String> {
        match self {
            AttemptOutcome::Failed {
                reason,
                status: None,
                ..
            } => Some(reason.clone()),
            AttemptOutcome::Failed {
                status: Some(status),
                ..
            } if (300..400).contains(status) => Some("redirect refused".into()),
            AttemptOutcome::NotAttempted => Some(NOT_ATTEMPTED.into()),
            _ => None,
        }
    }
}

/// Sends deliveries. Built once per process; cheap to clone.
#[derive(Clone)]
pub struct Deliverer {
    client: reqwest::Client,
    allow_private: bool,
}

impl Deliverer {
    pub fn new(timeout: Duration, allow_private: bool) -> Result<Self, reqwest::Error> {
        Self::with_dns(timeout, allow_private, Arc::new(SystemDns))
    }

    pub fn with_dns(
        timeout: Duration,
        allow_private: bool,
        dns: Arc<dyn Dns>,
    ) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would connect on our behalf, past the resolver's checks.
            .no_proxy()
            .user_agent(USER_AGENT)
            .dns_resolver(Arc::new(GuardedResolver { dns, allow_private }))
            .build()?;
        Ok(Self {
            client,
            allow_private,
        })
    }

    /// One attempt of `delivery` to `webhook`, signed with `signing` as of `now`.
    pub async fn attempt(
        &self,
        webhook: &Webhook,
        signing: &Signing,
        delivery: &Delivery,
        now: DateTime<Utc>,
    ) -> AttemptOutcome {
        let failed = |reason: String| AttemptOutcome::Failed {
            reason,
            status: None,
            retry_after: None,
        };
        // The URL passed these rules at registration; check again, literals included, since
        // the resolver is not consulted for IP-literal hosts.
        let url = match webhook_url::validate(&webhook.url, self.allow_private) {
            Ok(url) => url,
            Err(rejection) => return failed(format!("refused URL: {rejection}")),
        };
        if let Some(url::Host::Ipv4(ip)) = url.host()
            && !self.allow_private
            && !webhook_url::is_public_ip(IpAddr::V4(ip))
        {
            return failed("refused address".into());
        }

        let timestamp = now.timestamp();
        let secrets: Vec<&str> = signing.secrets.iter().map(String::as_str).collect();
        let keys: Vec<&str> = signing.keys.iter().map(String::as_str).collect();
        let mut headers = HeaderMap::new();
        let mut put = |name: &'static str, value: String| {
            if let Ok(value) = value.parse() {
                headers.insert(name, value);
            }
        };
        put(CONTENT_TYPE.as_str(), "application/json".into());
        put("x-service-event-id", delivery.event_id.clone());
        put("x-service-event-type", delivery.event_type.as_str().into());
        put(
            "x-service-signature",
            signing::service_signature(&secrets, timestamp, &delivery.body),
        );
        put("webhook-id", delivery.event_id.clone());
        put("webhook-timestamp", timestamp.to_string());
        let signatures = [
            signing::standard_signature(&secrets, &delivery.event_id, timestamp, &delivery.body),
            signing::asymmetric_signature(&keys, &delivery.event_id, timestamp, &delivery.body),
        ];
        let signatures: Vec<String> = signatures.into_iter().flatten().collect();
        if !signatures.is_empty() {
            put("webhook-signature", signatures.join(" "));
        }

        let response = match self
            .client
            .post(url)
            .headers(headers)
            .body(delivery.body.clone())
            .send()
            .await
        {
            Ok(response) => response,
            Err(err) => return failed(failure_class(&err).to_owned()),
        };
        let status = response.status();
        if status.is_success() {
            return AttemptOutcome::Delivered {
                status: status.as_u16(),
            };
        }
        if status == reqwest::StatusCode::GONE {
            return AttemptOutcome::Gone;
        }
        let retry_after = matches!(status.as_u16(), 429 | 503)
            .then(|| response.headers().get(RETRY_AFTER))
            .flatten()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        AttemptOutcome::Failed {
            reason: format!("receiver answered {status}"),
            status: Some(status.as_u16()),
            retry_after,
        }
    }
}

/// The class of a failure with no HTTP answer: what the delivery log, the logs and a dead
/// letter say of it (docs/webhooks.md, "Delivery log"). Never the error's own text, which
/// carries the URL with its query, and the resolver's and the TLS library's details.
fn failure_class(err: &reqwest::Error) -> &'static str {
    use std::io::ErrorKind;
    if err.is_timeout() {
        return "timed out";
    }
    let mut closed_early = false;
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        if let Some(refusal) = cause.downcast_ref::<ResolveRefusal>() {
            return match refusal {
                ResolveRefusal::NotResolved => "name not resolved",
                ResolveRefusal::NoPublicAddress => "refused address",
            };
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            // I/O errors nest (the TLS library's inside the connector's): the innermost says
            // what happened.
            let mut io = io;
            while let Some(nested) = io
                .get_ref()
                .and_then(|e| e.downcast_ref::<std::io::Error>())
            {
                io = nested;
            }
            if io.get_ref().is_some_and(|e| e.is::<rustls::Error>()) {
                return "TLS failure";
            }
            match io.kind() {
                ErrorKind::TimedOut => return "timed out",
                ErrorKind::ConnectionRefused => return "connection refused",
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
                | ErrorKind::UnexpectedEof => return "connection reset",
                _ => {}
            }
        }
        // hyper's "connection closed before message completed": the receiver hung up.
        closed_early |= cause.to_string().contains("connection closed");
        source = cause.source();
    }
    if closed_early {
        "connection reset"
    } else if err.is_connect() {
        "connection failed"
    } else if err.is_request() || err.is_body() || err.is_decode() {
        "invalid response"
    } else {
        "request failed"
    }
}
