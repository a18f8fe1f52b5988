//! The recordings bucket (docs/recordings.md): download URLs presigned with SigV4 from the
//! function's own credentials, with no request to S3 (presigning is local), and the test
//! streams' recordings written with `PutObject`.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use aws_sdk_s3::Client;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use chrono::{DateTime, TimeDelta, Utc};

use super::describe;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{RecordingStorage, StoreResult};
use hosting_domain::recording::{DownloadUrl, MP4_CONTENT_TYPE};

#[derive(Clone)]
pub struct S3Recordings {
    client: crate::LazyClient<Client>,
    bucket: String,
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
        }
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
        let presigning = PresigningConfig::builder()
            .start_time(SystemTime::from(now))
            .expires_in(valid_for)
            .build()
            .map_err(|err| StoreError::Backend(describe(&err)))?;
        let request = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .presigned(presigning)
            .await
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
}
