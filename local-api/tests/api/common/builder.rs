//! How a test configures its app: typed steps for what the suite sets often, `with_var` for
//! the rest. Each step sets the environment variable the product reads (docs/configuration.md),
//! so the app is configured exactly as a deployment would configure it.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

use hosting_app::delivery::{Dns, SystemDns};

use super::TestApp;
use super::fake_livekit::{API_KEY, API_SECRET, FakeLiveKit};

/// Delays of five webhook retries that take a fraction of a second instead of minutes.
const FAST_RETRY_DELAYS_SECS: [f64; 5] = [0.05; 5];

/// An app to start: `TestApp::builder().with_livekit(&fake).await`.
#[derive(Default)]
#[must_use = "await the builder to start the app"]
pub struct TestAppBuilder {
    pub(super) vars: Vec<(String, String)>,
    pub(super) livekit: Option<FakeLiveKit>,
    /// `Some`: on the system clock with the background loops running.
    pub(super) delivery_dns: Option<Arc<dyn Dns>>,
    /// On DynamoDB: the partition keys a live stream's viewer shards are spread over, when
    /// not the product's (a test's switch).
    pub(super) viewer_partitions: Option<u32>,
}

fn secs_list(delays: &[f64]) -> String {
    delays
        .iter()
        .map(f64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

impl TestAppBuilder {
    /// Sets a configuration variable that no typed step covers; a later value wins.
    pub fn with_var(mut self, name: &str, value: impl Into<String>) -> Self {
        self.vars.retain(|(k, _)| k != name);
        self.vars.push((name.to_owned(), value.into()));
        self
    }

    /// Live keys served by `livekit`; the app keeps a handle on it, so that dropping the app
    /// can check that no finished stream's room is left in it.
    /// On DynamoDB, a live stream's viewer shards under `partitions` partition keys.
    pub fn with_viewer_partitions(mut self, partitions: u32) -> Self {
        self.viewer_partitions = Some(partitions);
        self
    }

    pub fn with_livekit(self, livekit: &FakeLiveKit) -> Self {
        let mut builder = self.with_livekit_at(&livekit.url);
        builder.livekit = Some(livekit.clone());
        builder
    }

    /// Live keys served by a LiveKit at `url` with the fake's credentials (one that is not
    /// there, say).
    pub fn with_livekit_at(self, url: &str) -> Self {
        self.with_var("LIVEKIT_URL", url)
            .with_var("LIVEKIT_API_KEY", API_KEY)
            .with_var("LIVEKIT_API_SECRET", API_SECRET)
    }

    /// The agent name dispatched to each room.
    pub fn with_agent_name(self, name: &str) -> Self {
        self.with_var("LIVEKIT_AGENT_NAME", name)
    }

    /// How long a live start waits for the room provider.
    pub fn with_launch_timeout_secs(self, secs: f64) -> Self {
        self.with_var("LAUNCH_TIMEOUT_SECS", secs.to_string())
    }

    /// How long a stream may stay `preparing` before its host joins.
    pub fn with_preparing_timeout_secs(self, secs: u64) -> Self {
        self.with_var("PREPARING_TIMEOUT_SECS", secs.to_string())
    }

    /// How long after a host left its agent is dispatched again.
    pub fn with_dispatch_retry_secs(self, secs: u64) -> Self {
        self.with_var("DISPATCH_RETRY_SECS", secs.to_string())
    }

    /// Lets webhooks point at private addresses, such as the loopback receivers.
    pub fn with_private_webhook_urls(self) -> Self {
        self.with_var("WEBHOOK_ALLOW_PRIVATE_URLS", "true")
    }

    /// Five webhook retries in a fraction of a second instead of minutes.
    pub fn with_fast_retries(self) -> Self {
        self.with_webhook_retry_delays_secs(&FAST_RETRY_DELAYS_SECS)
    }

    /// The delay before each webhook retry, in seconds (their count is the retries').
    pub fn with_webhook_retry_delays_secs(self, delays: &[f64]) -> Self {
        self.with_var("WEBHOOK_RETRY_DELAYS_SECS", secs_list(delays))
    }

    /// How long one delivery attempt may take.
    pub fn with_webhook_timeout_secs(self, secs: u64) -> Self {
        self.with_var("WEBHOOK_TIMEOUT_SECS", secs.to_string())
    }

    /// The delay before each retry to relay an outbox event, in seconds.
    pub fn with_outbox_retry_delays_secs(self, delays: &[f64]) -> Self {
        self.with_var("OUTBOX_RETRY_DELAYS_SECS", secs_list(delays))
    }

    /// On the system clock with the timers, outbox relay and delivery worker running, as the
    /// local server runs: for tests with real webhook receivers.
    pub fn with_delivery(self) -> Self {
        self.with_delivery_dns(Arc::new(SystemDns))
    }

    /// [`Self::with_delivery`], resolving webhook hosts with `dns`.
    pub fn with_delivery_dns(mut self, dns: Arc<dyn Dns>) -> Self {
        self.delivery_dns = Some(dns);
        self
    }
}

impl IntoFuture for TestAppBuilder {
    type Output = TestApp;
    type IntoFuture = Pin<Box<dyn Future<Output = TestApp> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(TestApp::build(self))
    }
}
