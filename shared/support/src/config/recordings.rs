//! `RECORDINGS_BUCKET`, `RECORDINGS_DIR`, `RECORDING_URL_TTL_SECS`, `RECORDING_RETENTION_DAYS`,
//! the upload role and the upload key pair's parameter (docs/configuration.md), with the
//! start-up check that refuses an upload that cannot work (docs/recordings.md, "Upload
//! credentials").

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
    /// `RECORDING_UPLOAD_ROLE_ARN` and `RECORDING_UPLOAD_EXTERNAL_ID`: the role the egress
    /// assumes to upload (with the key pair when one is configured, else with its own
    /// identity, as LiveKit Cloud does), and the external id that role's trust requires.
    pub upload_role: Option<UploadRole>,
    /// `RECORDING_DOWNLOAD_ROLE_ARN`: the role whose sessions sign download URLs, so that each
    /// URL's `url_expires_at` is bounded by a known expiry. Required in Lambda with a bucket.
    pub download_role: Option<String>,
}

/// The role the egress assumes for its upload.
#[derive(Clone, PartialEq, Eq)]
pub struct UploadRole {
    pub arn: String,
    /// Kept out of logs and error texts, as LiveKit redacts it from its own.
    pub external_id: String,
}

impl std::fmt::Debug for UploadRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UploadRole")
            .field("arn", &self.arn)
            .field("external_id", &"<redacted>")
            .finish()
    }
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
        let upload_role = upload_role(get)?;
        let download_role = get("RECORDING_DOWNLOAD_ROLE_ARN")
            .map(|arn| arn.trim().to_owned())
            .map(|arn| role_arn("RECORDING_DOWNLOAD_ROLE_ARN", arn))
            .transpose()?;
        let bucket = get("RECORDINGS_BUCKET");
        // LiveKit Cloud's egress has no AWS role of the deploying account: an upload with
        // neither a role to assume nor a key pair fails at every show's end, so it is refused
        // now.
        let cloud = get("LIVEKIT_URL")
            .and_then(|url| url::Url::parse(url.trim()).ok())
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
            .is_some_and(|host| host.ends_with(".livekit.cloud"));
        if bucket.is_some()
            && cloud
            && upload_role.is_none()
            && get(RECORDING_UPLOAD_KEY_PARAMETER).is_none()
        {
            return Err(error(
                "RECORDING_UPLOAD_ROLE_ARN",
                "a LiveKit Cloud egress cannot upload recordings with a role of its own: set \
                 RECORDING_UPLOAD_ROLE_ARN and RECORDING_UPLOAD_EXTERNAL_ID (the template's \
                 RecordingUploadTrustedPrincipal and RecordingUploadExternalId), or \
                 RECORDING_UPLOAD_KEY_PARAMETER",
            ));
        }
        Ok(Self {
            bucket,
            region: get("AWS_REGION").or_else(|| get("AWS_DEFAULT_REGION")),
            dir: get("RECORDINGS_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| std::env::temp_dir().join("live-stream-recordings")),
            url_ttl,
            retention: Duration::from_secs(retention_days * 24 * 3600),
            upload_key: None,
            upload_role,
            download_role,
        })
    }
}

/// `arn` when it is an IAM role's ARN (`arn:<partition>:iam::<12 digits>:role/<name>`).
fn role_arn(variable: &'static str, arn: String) -> Result<String, ConfigError> {
    let is_role_arn = arn
        .strip_prefix("arn:")
        .and_then(|rest| rest.split_once(":iam::"))
        .and_then(|(partition, rest)| {
            partition
                .starts_with("aws")
                .then_some(rest.split_once(":role/")?)
        })
        .is_some_and(|(account, name)| {
            account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty()
        });
    if is_role_arn {
        Ok(arn)
    } else {
        Err(error(
            variable,
            "not an IAM role's ARN (arn:aws:iam::<account>:role/<name>)",
        ))
    }
}

