//! Egresses as the fake LiveKit runs them: what it keeps of each and reports with `ListEgress`,
//! and output URLs as LiveKit Egress takes and reports them (livekit/egress
//! `pkg/config/urls.go`, livekit/protocol `utils/redact.go`), with Egress's own patterns: the
//! fake refuses and reports by these, and the tests write LiveKit's webhooks with them.

use livekit_protocol as proto;

/// An egress the fake started: its room, its outputs (as it pushes to them: a Twitch ingest
/// swapped), whether it was started with stream outputs, whether it still runs, and how it
/// ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeEgress {
    pub room: String,
    pub urls: Vec<String>,
    pub streaming: bool,
    /// Started with a file output.
    pub records: bool,
    pub running: bool,
    pub ended: Option<EgressEnd>,
    /// Outputs that failed, with their error.
    pub failed_outputs: Vec<(String, String)>,
}

/// How an egress ended: its status, its error, and the file it wrote (size in bytes, duration
/// in nanoseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressEnd {
    pub status: proto::EgressStatus,
    pub error: String,
    pub file: Option<(i64, i64)>,
}

impl Default for EgressEnd {
    fn default() -> Self {
        Self {
            status: proto::EgressStatus::EgressComplete,
            error: String::new(),
            file: None,
        }
    }
}

/// What a stopped egress writes: as on completion, its file when it had one (a 1 kB, 1 s MP4).
pub fn stopped_end(records: bool) -> EgressEnd {
    EgressEnd {
        file: records.then_some((1_000, 1_000_000_000)),
        ..EgressEnd::default()
    }
}

impl FakeEgress {
    /// A running egress of `room` with no outputs yet.
    pub fn running_in(room: &str) -> Self {
        Self {
            room: room.to_owned(),
            urls: Vec::new(),
            streaming: false,
            records: false,
            running: true,
            ended: None,
            failed_outputs: Vec::new(),
        }
    }

    /// The egress as `ListEgress` reports it: each output by its redacted URL, `ACTIVE` while
    /// it runs, `FAILED` when it failed, `FINISHED` once the egress ended.
    pub fn info(&self, id: &str) -> proto::EgressInfo {
        use proto::stream_info::Status;
        let end = self.ended.clone().unwrap_or_default();
        proto::EgressInfo {
            egress_id: id.to_owned(),
            room_name: self.room.clone(),
            status: if self.running {
                proto::EgressStatus::EgressActive
            } else {
                end.status
            } as i32,
            error: if self.running {
                String::new()
            } else {
                end.error.clone()
            },
            stream_results: self
                .urls
                .iter()
                .map(|url| {
                    let failed = self.failed_outputs.iter().find(|(u, _)| u == url);
                    // An egress that failed fails every output; one that ended otherwise
                    // finishes them (livekit/egress `pkg/pipeline/controller.go`).
                    let (status, error) = match failed {
                        Some((_, error)) => (Status::Failed, error.clone()),
                        None if self.running => (Status::Active, String::new()),
                        None if end.status == proto::EgressStatus::EgressFailed => {
                            (Status::Failed, end.error.clone())
                        }
                        None => (Status::Finished, String::new()),
                    };
                    proto::StreamInfo {
                        url: egress_reported_url(url),
                        status: status as i32,
                        error,
                        ..Default::default()
                    }
                })
                .collect(),
            file_results: end
                .file
                .filter(|_| !self.running)
                .map(|(size, duration)| proto::FileInfo {
                    filename: format!("{id}.mp4"),
                    size,
                    duration,
                    ..Default::default()
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }
    }
}

/// Egress's pattern of an RTMP output URL (livekit/egress `pkg/config/urls.go`).
fn rtmp_pattern() -> &'static regex::Regex {
    static PATTERN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(rtmps?://)(.*/)(.*/)(\S*)( live=1)?$").unwrap()
    });
    &PATTERN
}

/// The Twitch ingest Egress swaps for the one nearest to it (`twitchEndpoint`).
fn twitch_pattern() -> &'static regex::Regex {
    static PATTERN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^rtmps?://.*\.contribute\.live-video\.net/app/(.*)( live=1)?$").unwrap()
    });
    &PATTERN
}

/// The host this fake's Twitch lookup answers, as `ingest.twitch.tv` would for its region.
pub const NEAREST_TWITCH_INGEST: &str = "rtmps://sfo.contribute.live-video.net/app";

/// livekit/protocol's `RedactIdentifier`.
fn redact_identifier(identifier: &str) -> String {
    let kept = (1..=3)
        .rev()
        .find(|i| identifier.len() >= i * 3)
        .unwrap_or(0);
    format!(
        "{{{}...{}}}",
        &identifier[..kept],
        &identifier[identifier.len() - kept..]
    )
}

/// The URL Egress pushes to for `url`, or its `invalid url` refusal.
pub fn egress_parsed_url(url: &str) -> Result<String, String> {
    let parsed = match twitch_pattern().captures(url) {
        Some(twitch) => format!("{NEAREST_TWITCH_INGEST}/{}", &twitch[1]),
        None => url.to_owned(),
    };
    if rtmp_pattern().is_match(&parsed) {
        Ok(parsed)
    } else {
        Err(format!(
            "invalid url {url}: rtmp urls must be of format \
             rtmp(s)://{{host}}(/{{path}})/{{app}}/{{stream_key}}( live=1)"
        ))
    }
}

/// `url` as Egress reports it: pushed where Egress pushes it, its key redacted
/// (livekit/protocol `RedactStreamKey`); a URL Egress cannot split, as given.
pub fn egress_reported_url(url: &str) -> String {
    let parsed = egress_parsed_url(url).unwrap_or_else(|_| url.to_owned());
    match rtmp_pattern().captures(&parsed) {
        Some(parts) => format!(
            "{}{}{}{}{}",
            &parts[1],
            &parts[2],
            &parts[3],
            redact_identifier(&parts[4]),
            parts.get(5).map_or("", |m| m.as_str())
        ),
        None => parsed,
    }
}

impl super::fake_livekit::FakeLiveKit {
    /// The id of an egress LiveKit runs for `room`, if any.
    pub fn running_egress(&self, room: &str) -> Option<String> {
        self.egresses()
            .into_iter()
            .find(|(_, e)| e.room == room && e.running)
            .map(|(id, _)| id)
    }
}
