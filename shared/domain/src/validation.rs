//! Field rules of request bodies. Start stream checks first every missing field
//! (`missing_fields`), then every constraint (`invalid_fields`), each in the documented field
//! order (docs/request-pipeline.md, "POST /streams"; docs/streams.md, "Request body").

use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::account::KeyEnvironment;
use crate::error::{ApiError, ApiResult};

pub const CREATOR_ID_MAX_CHARS: usize = 64;
pub const PRODUCT_NAME_MAX_CHARS: usize = 200;
pub const PLATFORM_MAX_CHARS: usize = 32;
pub const SCRIPT_MAX_CHARS: usize = 50_000;
pub const DURATION_MINUTES_RANGE: std::ops::RangeInclusive<i64> = 1..=480;
pub use crate::platform::PLATFORMS;

// A start-stream body that passed steps 1 and 2; its derived schema (the documented request
// body) carries the limits `parse` enforces. Doc comments here are public text.
/// Body of `POST /streams`.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
pub struct StartStreamRequest {
    /// The `avt_` id of a creator from `GET /creators`.
    #[schemars(length(max = CREATOR_ID_MAX_CHARS))]
    pub creator_id: String,
    /// The product featured; not blank.
    #[schemars(length(min = 1, max = PRODUCT_NAME_MAX_CHARS), pattern(r"\S"))]
    pub product_name: String,
    #[schemars(length(max = PLATFORM_MAX_CHARS), extend("enum" = PLATFORMS))]
    pub platform: String,
    /// Required for live keys. Optional for test keys (validated when sent); without it a test stream ends after the longest duration allowed.
    #[schemars(range(min = *DURATION_MINUTES_RANGE.start(), max = *DURATION_MINUTES_RANGE.end()))]
    pub duration_minutes: Option<u32>,
    /// Talking points for the host.
    #[schemars(length(max = SCRIPT_MAX_CHARS))]
    pub script: Option<String>,
    /// Must match the brand's vertical (`live-commerce`); the brand's when omitted.
    pub vertical: Option<String>,
    /// Channels to push the show to once live: at most 5; absent, `null` or `[]` for none. Checked after the creator.
    #[schemars(
        with = "Option<Vec<crate::destination::DestinationRequest>>",
        length(max = 5)
    )]
    pub destinations: Option<serde_json::Value>,
    /// Record the show to an MP4 kept for `RECORDING_RETENTION_DAYS` (docs/recordings.md); `false` when absent. Checked after `destinations`.
    #[schemars(with = "Option<bool>")]
    pub record: Option<serde_json::Value>,
}

/// A field's value, unless it is absent or `null` (which count alike in every body).
pub fn present<'a>(body: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    body.get(field).filter(|value| !value.is_null())
}

fn absent(body: &Map<String, Value>, field: &str) -> bool {
    present(body, field).is_none()
}

/// `400 missing_fields` naming every one of `missing`.
pub fn missing_fields(missing: &[&str]) -> ApiError {
    ApiError::MissingFields(format!("Missing required fields: {}.", missing.join(", ")))
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::InvalidFields(message.into())
}

/// A string of at most `max` Unicode scalar values.
fn bounded_string<'a>(body: &'a Map<String, Value>, field: &str, max: usize) -> ApiResult<&'a str> {
    match body.get(field) {
        Some(Value::String(s)) if s.chars().count() <= max => Ok(s),
        Some(Value::String(_)) => Err(invalid(format!(
            "{field} must be at most {max} characters."
        ))),
        _ => Err(invalid(format!("{field} must be a string."))),
    }
}

impl StartStreamRequest {
    /// The required fields `body` lacks, in the documented order.
    pub fn missing_fields(
        body: &Map<String, Value>,
        environment: KeyEnvironment,
    ) -> Vec<&'static str> {
        let mut required = vec!["creator_id", "product_name", "platform"];
        if environment == KeyEnvironment::Live {
            required.push("duration_minutes");
        }
        required
            .into_iter()
            .filter(|field| absent(body, field))
            .collect()
    }

    pub fn parse(body: &Map<String, Value>, environment: KeyEnvironment) -> ApiResult<Self> {
        let missing = Self::missing_fields(body, environment);
        if !missing.is_empty() {
            return Err(missing_fields(&missing));
        }

        let creator_id = bounded_string(body, "creator_id", CREATOR_ID_MAX_CHARS)?;
        let product_name = bounded_string(body, "product_name", PRODUCT_NAME_MAX_CHARS)?;
        if product_name.trim().is_empty() {
            return Err(invalid("product_name must not be blank."));
        }
        let platform = bounded_string(body, "platform", PLATFORM_MAX_CHARS)?;
        if !PLATFORMS.contains(&platform) {
            return Err(invalid(format!(
                "platform must be one of {}.",
                PLATFORMS.join(", ")
            )));
        }
        let duration_minutes = if absent(body, "duration_minutes") {
            None
        } else {
            // A JSON integer only: "10" and 10.5 (and 10.0) are not.
            let minutes = body["duration_minutes"]
                .as_i64()
                .filter(|m| DURATION_MINUTES_RANGE.contains(m))
                .ok_or_else(|| invalid("duration_minutes must be a whole number from 1 to 480."))?;
            Some(minutes as u32)
        };
        let script = if absent(body, "script") {
            None
        } else {
            Some(bounded_string(body, "script", SCRIPT_MAX_CHARS)?.to_owned())
        };
        let vertical = if absent(body, "vertical") {
            None
        } else {
            Some(bounded_string(body, "vertical", usize::MAX)?.to_owned())
        };

        Ok(Self {
            creator_id: creator_id.to_owned(),
            product_name: product_name.to_owned(),
            platform: platform.to_owned(),
            duration_minutes,
            script,
            vertical,
            // Kept as sent: checked after the creator (`crate::destination::parse_destinations`).
            destinations: present(body, "destinations").cloned(),
            // Kept as sent: checked after the destinations (`crate::recording::parse_record`).
            record: present(body, "record").cloned(),
        })
    }
}

