//! The recordings bucket (docs/recordings.md): download URLs presigned with SigV4, with no
//! request to S3 (presigning is local), each valid no longer than the credentials that sign it:
//! in Lambda a session of the download role, whose expiry is known (the function's own
//! credentials come from its environment without one); and the test streams' recordings
//! written with `PutObject`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::{Credentials, ProvideCredentials, SharedCredentialsProvider};
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use chrono::{DateTime, TimeDelta, Utc};

use super::describe;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{ObjectWriter, RecordingStorage, StoreResult};
use hosting_domain::recording::{DownloadUrl, MP4_CONTENT_TYPE};

#[derive(Clone)]
pub struct S3Recordings {
    client: crate::LazyClient<Client>,
    bucket: String,
    /// The credentials URLs are signed with, kept while they outlast a new URL by
    /// [`refresh_ahead`]: a URL signed with temporary credentials stops working when they do,
    /// so its `url_expires_at` is never later than theirs.
    signing: Arc<Mutex<Option<Credentials>>>,
    /// Where those credentials come from.
    signer: Option<Signer>,
}

/// The source of the signing credentials.
#[derive(Clone)]
enum Signer {
    /// The SDK configuration's provider, the one the client signs with (the client's
    /// configuration no longer exposes it).
    Provider(SharedCredentialsProvider),
    /// Sessions of a role. Its provider, and the STS client inside it, is built when the first
    /// URL is signed: building an STS client parses the SDK's endpoint partitions, about a
    /// quarter of a function's set-up instructions (BENCHMARKS.md, "Cold start"), and most
    /// instances never sign a URL.
    Role {
        sdk: Box<crate::SdkConfig>,
        role_arn: String,
        provider: Arc<tokio::sync::OnceCell<SharedCredentialsProvider>>,
    },
}

impl Signer {
    async fn provider(&self) -> SharedCredentialsProvider {
        match self {
            Signer::Provider(provider) => provider.clone(),
            Signer::Role {
                sdk,
                role_arn,
                provider,
            } => provider
                .get_or_init(|| async {
                    SharedCredentialsProvider::new(
                        aws_config::sts::AssumeRoleProvider::builder(role_arn.as_str())
                            .session_name("recording-downloads")
                            .session_length(DOWNLOAD_SESSION)
                            .configure(sdk)
                            .build()
                            .await,
                    )
                })
                .await
                .clone(),
        }
    }
}

/// The download role's session: an hour, the longest STS grants a session assumed with a
/// role's own credentials (a function's role assuming another is role chaining).
pub const DOWNLOAD_SESSION: Duration = Duration::from_secs(3600);

/// How long a read waits for new signing credentials (an STS `AssumeRole` in Lambda).
const CREDENTIALS_TIMEOUT: Duration = Duration::from_secs(3);

/// Credentials are fetched again before signing when they would cut a new URL shorter than its
/// lifetime, or than half a download session: a URL is valid at least that long, and a busy
/// instance assumes the role at most about twice an hour.
fn refresh_ahead(valid_for: Duration) -> Duration {
    valid_for.min(DOWNLOAD_SESSION / 2)
}

/// An S3 client; path-style addressing when an endpoint is configured (an emulator), as
/// virtual-hosted bucket names do not resolve there.
pub fn client(sdk: &crate::SdkConfig) -> Client {
    let config = aws_sdk_s3::config::Builder::from(sdk)
        .force_path_style(sdk.endpoint_url().is_some())
        .build();
    Client::from_conf(config)
}

impl S3Recordings {
    pub fn new(client: impl Into<crate::LazyClient<Client>>, bucket: String) -> Self {
        Self {
            client: client.into(),
            bucket,
            signing: Arc::default(),
            signer: None,
        }
    }

    /// URLs signed with `sdk`'s credentials, each valid no longer than they are.
    pub fn signing_with(mut self, sdk: &crate::SdkConfig) -> Self {
        self.signer = sdk.credentials_provider().map(Signer::Provider);
        self
    }

    /// URLs signed with sessions of `role_arn` (docs/recordings.md, "Downloads"), assumed with
    /// `sdk`'s credentials when the first URL is signed, each [`DOWNLOAD_SESSION`] long.
    pub fn signing_as(mut self, sdk: &crate::SdkConfig, role_arn: &str) -> Self {
        self.signer = Some(Signer::Role {
            sdk: Box::new(sdk.clone()),
            role_arn: role_arn.to_owned(),
            provider: Arc::default(),
        });
        self
    }

