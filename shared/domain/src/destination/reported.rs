//! How LiveKit Egress names an output when it reports on it (docs/destinations.md, "What LiveKit
//! reports"): never by the URL it was given. Egress splits an RTMP URL as
//! `rtmp(s)://{host}(/{path})/{app}/{stream_key}` and reports it with the key redacted to its
//! first and last few characters; for Twitch it may push to (and report) another Twitch host.
//! So a report is matched to a destination by the application path and the redacted key, and by
//! the host only where two destinations share both; two destinations that LiveKit would report
//! alike are refused when they are added.

/// An output URL split as Egress splits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitOutput<'a> {
    /// `rtmp://` or `rtmps://`.
    pub scheme: &'a str,
    /// The host, with its port when given.
    pub host: &'a str,
    /// Everything between the host and the key: `/{path}/{app}/`, both slashes included.
    pub path: &'a str,
    /// The stream key, as sent or as redacted in a report.
    pub key: &'a str,
    /// Egress's optional ` live=1` suffix.
    pub suffix: &'a str,
}

/// Splits `url` as Egress does (its pattern `^(rtmps?://)(.*/)(.*/)(\S*)( live=1)?$`: the key is
/// what follows the last `/`, the application what lies between the two last ones); `None` for
/// a URL Egress refuses with `invalid url`.
pub fn split_output(url: &str) -> Option<SplitOutput<'_>> {
    let (scheme, rest) = ["rtmps://", "rtmp://"]
        .into_iter()
        .find_map(|scheme| Some((scheme, url.strip_prefix(scheme)?)))?;
    if rest.contains('\n') {
        return None;
    }
    let (rest, suffix) = match rest.strip_suffix(" live=1") {
        Some(stripped) => (stripped, &rest[stripped.len()..]),
        None => (rest, ""),
    };
    let last = rest.rfind('/')?;
    let key = &rest[last + 1..];
    if key.chars().any(char::is_whitespace) {
        return None;
    }
    // The application needs a `/` of its own before it; the host is what precedes the first.
    rest[..last].rfind('/')?;
    let host_end = rest.find('/')?;
    Some(SplitOutput {
        scheme,
        host: &rest[..host_end],
        path: &rest[host_end..=last],
        key,
        suffix,
    })
}

/// A stream key as Egress writes it in reports and errors: `{`, its first and last 3 characters
/// (2 for keys of 6 to 8 characters, 1 for 3 to 5, none below) around `...`, `}`.
pub fn redact_stream_key(key: &str) -> String {
    let kept = (1..=3usize).rev().find(|n| key.len() >= n * 3).unwrap_or(0);
    // Keys are printable ASCII (the checks), so byte offsets are character offsets.
    let (prefix, suffix) = match (key.get(..kept), key.get(key.len() - kept..)) {
        (Some(prefix), Some(suffix)) => (prefix, suffix),
        _ => ("", ""),
    };
    format!("{{{prefix}...{suffix}}}")
}

/// `url` as Egress reports it, its key redacted; `None` when Egress cannot split it.
pub fn redacted_output_url(url: &str) -> Option<String> {
    let split = split_output(url)?;
    Some(format!(
        "{}{}{}{}{}",
        split.scheme,
        split.host,
        split.path,
        redact_stream_key(split.key),
        split.suffix
    ))
}

/// What a report of an output is matched on: the application path and the redacted key, then
/// the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedName {
    pub host: String,
    pub path: String,
    pub redacted_key: String,
}

impl ReportedName {
    /// The name under which Egress reports the output URL `url` it was given.
    pub fn of_output(url: &str) -> Option<Self> {
        let split = split_output(url)?;
        Some(Self {
            host: split.host.to_ascii_lowercase(),
            path: split.path.to_owned(),
            redacted_key: redact_stream_key(split.key),
        })
    }

    /// The name in a URL Egress reported (its key redacted already).
    pub fn of_report(url: &str) -> Option<Self> {
        let split = split_output(url)?;
        Some(Self {
            host: split.host.to_ascii_lowercase(),
            path: split.path.to_owned(),
            redacted_key: split.key.to_owned(),
        })
    }

    /// Reported alike: LiveKit would give both the same URL (the scheme aside, which Egress
    /// may change for Twitch).
    pub fn alike(&self, other: &Self) -> bool {
        self == other
    }

    /// Whether a report named `reported` may be of this output, the host aside.
    fn path_and_key_match(&self, reported: &Self) -> bool {
        self.path == reported.path && self.redacted_key == reported.redacted_key
    }
}

