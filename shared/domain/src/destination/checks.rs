//! The checks of a destination in a request body (docs/destinations.md, "Checks"): each runs
//! over every item before the next, and a stream key never appears in a message.

use serde_json::{Map, Value};

use super::{
    INGEST_URL_MAX_CHARS, MAX_DESTINATIONS, NewDestination, ReportedName, SIMULATED_FAILURE,
    STREAM_KEY_MAX_CHARS, TEST_ERROR_MAX_CHARS, output_url, split_output,
};
use crate::error::{ApiError, ApiResult};
use crate::platform::PLATFORMS;
use crate::webhook_url::host_is_public;

fn invalid(message: String) -> ApiError {
    ApiError::InvalidFields(message)
}

/// `destinations` of `POST /streams`: absent, `null` or `[]` is none. Each check runs over
/// every item before the next (docs/destinations.md, "Checks"): the array and its items'
/// shape, missing fields, platforms (`permitted` is the brand's vertical's rule), then the
/// ingest URLs, the keys and duplicates.
pub fn parse_destinations(
    value: Option<&Value>,
    permitted: impl Fn(&str) -> bool,
) -> ApiResult<Vec<NewDestination>> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= MAX_DESTINATIONS => items,
        Some(Value::Array(_)) => {
            return Err(invalid(format!(
                "destinations must have at most {MAX_DESTINATIONS} items."
            )));
        }
        Some(_) => return Err(invalid("destinations must be an array.".into())),
    };
    let mut objects = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item {
            Value::Object(object) => objects.push((format!("destinations[{index}]."), object)),
            _ => {
                return Err(invalid(format!("destinations[{index}] must be an object.")));
            }
        }
    }
    parse_items(&objects, &[], permitted)
}

/// The body of `POST /streams/{id}/destinations`, one item with the same checks; `existing`
/// are the stream's destinations not `removed`, with their keys, which it must not repeat.
pub fn parse_destination(
    body: &Map<String, Value>,
    existing: &[(String, String)],
    permitted: impl Fn(&str) -> bool,
) -> ApiResult<NewDestination> {
    let mut parsed = parse_items(&[(String::new(), body)], existing, permitted)?;
    Ok(parsed.remove(0))
}

fn parse_items(
    items: &[(String, &Map<String, Value>)],
    existing: &[(String, String)],
    permitted: impl Fn(&str) -> bool,
) -> ApiResult<Vec<NewDestination>> {
    for (prefix, item) in items {
        let missing: Vec<String> = ["platform", "ingest_url", "stream_key"]
            .into_iter()
            .filter(|field| item.get(*field).is_none_or(Value::is_null))
            .map(|field| format!("{prefix}{field}"))
            .collect();
        if !missing.is_empty() {
            return Err(ApiError::MissingFields(format!(
                "Missing required fields: {}.",
                missing.join(", ")
            )));
        }
    }
    for (prefix, item) in items {
        let platform = item["platform"].as_str().filter(|p| PLATFORMS.contains(p));
        let Some(platform) = platform else {
            return Err(invalid(format!(
                "{prefix}platform must be one of {}.",
                PLATFORMS.join(", ")
            )));
        };
        if !permitted(platform) {
            return Err(ApiError::VerticalMismatch(format!(
                "{prefix}platform is not permitted for the brand's vertical."
            )));
        }
    }
    let mut parsed: Vec<NewDestination> = Vec::with_capacity(items.len());
    for (prefix, item) in items {
        let ingest_url = item["ingest_url"]
            .as_str()
            .filter(|url| ingest_url_acceptable(url))
            .ok_or_else(|| {
                invalid(format!(
                    "{prefix}ingest_url must be an rtmp:// or rtmps:// URL of at most \
                     {INGEST_URL_MAX_CHARS} characters with a public host followed by an \
                     application path (rtmps://host/app), and no user name, password or \
                     fragment."
                ))
            })?;
        let stream_key = item["stream_key"]
            .as_str()
            .filter(|key| stream_key_acceptable(key))
            .ok_or_else(|| {
                invalid(format!(
                    "{prefix}stream_key must be 1 to {STREAM_KEY_MAX_CHARS} printable ASCII \
                     characters without spaces."
                ))
            })?;
        if parsed
            .iter()
            .map(|p| (p.ingest_url.as_str(), p.stream_key.as_str()))
            .chain(existing.iter().map(|(u, k)| (u.as_str(), k.as_str())))
            .any(|(url, key)| reported_alike((url, key), (ingest_url, stream_key)))
        {
            return Err(invalid(format!(
                "{prefix}ingest_url and stream_key would be reported by LiveKit as another \
                 destination's: the same host and path, and a stream key with the same first \
                 and last characters."
            )));
        }
        parsed.push(NewDestination {
            platform: item["platform"].as_str().unwrap_or_default().to_owned(),
            ingest_url: ingest_url.to_owned(),
            stream_key: stream_key.to_owned(),
        });
    }
    Ok(parsed)
}