/// Most viewers a test helper may set.
pub const MAX_TEST_VIEWER_COUNT: u64 = 1_000_000;

/// Body of `POST /test_helpers/streams/{id}/viewers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
pub struct SetViewersRequest {
    /// The live test stream's new `viewer_count`: a JSON integer.
    #[schemars(range(max = MAX_TEST_VIEWER_COUNT))]
    pub count: u64,
}

impl SetViewersRequest {
    /// `count` absent or `null` is missing; anything but an integer literal in range (`-1`,
    /// `1.5`, `1e3`, `"3"`, `true`) is invalid.
    pub fn parse(body: &Map<String, Value>) -> ApiResult<Self> {
        let count = present(body, "count")
            .ok_or_else(|| ApiError::MissingFields("Missing required fields: count.".into()))?;
        // serde_json keeps `1e3` and `1.0` as floats, so only integer literals pass `as_u64`.
        let count = count
            .as_u64()
            .filter(|count| *count <= MAX_TEST_VIEWER_COUNT)
            .ok_or_else(|| {
                invalid(format!(
                    "count must be a whole number from 0 to {MAX_TEST_VIEWER_COUNT}."
                ))
            })?;
        Ok(Self { count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn viewer_counts_are_integer_literals_in_range() {
        let code = |raw: &str| {
            let body: Map<String, Value> = serde_json::from_str(raw).unwrap();
            SetViewersRequest::parse(&body)
                .map(|r| r.count.to_string())
                .unwrap_or_else(|e| e.code().as_str().to_owned())
        };
        assert_eq!(code(r#"{"count": 0}"#), "0");
        assert_eq!(code(r#"{"count": 1000000}"#), "1000000");
        assert_eq!(code(r#"{}"#), "missing_fields");
        assert_eq!(code(r#"{"count": null}"#), "missing_fields");
        for bad in [
            "-1", "1.5", "1e3", "1.0", "\"3\"", "true", "1000001", "[1]", "{}",
        ] {
            assert_eq!(
                code(&format!(r#"{{"count": {bad}}}"#)),
                "invalid_fields",
                "{bad}"
            );
        }
    }

    fn parse(body: Value, env: KeyEnvironment) -> ApiResult<StartStreamRequest> {
        StartStreamRequest::parse(body.as_object().unwrap(), env)
    }

    fn code(body: Value, env: KeyEnvironment) -> &'static str {
        parse(body, env)
            .map(|_| "ok")
            .unwrap_or_else(|e| e.code().as_str())
    }

    #[test]
    fn missing_comes_before_invalid() {
        let body = json!({"creator_id": "avt_x", "platform": "myspace"});
        let err = parse(body, KeyEnvironment::Test).unwrap_err();
        assert_eq!(err.code().as_str(), "missing_fields");
        assert!(err.message().contains("product_name"));
    }

    #[test]
    fn duration_rules() {
        let base = |d: Value| json!({"creator_id": "a", "product_name": "p", "platform": "kick", "duration_minutes": d});
        assert_eq!(code(base(json!(1)), KeyEnvironment::Live), "ok");
        assert_eq!(code(base(json!(480)), KeyEnvironment::Live), "ok");
        assert_eq!(code(base(json!(0)), KeyEnvironment::Live), "invalid_fields");
        assert_eq!(
            code(base(json!(481)), KeyEnvironment::Live),
            "invalid_fields"
        );
        assert_eq!(
            code(base(json!("10")), KeyEnvironment::Live),
            "invalid_fields"
        );
        assert_eq!(
            code(base(json!(10.5)), KeyEnvironment::Live),
            "invalid_fields"
        );
        assert_eq!(
            code(base(json!(null)), KeyEnvironment::Live),
            "missing_fields"
        );
        assert_eq!(code(base(json!(null)), KeyEnvironment::Test), "ok");
        assert_eq!(
            code(base(json!(481)), KeyEnvironment::Test),
            "invalid_fields"
        );
    }

    #[test]
    fn lengths_count_characters() {
        let body =
            |name: String| json!({"creator_id": "a", "product_name": name, "platform": "kick"});
        assert_eq!(code(body("é".repeat(200)), KeyEnvironment::Test), "ok");
        assert_eq!(
            code(body("é".repeat(201)), KeyEnvironment::Test),
            "invalid_fields"
        );
        assert_eq!(
            code(body("   ".into()), KeyEnvironment::Test),
            "invalid_fields"
        );
        assert_eq!(
            code(body("".into()), KeyEnvironment::Test),
            "invalid_fields"
        );
    }
}