/// Of `outputs` (each a destination's index and its output's name), the one a report of
/// `reported_url` is about: those whose path and redacted key match, narrowed by the host when
/// more than one does (Egress may report Twitch under another host). `None` when none matches,
/// or when the host leaves more than one.
pub fn match_report(reported_url: &str, outputs: &[(usize, ReportedName)]) -> Option<usize> {
    let reported = ReportedName::of_report(reported_url)?;
    let candidates: Vec<&(usize, ReportedName)> = outputs
        .iter()
        .filter(|(_, name)| name.path_and_key_match(&reported))
        .collect();
    match candidates.as_slice() {
        [] => None,
        [(index, _)] => Some(*index),
        several => {
            let same_host: Vec<usize> = several
                .iter()
                .filter(|(_, name)| name.host == reported.host)
                .map(|(index, _)| *index)
                .collect();
            match same_host.as_slice() {
                [index] => Some(*index),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_redacted_as_egress_redacts_them() {
        for (key, redacted) in [
            ("abcdefghijklmnop", "{abc...nop}"),
            ("abcdefghi", "{abc...ghi}"),
            ("abcdefgh", "{ab...gh}"),
            ("abcdef", "{ab...ef}"),
            ("abcde", "{a...e}"),
            ("abc", "{a...c}"),
            ("ab", "{...}"),
            ("", "{...}"),
        ] {
            assert_eq!(redact_stream_key(key), redacted, "{key}");
        }
    }

    #[test]
    fn urls_split_as_egress_splits_them() {
        assert_eq!(
            redacted_output_url("rtmp://a.rtmp.youtube.com/live2/abcdefghijklmnop").as_deref(),
            Some("rtmp://a.rtmp.youtube.com/live2/{abc...nop}")
        );
        assert_eq!(
            redacted_output_url("rtmps://live-api-s.facebook.com:443/rtmp/FB-123456789").as_deref(),
            Some("rtmps://live-api-s.facebook.com:443/rtmp/{FB-...789}")
        );
        // A path before the application, and the live flag.
        let split = split_output("rtmp://host:1935/a/b/app/streamkey live=1").unwrap();
        assert_eq!(
            (split.host, split.path, split.key, split.suffix),
            ("host:1935", "/a/b/app/", "streamkey", " live=1")
        );
        // No application: Egress refuses the URL.
        for refused in [
            "rtmp://live.example.com/key",
            "rtmps://live.example.com",
            "https://live.example.com/app/key",
            "rtmp://host/app/key with space",
        ] {
            assert_eq!(split_output(refused), None, "{refused}");
        }
        // An empty application is Egress's to accept.
        assert!(split_output("rtmp://host//key").is_some());
    }

    #[test]
    fn reports_match_by_path_and_redacted_key_then_host() {
        let youtube =
            ReportedName::of_output("rtmp://a.rtmp.youtube.com/live2/yt-key-0001").unwrap();
        let twitch =
            ReportedName::of_output("rtmps://jfk.contribute.live-video.net/app/live_0123456789")
                .unwrap();
        let outputs = [(0, youtube.clone()), (1, twitch)];
        assert_eq!(
            match_report("rtmp://a.rtmp.youtube.com/live2/{yt-...001}", &outputs),
            Some(0)
        );
        // Twitch reported under another host (and scheme).
        assert_eq!(
            match_report(
                "rtmps://sfo.contribute.live-video.net/app/{liv...789}",
                &outputs
            ),
            Some(1)
        );
        assert_eq!(
            match_report("rtmp://a.rtmp.youtube.com/live2/{yt-...002}", &outputs),
            None
        );
        // Two outputs alike but for their host: the host decides.
        let backup =
            ReportedName::of_output("rtmp://b.rtmp.youtube.com/live2/yt-key-0001").unwrap();
        let outputs = [(0, youtube.clone()), (1, backup.clone())];
        assert_eq!(
            match_report("rtmp://b.rtmp.youtube.com/live2/{yt-...001}", &outputs),
            Some(1)
        );
        assert_eq!(
            match_report("rtmp://c.rtmp.youtube.com/live2/{yt-...001}", &outputs),
            None
        );
        assert!(!youtube.alike(&backup));
        let same = ReportedName::of_output("rtmps://A.rtmp.youtube.com/live2/yt-kez-0001").unwrap();
        assert!(youtube.alike(&same), "same host, path and redacted key");
    }
}