    /// The credentials to sign a URL valid for `valid_for` with at `now`, when the client has
    /// a provider; fetched again when those kept would cut it short ([`refresh_ahead`]).
    async fn signing_credentials(
        &self,
        now: SystemTime,
        valid_for: Duration,
    ) -> StoreResult<Option<Credentials>> {
        let Some(signer) = &self.signer else {
            return Ok(None);
        };
        let ahead = refresh_ahead(valid_for);
        let usable = |c: &Credentials| c.expiry().is_none_or(|e| e > now + ahead);
        if let Some(kept) = self.signing.lock().expect("not poisoned").clone()
            && usable(&kept)
        {
            return Ok(Some(kept));
        }
        // A read waits this long at most for STS; past it the URL is left out of the answer
        // and the next read tries again.
        let provider = signer.provider().await;
        let fresh = tokio::time::timeout(CREDENTIALS_TIMEOUT, provider.provide_credentials())
            .await
            .map_err(|_| StoreError::Backend("signing credentials: no answer in time".into()))?
            .map_err(|err| {
                StoreError::Backend(format!("signing credentials: {}", describe(&err)))
            })?;
        *self.signing.lock().expect("not poisoned") = Some(fresh.clone());
        Ok(Some(fresh))
    }
}

#[async_trait]
impl RecordingStorage for S3Recordings {
    async fn download_url(
        &self,
        key: &str,
        now: DateTime<Utc>,
        valid_for: Duration,
    ) -> StoreResult<DownloadUrl> {
        let signed_at = SystemTime::from(now);
        let credentials = self.signing_credentials(signed_at, valid_for).await?;
        // Never valid past the credentials that sign it (docs/recordings.md, "Downloads").
        let valid_for = match credentials.as_ref().and_then(Credentials::expiry) {
            Some(expiry) => valid_for
                .min(expiry.duration_since(signed_at).unwrap_or_default())
                .max(Duration::from_secs(1)),
            None => valid_for,
        };
        let presigning = PresigningConfig::builder()
            .start_time(signed_at)
            .expires_in(valid_for)
            .build()
            .map_err(|err| StoreError::Backend(describe(&err)))?;
        let get = self.client.get_object().bucket(&self.bucket).key(key);
        let request = match credentials {
            // Signed with exactly the credentials whose expiry bounds it.
            Some(credentials) => {
                get.customize()
                    .config_override(
                        aws_sdk_s3::config::Builder::default().credentials_provider(credentials),
                    )
                    .presigned(presigning)
                    .await
            }
            None => get.presigned(presigning).await,
        }
        .map_err(|err| StoreError::Backend(describe(&err)))?;
        Ok(DownloadUrl {
            url: request.uri().to_owned(),
            expires_at: now + TimeDelta::from_std(valid_for).unwrap_or(TimeDelta::MAX),
        })
    }

    async fn put(&self, key: &str, bytes: &'static [u8]) -> StoreResult<()> {
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .content_type(MP4_CONTENT_TYPE)
            .body(ByteStream::from_static(bytes))
            .send()
            .await
            .map(drop)
            .map_err(|err| StoreError::Backend(describe(&err)))
    }

    async fn size_of(&self, key: &str) -> StoreResult<Option<u64>> {
        crate::s3_objects::size_of(&self.client, &self.bucket, key).await
    }

    async fn read_range(&self, key: &str, range: std::ops::Range<u64>) -> StoreResult<Vec<u8>> {
        crate::s3_objects::read_range(&self.client, &self.bucket, key, range).await
    }

    async fn create(&self, key: &str, len: u64) -> StoreResult<Box<dyn ObjectWriter>> {
        let client = Client::clone(&self.client);
        Ok(Box::new(crate::s3_objects::S3Write::new(
            client,
            self.bucket.clone(),
            key.to_owned(),
            len,
        )))
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        crate::s3_objects::delete(&self.client, &self.bucket, key).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recordings_signed_by(credentials: Credentials) -> S3Recordings {
        let sdk = crate::SdkConfig::builder()
            .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
            .region(aws_sdk_s3::config::Region::new("us-east-1"))
            .credentials_provider(SharedCredentialsProvider::new(credentials))
            .build();
        S3Recordings::new(
            crate::LazyClient::new({
                let sdk = sdk.clone();
                move || client(&sdk)
            }),
            "bucket".into(),
        )
        .signing_with(&sdk)
    }

    #[tokio::test]
    async fn a_url_never_outlives_the_temporary_credentials_that_sign_it() {
        let now = Utc::now();
        let session_ends = SystemTime::from(now) + Duration::from_secs(600);
        let recordings = recordings_signed_by(Credentials::new(
            "ASIAEXAMPLE",
            "secret",
            Some("session".into()),
            Some(session_ends),
            "test",
        ));
        let url = recordings
            .download_url("recordings/b/s.mp4", now, Duration::from_secs(3600))
            .await
            .unwrap();
        assert_eq!(url.expires_at, now + TimeDelta::seconds(600));
        assert!(url.url.contains("X-Amz-Expires=600"), "{}", url.url);
        assert!(
            url.url.contains("X-Amz-Security-Token=session"),
            "{}",
            url.url
        );
        // Long-lived credentials leave the configured lifetime as it is.
        let recordings = recordings_signed_by(Credentials::new(
            "AKIAEXAMPLE",
            "secret",
            None,
            None,
            "test",
        ));
        let url = recordings
            .download_url("recordings/b/s.mp4", now, Duration::from_secs(3600))
            .await
            .unwrap();
        assert_eq!(url.expires_at, now + TimeDelta::seconds(3600));
        assert!(url.url.contains("X-Amz-Expires=3600"), "{}", url.url);
    }
}
