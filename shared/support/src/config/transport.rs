//! The local server's limits on its clients.

use std::time::Duration;

/// The local server's limits on its clients (docs/configuration.md, "Local server"). The
/// functions never read them: in Lambda, API Gateway holds the connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportLimits {
    /// A request head must arrive whole within this, from its first byte.
    pub head_timeout: Duration,
    /// A body must arrive within this, plus a second for every [`BODY_BYTES_PER_SECOND`] it
    /// declares beyond them.
    pub body_timeout: Duration,
    /// A kept-alive connection with no request on it is closed after this.
    pub idle_timeout: Duration,
    /// Connections served at once; more wait to be accepted.
    pub max_connections: usize,
    /// After SIGINT or SIGTERM, how long requests in progress may take before their
    /// connections are closed.
    pub shutdown_timeout: Duration,
}

/// The slowest a body may arrive, once past its floor ([`TransportLimits::body_timeout`]).
pub const BODY_BYTES_PER_SECOND: u64 = 64 * 1024;

impl TransportLimits {
    /// How long a body of `declared` bytes may take to arrive.
    pub fn body_deadline(&self, declared: u64) -> Duration {
        self.body_timeout + Duration::from_secs(declared / BODY_BYTES_PER_SECOND)
    }
}