fn ingest_url_acceptable(raw: &str) -> bool {
    if raw.chars().count() > INGEST_URL_MAX_CHARS {
        return false;
    }
    let Ok(url) = url::Url::parse(raw) else {
        return false;
    };
    matches!(url.scheme(), "rtmp" | "rtmps")
        && url.username().is_empty()
        && url.password().is_none()
        && url.fragment().is_none()
        && !raw.contains('#')
        && url.host_str().is_some_and(host_is_public)
        && has_application_path(raw)
}

/// Whether LiveKit can split `raw` joined with a key (docs/destinations.md, "What LiveKit
/// accepts"): an application path after the host, once one trailing `/` is dropped.
fn has_application_path(raw: &str) -> bool {
    let output = output_url(raw, "key");
    split_output(&output).is_some_and(|split| !split.path.trim_matches('/').is_empty())
}

/// Whether two destinations, as (ingest URL, key), would be reported alike by LiveKit.
pub fn reported_alike(a: (&str, &str), b: (&str, &str)) -> bool {
    let name = |(url, key): (&str, &str)| ReportedName::of_output(&output_url(url, key));
    matches!((name(a), name(b)), (Some(a), Some(b)) if a.alike(&b))
}

fn stream_key_acceptable(key: &str) -> bool {
    (1..=STREAM_KEY_MAX_CHARS).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic())
}

