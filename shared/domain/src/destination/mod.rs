//! Destinations (docs/destinations.md): the brand's channels a live stream is pushed to through
//! one room-composite egress, and their states. The egresses' own state and what a stream does
//! to its destinations are the stream's (`crate::stream`, which owns its parts; nothing here
//! knows the stream). Stream keys are write-only: they are kept apart from the stream
//! ([`StreamKeys`]), and a destination shows only the key's last four characters.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::clock::timestamp;
use crate::platform::PLATFORMS;

/// Most destinations a stream holds, `removed` ones not counted.
pub const MAX_DESTINATIONS: usize = 5;
pub const INGEST_URL_MAX_CHARS: usize = 512;
pub const STREAM_KEY_MAX_CHARS: usize = 256;
/// A destination's `error` when its egress could not be started within the retry time.
pub const EGRESS_UNAVAILABLE: &str = "egress_unavailable";
/// Times an egress that ended while its stream is live is started again.
pub const MAX_EGRESS_RESTARTS: u32 = 3;
/// The `error` of a destination failed by the test helper without one.
pub const SIMULATED_FAILURE: &str = "simulated failure";
/// Longest `error` the test helper takes.
pub const TEST_ERROR_MAX_CHARS: usize = 200;

/// `pending`: the stream is not live yet. `starting`: the egress was requested. `active`: LiveKit reports the output active. `failed`, `ended` and `removed` are final. States only move forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DestinationStatus {
    Pending,
    Starting,
    Active,
    Failed,
    Ended,
    Removed,
}

impl DestinationStatus {
    pub fn is_final(self) -> bool {
        matches!(self, Self::Failed | Self::Ended | Self::Removed)
    }

    /// States only move forward: to a higher rank, and never from a final one.
    fn rank(self) -> u8 {
        match self {
            Self::Pending => 0,
            Self::Starting => 1,
            Self::Active => 2,
            Self::Failed | Self::Ended | Self::Removed => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Starting => "starting",
            Self::Active => "active",
            Self::Failed => "failed",
            Self::Ended => "ended",
            Self::Removed => "removed",
        }
    }
}

/// A destination as stored on its stream and shown: never its stream key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Destination {
    /// `dst_` and 32 lowercase hex digits.
    #[schemars(pattern("^dst_[0-9a-f]{32}$"))]
    pub destination_id: String,
    #[schemars(extend("enum" = PLATFORMS))]
    pub platform: String,
    /// The RTMP ingest, as given.
    pub ingest_url: String,
    /// The stream key's last 4 characters (the whole key when shorter); the key itself is never shown again.
    pub stream_key_last4: String,
    pub status: DestinationStatus,
    /// Why it failed: LiveKit's error text, or `egress_unavailable` when the egress could not be started.
    pub error: Option<String>,
    /// When it became `active`.
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub started_at: Option<DateTime<Utc>>,
    /// When it became `failed`, `ended` or `removed`.
    #[serde(with = "timestamp::option")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub ended_at: Option<DateTime<Utc>>,
}

impl Destination {
    /// Moves to `to` at `at` when that is forward ([`DestinationStatus`]); `true` when it moved.
    pub fn advance(
        &mut self,
        to: DestinationStatus,
        at: DateTime<Utc>,
        error: Option<&str>,
    ) -> bool {
        if self.status.is_final() || to.rank() <= self.status.rank() {
            return false;
        }
        self.status = to;
        match to {
            DestinationStatus::Active => self.started_at = Some(at),
            DestinationStatus::Failed | DestinationStatus::Ended | DestinationStatus::Removed => {
                self.ended_at = Some(at);
            }
            DestinationStatus::Pending | DestinationStatus::Starting => {}
        }
        if to == DestinationStatus::Failed {
            self.error = error.map(str::to_owned);
        }
        true
    }

    /// In the egress (requested or airing).
    pub fn in_egress(&self) -> bool {
        matches!(
            self.status,
            DestinationStatus::Starting | DestinationStatus::Active
        )
    }
}

// The documented shapes of a destination in a request body, with the limits the checks
// enforce. Doc comments here are public text.
/// A destination to push the show to: an RTMP ingest and its stream key.
#[derive(Debug, Clone, JsonSchema)]
pub struct DestinationRequest {
    /// As the stream's own platform: one of the six.
    #[schemars(extend("enum" = PLATFORMS))]
    pub platform: String,
    /// An `rtmp://` or `rtmps://` URL with a public host and an application path after it (`rtmps://host/app`), no user name, password or fragment. One trailing `/` is dropped before the key is joined.
    #[schemars(length(max = INGEST_URL_MAX_CHARS), pattern("^rtmps?://"))]
    pub ingest_url: String,
    /// Write-only: printable ASCII without spaces. Never shown again; the destination shows `stream_key_last4`.
    #[schemars(length(min = 1, max = STREAM_KEY_MAX_CHARS), pattern("^[!-~]+$"))]
    pub stream_key: String,
}

