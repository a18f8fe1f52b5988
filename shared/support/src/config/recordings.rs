//! `RECORDINGS_BUCKET`, `RECORDINGS_DIR`, `RECORDING_URL_TTL_SECS`, `RECORDING_RETENTION_DAYS` and
//! the upload key pair's parameter (docs/configuration.md).

use std::time::Duration;

use super::{ApiSecret, ConfigError, error, seconds};

/// Where recordings are kept and how they are handed out (docs/recordings.md).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingsConfig {
    /// `RECORDINGS_BUCKET`: the S3 bucket; unset, the local server keeps them in `dir`.
    pub bucket: Option<String>,
    /// `AWS_REGION`: the bucket's region, as the egress uploads to it.
    pub region: Option<String>,
    /// `RECORDINGS_DIR`: the local server's folder of recordings.
    pub dir: std::path::PathBuf,
    /// `RECORDING_URL_TTL_SECS`: how long a download URL is valid.
    pub url_ttl: Duration,
    /// `RECORDING_RETENTION_DAYS`: how long a recording is kept (the bucket's expiry).
    pub retention: Duration,
    /// The egress's upload key pair, `<access key id>:<secret access key>`, read from the SSM
    /// `SecureString` that `RECORDING_UPLOAD_KEY_PARAMETER` names; `None` when the egress
    /// uploads with its own AWS role.
    pub upload_key: Option<ApiSecret>,
}

/// Longest `RECORDING_URL_TTL_SECS`: a presigned URL lives at most 7 days.
pub const MAX_RECORDING_URL_TTL_SECS: u64 = 7 * 24 * 3600;
/// `RECORDING_UPLOAD_KEY_PARAMETER`: the SSM parameter holding the egress's upload key pair.
pub const RECORDING_UPLOAD_KEY_PARAMETER: &str = "RECORDING_UPLOAD_KEY_PARAMETER";

impl RecordingsConfig {
    pub(super) fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let url_ttl = seconds(
            "RECORDING_URL_TTL_SECS",
            get("RECORDING_URL_TTL_SECS").as_deref().unwrap_or("3600"),
        )?;
        if url_ttl.is_zero() || url_ttl.as_secs() > MAX_RECORDING_URL_TTL_SECS {
            return Err(error(
                "RECORDING_URL_TTL_SECS",
                format!(
                    "from 1 to {MAX_RECORDING_URL_TTL_SECS} (7 days, S3's longest presigned URL)"
                ),
            ));
        }
        let retention_days = match get("RECORDING_RETENTION_DAYS") {
            None => 30,
            Some(raw) => match raw.trim().parse::<u64>() {
                Ok(days) if (1..=36_500).contains(&days) => days,
                _ => {
                    return Err(error(
                        "RECORDING_RETENTION_DAYS",
                        format!(
                            "`{}` is not a whole number of days from 1 to 36500",
                            raw.trim()
                        ),
                    ));
                }
            },
        };
        Ok(Self {
            bucket: get("RECORDINGS_BUCKET"),
            region: get("AWS_REGION").or_else(|| get("AWS_DEFAULT_REGION")),
            dir: get("RECORDINGS_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| std::env::temp_dir().join("live-stream-recordings")),
            url_ttl,
            retention: Duration::from_secs(retention_days * 24 * 3600),
            upload_key: None,
        })
    }
}