/// Body of `POST /test_helpers/streams/{id}/destinations/{destination_id}/fail`: its optional
/// `error`, 1 to 200 characters; any other body, or none, is the default.
pub fn parse_test_failure(body: Option<&Map<String, Value>>) -> ApiResult<String> {
    match body.and_then(|body| body.get("error")) {
        None | Some(Value::Null) => Ok(SIMULATED_FAILURE.to_owned()),
        Some(Value::String(error))
            if (1..=TEST_ERROR_MAX_CHARS).contains(&error.chars().count()) =>
        {
            Ok(error.clone())
        }
        Some(_) => Err(invalid(format!(
            "error must be a string of 1 to {TEST_ERROR_MAX_CHARS} characters."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DestinationStatus, last4, new_destinations};
    use super::*;
    use chrono::Utc;
    use serde_json::json;

    fn parse(value: Value) -> ApiResult<Vec<NewDestination>> {
        parse_destinations(Some(&value), |_| true)
    }

    fn item(url: &str, key: &str) -> Value {
        json!({"platform": "tiktok", "ingest_url": url, "stream_key": key})
    }

    #[test]
    fn absent_null_and_empty_are_none() {
        assert_eq!(parse_destinations(None, |_| true).unwrap(), vec![]);
        assert_eq!(parse(Value::Null).unwrap(), vec![]);
        assert_eq!(parse(json!([])).unwrap(), vec![]);
    }

    #[test]
    fn checks_run_in_order_over_every_item() {
        let code = |v: Value| parse(v).unwrap_err().code().as_str();
        assert_eq!(code(json!({})), "invalid_fields");
        assert_eq!(code(json!([1])), "invalid_fields");
        let six: Vec<Value> = (0..6)
            .map(|i| item("rtmp://a.example.com/app", &format!("key{i}")))
            .collect();
        assert_eq!(code(Value::Array(six)), "invalid_fields");
        // A missing field in the second item beats a bad URL in the first.
        let err = parse(json!([item("http://x", "k"), {"platform": "tiktok", "ingest_url": "rtmp://a.example.com/x"}])).unwrap_err();
        assert_eq!(err.code().as_str(), "missing_fields");
        assert!(
            err.to_string().contains("destinations[1].stream_key"),
            "{err}"
        );
        let err = parse_destinations(Some(&json!([item("rtmp://a.example.com/x", "k")])), |_| {
            false
        })
        .unwrap_err();
        assert_eq!(err.code().as_str(), "vertical_mismatch");
    }

    #[test]
    fn ingest_urls_and_keys() {
        for good in [
            "rtmp://live.example.com/app",
            "rtmps://live-api-s.facebook.com:443/rtmp/",
            "rtmp://8.8.8.8/live",
        ] {
            assert!(ingest_url_acceptable(good), "{good}");
        }
        for bad in [
            "https://live.example.com/app",
            "rtmp://user:pw@live.example.com/app",
            "rtmp://live.example.com/app#x",
            "rtmp://127.0.0.1/app",
            "rtmp://127.1/app",
            "rtmp://0x7f.0.0.1/app",
            "rtmp://2130706433/app",
            "rtmp://[::1]/app",
            "rtmp://localhost/app",
            "rtmp://ingest/app",
            "rtmp://10.0.0.8/app",
            "rtmp:///app",
            "live.example.com/app",
            // No application path: LiveKit could not split the output URL.
            "rtmps://live.example.com",
            "rtmps://live.example.com/",
            "rtmps://live.example.com//",
        ] {
            assert!(!ingest_url_acceptable(bad), "{bad}");
        }
        assert!(!ingest_url_acceptable(&format!(
            "rtmp://a.example.com/{}",
            "a".repeat(500)
        )));
        assert!(stream_key_acceptable("live_123-abc"));
        for bad in ["", "has space", "tab\t", "é", &"k".repeat(257)] {
            assert!(!stream_key_acceptable(bad), "{bad:?}");
        }
        let err = parse(json!([
            item("rtmp://a.example.com/x", "k"),
            item("rtmp://a.example.com/x", "k")
        ]))
        .unwrap_err();
        assert!(err.to_string().contains("destinations[1]"), "{err}");
        // One trailing `/` is dropped; keys LiveKit would report alike are refused too.
        for (url, key) in [
            ("rtmp://a.example.com/x/", "k"),
            ("rtmps://a.example.com/x", "k"),
        ] {
            let err = parse(json!([item("rtmp://a.example.com/x", "k"), item(url, key)]));
            assert!(err.is_err(), "{url}");
        }
        let err = parse(json!([
            item("rtmp://a.example.com/x", "live_0123456789"),
            item("rtmp://a.example.com/x", "live_9999996789")
        ]))
        .unwrap_err();
        assert!(!err.to_string().contains("live_"), "{err}");
        assert!(
            parse(json!([
                item("rtmp://a.example.com/x", "live_0123456789"),
                item("rtmp://b.example.com/x", "live_9999996789"),
                item("rtmp://a.example.com/y", "live_9999996789"),
            ]))
            .is_ok(),
            "another host or path is told apart"
        );
    }

    #[test]
    fn states_only_move_forward() {
        let (mut destinations, keys) = new_destinations(vec![NewDestination {
            platform: "tiktok".into(),
            ingest_url: "rtmp://a.example.com/x".into(),
            stream_key: "secret-key-1234".into(),
        }]);
        assert_eq!(destinations[0].stream_key_last4, "1234");
        assert!(!format!("{keys:?}").contains("secret"));
        let d = &mut destinations[0];
        let now = Utc::now();
        assert!(d.advance(DestinationStatus::Starting, now, None));
        assert!(d.advance(DestinationStatus::Failed, now, Some("boom")));
        assert!(
            !d.advance(DestinationStatus::Active, now, None),
            "a late ACTIVE after FAILED"
        );
        assert_eq!(
            (d.status, d.error.as_deref()),
            (DestinationStatus::Failed, Some("boom"))
        );
        assert_eq!(last4("abc"), "abc");
        let redacted = keys.redact(
            "dial rtmp://a.example.com/x/secret-key-1234 failed",
            &destinations,
        );
        assert_eq!(redacted, "dial rtmp://a.example.com/x/[redacted] failed");
    }
}