/// Body of `POST /test_helpers/streams/{id}/destinations/{destination_id}/fail` (optional).
#[derive(Debug, Clone, JsonSchema)]
pub struct TestFailureRequest {
    /// The destination's `error`; `simulated failure` when absent.
    #[schemars(length(min = 1, max = TEST_ERROR_MAX_CHARS))]
    pub error: Option<String>,
}

/// A destination as the brand sends it, checked. Its key is never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct NewDestination {
    pub platform: String,
    pub ingest_url: String,
    pub stream_key: String,
}

impl std::fmt::Debug for NewDestination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewDestination")
            .field("platform", &self.platform)
            .field("ingest_url", &self.ingest_url)
            .field("stream_key", &"<redacted>")
            .finish()
    }
}

/// The address LiveKit pushes a destination to: `<ingest_url>/<stream_key>`, one trailing `/`
/// of the ingest URL dropped first (so `rtmp://host/app/` and `rtmp://host/app` push alike). As
/// secret as the key.
pub fn output_url(ingest_url: &str, stream_key: &str) -> String {
    let ingest_url = ingest_url.strip_suffix('/').unwrap_or(ingest_url);
    format!("{ingest_url}/{stream_key}")
}

/// The stream keys of a stream's destinations in the clear, by destination id: opened from
/// [`SealedStreamKeys`] only to talk to the egress, and never stored, printed or sent back.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StreamKeys(pub Vec<(String, String)>);

/// The stream keys as stored, each sealed (docs/security.md, "Secrets at rest"): kept on an
/// item of their own, and erased once the stream has ended and its egress is stopped.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealedStreamKeys(pub Vec<(String, crate::sealed::StoredSecret)>);

impl SealedStreamKeys {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for SealedStreamKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedStreamKeys(<{}>)", self.0.len())
    }
}

impl std::fmt::Debug for StreamKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StreamKeys(<{} redacted>)", self.0.len())
    }
}

impl StreamKeys {
    pub fn get(&self, destination_id: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(id, _)| id == destination_id)
            .map(|(_, key)| key.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The output URL of `destination`, when its key is known.
    pub fn output_url(&self, destination: &Destination) -> Option<String> {
        self.get(&destination.destination_id)
            .map(|key| output_url(&destination.ingest_url, key))
    }

    /// The name LiveKit reports `destination`'s output under, when its key is known.
    pub fn reported_name(&self, destination: &Destination) -> Option<ReportedName> {
        ReportedName::of_output(&self.output_url(destination)?)
    }

    /// `text` with every key and output URL of these destinations replaced, as sent and as
    /// LiveKit redacts them (`{abc...xyz}` still shows six of the key's characters), so that an
    /// error a provider wrote about an output can be shown, logged and stored.
    pub fn redact(&self, text: &str, destinations: &[Destination]) -> String {
        let mut text = text.to_owned();
        for destination in destinations {
            if let Some(url) = self.output_url(destination) {
                let ingest = output_url(&destination.ingest_url, "[redacted]");
                text = text.replace(&url, &ingest);
                if let Some(reported) = redacted_output_url(&url) {
                    text = text.replace(&reported, &ingest);
                }
            }
        }
        for (_, key) in &self.0 {
            // A key of a few characters would blank out ordinary words.
            if key.len() >= 6 {
                text = text.replace(key.as_str(), "[redacted]");
                text = text.replace(&redact_stream_key(key), "[redacted]");
            }
        }
        text
    }
}

/// New destinations for `stream` from checked input, `pending`, with their keys.
pub fn new_destinations(inputs: Vec<NewDestination>) -> (Vec<Destination>, StreamKeys) {
    let mut keys = Vec::with_capacity(inputs.len());
    let destinations = inputs
        .into_iter()
        .map(|input| {
            let destination_id = format!("dst_{}", Uuid::new_v4().simple());
            let last4 = last4(&input.stream_key);
            keys.push((destination_id.clone(), input.stream_key));
            Destination {
                destination_id,
                platform: input.platform,
                ingest_url: input.ingest_url,
                stream_key_last4: last4,
                status: DestinationStatus::Pending,
                error: None,
                started_at: None,
                ended_at: None,
            }
        })
        .collect();
    (destinations, StreamKeys(keys))
}

fn last4(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    chars[chars.len().saturating_sub(4)..].iter().collect()
}

mod checks;
mod reported;
pub use checks::{parse_destination, parse_destinations, parse_test_failure, reported_alike};
pub use reported::{
    ReportedName, SplitOutput, match_report, redact_stream_key, redacted_output_url, split_output,
};
