//! The recordings bucket's objects read and written for clips (docs/clips.md, "Storage"): an
//! object's size with `HeadObject`, its ranges with ranged `GetObject`s, and an object written
//! at most once: one `PutObject` with `If-None-Match: *` up to [`SINGLE_PUT_MAX`] bytes, else a
//! multipart upload of [`PART_SIZE`] parts completed with `If-None-Match: *` (aborted when it
//! fails; the bucket's lifecycle rule removes what an ended process leaves).

use std::ops::Range;

use async_trait::async_trait;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};

use super::describe;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{ObjectWriter, StoreResult, Written};
use hosting_domain::recording::MP4_CONTENT_TYPE;

/// The largest object written with one `PutObject`: held whole in memory until then.
pub const SINGLE_PUT_MAX: u64 = 16 * 1024 * 1024;
/// A multipart upload's part (S3 takes 5 MiB at least, but for the last).
pub const PART_SIZE: usize = 8 * 1024 * 1024;

fn backend<E: std::error::Error>(err: E) -> StoreError {
    StoreError::Backend(describe(&err))
}

/// `412 Precondition Failed`: the key held an object already.
fn precondition_failed<E>(err: &aws_sdk_s3::error::SdkError<E, HttpResponse>) -> bool {
    err.raw_response()
        .is_some_and(|response| response.status().as_u16() == 412)
}

pub(crate) async fn size_of(client: &Client, bucket: &str, key: &str) -> StoreResult<Option<u64>> {
    match client.head_object().bucket(bucket).key(key).send().await {
        Ok(head) => Ok(Some(head.content_length().unwrap_or(0).max(0) as u64)),
        Err(err) if err.as_service_error().is_some_and(|e| e.is_not_found()) => Ok(None),
        Err(err) => Err(backend(err)),
    }
}

pub(crate) async fn read_range(
    client: &Client,
    bucket: &str,
    key: &str,
    range: Range<u64>,
) -> StoreResult<Vec<u8>> {
    if range.is_empty() {
        return Ok(Vec::new());
    }
    let object = client
        .get_object()
        .bucket(bucket)
        .key(key)
        .range(format!("bytes={}-{}", range.start, range.end - 1))
        .send()
        .await
        .map_err(backend)?;
    let bytes = object.body.collect().await.map_err(backend)?.into_bytes();
    if bytes.len() as u64 != range.end - range.start {
        return Err(StoreError::Backend(format!(
            "{key}: {} bytes came for a read of {}",
            bytes.len(),
            range.end - range.start
        )));
    }
    Ok(bytes.to_vec())
}

pub(crate) async fn delete(client: &Client, bucket: &str, key: &str) -> StoreResult<()> {
    // Deleting a key that is not there succeeds.
    client
        .delete_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .map(drop)
        .map_err(backend)
}

/// An object being written to the bucket.
pub(crate) struct S3Write {
    pub client: Client,
    pub bucket: String,
    pub key: String,
    pub len: u64,
    pub buffer: Vec<u8>,
    pub written: u64,
    /// The multipart upload's id and its parts so far, once started.
    pub multipart: Option<(String, Vec<CompletedPart>)>,
}

impl S3Write {
    pub fn new(client: Client, bucket: String, key: String, len: u64) -> Self {
        Self {
            client,
            bucket,
            key,
            len,
            buffer: Vec::new(),
            written: 0,
            multipart: None,
        }
    }

    async fn upload_part(&mut self, bytes: Vec<u8>) -> StoreResult<()> {
        if self.multipart.is_none() {
            let created = self
                .client
                .create_multipart_upload()
                .bucket(&self.bucket)
                .key(&self.key)
                .content_type(MP4_CONTENT_TYPE)
                .send()
                .await
                .map_err(backend)?;
            let id = created.upload_id().unwrap_or_default().to_owned();
            self.multipart = Some((id, Vec::new()));
        }
        let (id, parts) = self.multipart.as_mut().expect("started above");
        let number = parts.len() as i32 + 1;
        let uploaded = self
            .client
            .upload_part()
            .bucket(&self.bucket)
            .key(&self.key)
            .upload_id(id.as_str())
            .part_number(number)
            .body(ByteStream::from(bytes))
            .send()
            .await;
        match uploaded {
            Ok(part) => {
                parts.push(
                    CompletedPart::builder()
                        .part_number(number)
                        .set_e_tag(part.e_tag().map(str::to_owned))
                        .build(),
                );
                Ok(())
            }
            Err(err) => {
                let err = backend(err);
                self.abort().await;
                Err(err)
            }
        }
    }

    /// Best effort: the bucket's lifecycle rule removes an upload left behind.
    async fn abort(&mut self) {
        if let Some((id, _)) = self.multipart.take() {
            let aborted = self
                .client
                .abort_multipart_upload()
                .bucket(&self.bucket)
                .key(&self.key)
                .upload_id(id)
                .send()
                .await;
            if let Err(err) = aborted {
                tracing::warn!(key = %self.key, error = %describe(&err), "multipart upload not aborted");
            }
        }
    }
}

#[async_trait]
impl ObjectWriter for S3Write {
    async fn write(&mut self, bytes: &[u8]) -> StoreResult<()> {
        self.written += bytes.len() as u64;
        if self.written > self.len {
            self.abort().await;
            return Err(StoreError::Backend(format!(
                "{}: more than the {} bytes announced",
                self.key, self.len
            )));
        }
        self.buffer.extend_from_slice(bytes);
        while self.len > SINGLE_PUT_MAX && self.buffer.len() >= PART_SIZE {
            let rest = self.buffer.split_off(PART_SIZE);
            let part = std::mem::replace(&mut self.buffer, rest);
            self.upload_part(part).await?;
        }
        Ok(())
    }

    async fn finish(mut self: Box<Self>) -> StoreResult<Written> {
        if self.written != self.len {
            self.abort().await;
            return Err(StoreError::Backend(format!(
                "{}: {} bytes of the {} announced",
                self.key, self.written, self.len
            )));
        }
        if self.len <= SINGLE_PUT_MAX {
            let body = std::mem::take(&mut self.buffer);
            let put = self
                .client
                .put_object()
                .bucket(&self.bucket)
                .key(&self.key)
                .content_type(MP4_CONTENT_TYPE)
                .if_none_match("*")
                .body(ByteStream::from(body))
                .send()
                .await;
            return match put {
                Ok(_) => Ok(Written::Created),
                Err(err) if precondition_failed(&err) => Ok(Written::AlreadyThere),
                Err(err) => Err(backend(err)),
            };
        }
        if !self.buffer.is_empty() {
            let last = std::mem::take(&mut self.buffer);
            self.upload_part(last).await?;
        }
        let (id, parts) = self.multipart.clone().expect("a part was uploaded");
        let completed = self
            .client
            .complete_multipart_upload()
            .bucket(&self.bucket)
            .key(&self.key)
            .upload_id(id)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(parts))
                    .build(),
            )
            .if_none_match("*")
            .send()
            .await;
        match completed {
            Ok(_) => Ok(Written::Created),
            Err(err) if precondition_failed(&err) => {
                self.abort().await;
                Ok(Written::AlreadyThere)
            }
            Err(err) => {
                let err = backend(err);
                self.abort().await;
                Err(err)
            }
        }
    }
}