/// `RECORDING_UPLOAD_ROLE_ARN` with its `RECORDING_UPLOAD_EXTERNAL_ID`: an IAM role's ARN, and
/// an external id as IAM takes it (2 to 1224 of letters, digits and `+=,.@:/-_`), required with
/// the role: a role a third party assumes is assumed with one.
fn upload_role(get: &impl Fn(&str) -> Option<String>) -> Result<Option<UploadRole>, ConfigError> {
    let arn = get("RECORDING_UPLOAD_ROLE_ARN").map(|arn| arn.trim().to_owned());
    let external_id = get("RECORDING_UPLOAD_EXTERNAL_ID").map(|id| id.trim().to_owned());
    let Some(arn) = arn else {
        return match external_id {
            Some(_) => Err(error(
                "RECORDING_UPLOAD_EXTERNAL_ID",
                "set only with RECORDING_UPLOAD_ROLE_ARN",
            )),
            None => Ok(None),
        };
    };
    let arn = role_arn("RECORDING_UPLOAD_ROLE_ARN", arn)?;
    let external_id = external_id
        .filter(|id| {
            (2..=1224).contains(&id.len())
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+=,.@:/-_".contains(&b))
        })
        .ok_or_else(|| {
            error(
                "RECORDING_UPLOAD_EXTERNAL_ID",
                "required with RECORDING_UPLOAD_ROLE_ARN: 2 to 1224 letters, digits or +=,.@:/-_",
            )
        })?;
    Ok(Some(UploadRole { arn, external_id }))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::{Config, StoreKind};
    use super::*;

    /// The configuration of `vars`, with LiveKit's key and secret beside any `LIVEKIT_URL`.
    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .chain(&[("LIVEKIT_API_KEY", "key"), ("LIVEKIT_API_SECRET", "secret")])
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(StoreKind::Embedded, |name| vars.get(name).cloned())
    }

    const ROLE: &str = "arn:aws:iam::123456789012:role/recording-upload";

    #[test]
    fn an_upload_role_needs_its_external_id_and_is_never_printed() {
        let role = config(&[
            ("RECORDING_UPLOAD_ROLE_ARN", ROLE),
            ("RECORDING_UPLOAD_EXTERNAL_ID", "deploy-7f3a-SECRET"),
        ])
        .unwrap()
        .recordings
        .upload_role
        .unwrap();
        assert_eq!(role.arn, ROLE);
        assert!(!format!("{role:?}").contains("SECRET"));
        for (vars, variable) in [
            (
                vec![("RECORDING_UPLOAD_ROLE_ARN", ROLE)],
                "RECORDING_UPLOAD_EXTERNAL_ID",
            ),
            (
                vec![("RECORDING_UPLOAD_EXTERNAL_ID", "deploy-7f3a")],
                "RECORDING_UPLOAD_EXTERNAL_ID",
            ),
            (
                vec![
                    ("RECORDING_UPLOAD_ROLE_ARN", ROLE),
                    ("RECORDING_UPLOAD_EXTERNAL_ID", "has space"),
                ],
                "RECORDING_UPLOAD_EXTERNAL_ID",
            ),
            (
                vec![
                    ("RECORDING_UPLOAD_ROLE_ARN", "arn:aws:iam::123:role/x"),
                    ("RECORDING_UPLOAD_EXTERNAL_ID", "deploy-7f3a"),
                ],
                "RECORDING_UPLOAD_ROLE_ARN",
            ),
            (
                vec![
                    (
                        "RECORDING_UPLOAD_ROLE_ARN",
                        "arn:aws:iam::123456789012:user/x",
                    ),
                    ("RECORDING_UPLOAD_EXTERNAL_ID", "deploy-7f3a"),
                ],
                "RECORDING_UPLOAD_ROLE_ARN",
            ),
        ] {
            assert_eq!(config(&vars).unwrap_err().variable, variable, "{vars:?}");
        }
    }

    #[test]
    fn a_livekit_cloud_egress_with_nothing_to_upload_with_is_refused_at_start_up() {
        let cloud = ("LIVEKIT_URL", "wss://shop-x1y2.livekit.cloud");
        let bucket = ("RECORDINGS_BUCKET", "recordings-bucket");
        let err = config(&[cloud, bucket]).unwrap_err();
        assert_eq!(err.variable, "RECORDING_UPLOAD_ROLE_ARN");
        assert!(err.reason.contains("LiveKit Cloud"), "{err}");
        // A role, or a key pair, can work; a self-hosted egress can upload with its own role.
        config(&[
            cloud,
            bucket,
            ("RECORDING_UPLOAD_ROLE_ARN", ROLE),
            ("RECORDING_UPLOAD_EXTERNAL_ID", "deploy-7f3a"),
        ])
        .unwrap();
        config(&[
            cloud,
            bucket,
            ("RECORDING_UPLOAD_KEY_PARAMETER", "/x/upload-key"),
        ])
        .unwrap();
        config(&[("LIVEKIT_URL", "wss://livekit.example.com"), bucket]).unwrap();
        config(&[cloud]).unwrap();
    }

    #[test]
    fn a_download_role_must_be_a_role_and_is_required_in_lambda_with_a_bucket() {
        let role = "arn:aws:iam::123456789012:role/recording-downloads";
        let with_role = config(&[("RECORDING_DOWNLOAD_ROLE_ARN", role)]).unwrap();
        assert_eq!(with_role.recordings.download_role.as_deref(), Some(role));
        for arn in ["arn:aws:iam::123456789012:user/x", "recording-downloads"] {
            let err = config(&[("RECORDING_DOWNLOAD_ROLE_ARN", arn)]).unwrap_err();
            assert_eq!(err.variable, "RECORDING_DOWNLOAD_ROLE_ARN", "{arn}");
        }
        assert!(crate::config::LAMBDA_REQUIRED.contains(&"RECORDING_DOWNLOAD_ROLE_ARN"));
        let err = with_role.required("RECORDINGS_BUCKET").unwrap_err();
        assert_eq!(err.variable, "RECORDINGS_BUCKET");
        let err = config(&[("RECORDINGS_BUCKET", "recordings-bucket")])
            .unwrap()
            .required("RECORDING_DOWNLOAD_ROLE_ARN")
            .unwrap_err();
        assert!(err.reason.contains("no expiry"), "{err}");
    }
}
