//! Output URLs as LiveKit Egress takes and reports them (livekit/egress `pkg/config/urls.go`,
//! livekit/protocol `utils/redact.go`), with Egress's own patterns: the fake LiveKit refuses
//! and reports by these, and the tests write LiveKit's webhooks with them.

/// Egress's pattern of an RTMP output URL (livekit/egress `pkg/config/urls.go`).
fn rtmp_pattern() -> regex::Regex {
    regex::Regex::new(r"^(rtmps?://)(.*/)(.*/)(\S*)( live=1)?$").unwrap()
}

/// The Twitch ingest Egress swaps for the one nearest to it (`twitchEndpoint`).
fn twitch_pattern() -> regex::Regex {
    regex::Regex::new(r"^rtmps?://.*\.contribute\.live-video\.net/app/(.*)( live=1)?$").unwrap()
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
