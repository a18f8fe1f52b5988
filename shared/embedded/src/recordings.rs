//! Recordings in a folder of the local server (docs/recordings.md, "Local server"): each file
//! under its key, handed out as a URL of the local server signed with a key of the process's
//! own (HMAC-SHA256 over the key and the expiry), so a URL works until it expires and only as
//! issued.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use hosting_domain::clock::Clock;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{ObjectWriter, RecordingStorage, SignedDownload, StoreResult, Written};
use hosting_domain::recording::{CLIPS_PREFIX, DownloadUrl, RECORDINGS_PREFIX};

#[derive(Clone)]
pub struct FolderRecordings {
    dir: PathBuf,
    /// The server's address, without the API's prefix (`http://127.0.0.1:8080`).
    base_url: String,
    signing_key: [u8; 32],
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for FolderRecordings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FolderRecordings")
            .field("dir", &self.dir)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl FolderRecordings {
    pub fn new(dir: PathBuf, base_url: &str, clock: Arc<dyn Clock>) -> Self {
        Self {
            dir,
            base_url: base_url.trim_end_matches('/').to_owned(),
            signing_key: rand::random(),
            clock,
        }
    }

    fn signature(&self, key: &str, expires: i64) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.signing_key)
            .expect("HMAC takes a key of any length");
        mac.update(key.as_bytes());
        mac.update(b"\n");
        mac.update(expires.to_string().as_bytes());
        mac
    }

    /// Where `key` is kept: only keys under `recordings/` or `clips/` made of plain names.
    fn existing_path(&self, key: &str) -> StoreResult<PathBuf> {
        self.path_of(key)
            .ok_or_else(|| StoreError::Backend(format!("not a recording or clip key: {key}")))
    }

    fn path_of(&self, key: &str) -> Option<PathBuf> {
        let relative = Path::new(key);
        let plain = (key.starts_with(RECORDINGS_PREFIX) || key.starts_with(CLIPS_PREFIX))
            && relative
                .components()
                .all(|c| matches!(c, Component::Normal(_)));
        plain.then(|| self.dir.join(relative))
    }
}

#[async_trait]
impl RecordingStorage for FolderRecordings {
    async fn download_url(
        &self,
        key: &str,
        now: DateTime<Utc>,
        valid_for: Duration,
    ) -> StoreResult<DownloadUrl> {
        let expires_at = now + TimeDelta::from_std(valid_for).unwrap_or(TimeDelta::MAX);
        let expires = expires_at.timestamp();
        let signature = hex::encode(self.signature(key, expires).finalize().into_bytes());
        Ok(DownloadUrl {
            // The path is the key itself: `/recordings/<brand_id>/<stream_id>.mp4`.
            url: format!(
                "{}/{key}?expires={expires}&signature={signature}",
                self.base_url
            ),
            expires_at: DateTime::from_timestamp(expires, 0).unwrap_or(expires_at),
        })
    }

    async fn put(&self, key: &str, bytes: &'static [u8]) -> StoreResult<()> {
        let path = self
            .path_of(key)
            .ok_or_else(|| StoreError::Backend(format!("not a recording key: {key}")))?;
        // A few kilobytes on the local disk: written in place of a blocking pool.
        let write = || -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // Written aside and renamed, so a download never reads half a file.
            let partial = path.with_extension(format!("partial-{}", uuid::Uuid::new_v4().simple()));
            std::fs::write(&partial, bytes)?;
            std::fs::rename(&partial, &path)
        };
        write().map_err(|err| StoreError::Backend(format!("recording {key} not written: {err}")))
    }

    async fn size_of(&self, key: &str) -> StoreResult<Option<u64>> {
        match std::fs::metadata(self.existing_path(key)?) {
            Ok(metadata) => Ok(Some(metadata.len())),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(StoreError::Backend(format!("{key} not read: {err}"))),
        }
    }

    async fn read_range(&self, key: &str, range: std::ops::Range<u64>) -> StoreResult<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        let path = self.existing_path(key)?;
        let read = || -> std::io::Result<Vec<u8>> {
            let mut file = std::fs::File::open(&path)?;
            file.seek(SeekFrom::Start(range.start))?;
            let mut bytes = vec![0; range.end.saturating_sub(range.start) as usize];
            file.read_exact(&mut bytes)?;
            Ok(bytes)
        };
        // A read of the local disk, as the local server's other file work: in place.
        read().map_err(|err| StoreError::Backend(format!("{key} not read: {err}")))
    }

    async fn create(&self, key: &str, len: u64) -> StoreResult<Box<dyn ObjectWriter>> {
        let path = self.existing_path(key)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| StoreError::Backend(format!("{key} not written: {err}")))?;
        }
        let partial = path.with_extension(format!("partial-{}", uuid::Uuid::new_v4().simple()));
        let file = std::fs::File::create(&partial)
            .map_err(|err| StoreError::Backend(format!("{key} not written: {err}")))?;
        Ok(Box::new(FolderWrite {
            key: key.to_owned(),
            path,
            partial,
            file,
            len,
            written: 0,
        }))
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        match std::fs::remove_file(self.existing_path(key)?) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(StoreError::Backend(format!("{key} not deleted: {err}"))),
        }
    }

    async fn open_signed(&self, key: &str, expires: &str, signature: &str) -> SignedDownload {
        let (Ok(expires), Ok(signature)) = (expires.parse::<i64>(), hex::decode(signature)) else {
            return SignedDownload::Refused("the URL is not signed");
        };
        if self
            .signature(key, expires)
            .verify_slice(&signature)
            .is_err()
        {
            return SignedDownload::Refused("the URL's signature does not match");
        }
        if self.clock.now().timestamp() >= expires {
            return SignedDownload::Refused("the URL has expired");
        }
        let Some(path) = self.path_of(key) else {
            return SignedDownload::Missing;
        };
        match std::fs::read(&path) {
            Ok(bytes) => SignedDownload::File(bytes),
            Err(_) => SignedDownload::Missing,
        }
    }
}

/// An object of the folder being written: to a file aside, linked under its key when whole (a
/// link fails where the key exists, so an object is written at most once), then removed.
struct FolderWrite {
    key: String,
    path: PathBuf,
    partial: PathBuf,
    file: std::fs::File,
    len: u64,
    written: u64,
}

/// A write dropped before it finished (its cut failed part way) leaves no file aside.
impl Drop for FolderWrite {
    fn drop(&mut self) {
        std::fs::remove_file(&self.partial).ok();
    }
}

impl FolderWrite {
    fn failed(&self, err: impl std::fmt::Display) -> StoreError {
        std::fs::remove_file(&self.partial).ok();
        StoreError::Backend(format!("{} not written: {err}", self.key))
    }
}

#[async_trait]
impl ObjectWriter for FolderWrite {
    async fn write(&mut self, bytes: &[u8]) -> StoreResult<()> {
        use std::io::Write;
        self.written += bytes.len() as u64;
        if self.written > self.len {
            return Err(self.failed(format!("more than the {} bytes announced", self.len)));
        }
        let outcome = self.file.write_all(bytes);
        outcome.map_err(|err| self.failed(err))
    }

    async fn finish(self: Box<Self>) -> StoreResult<Written> {
        if self.written != self.len {
            return Err(self.failed(format!(
                "{} bytes of the {} announced",
                self.written, self.len
            )));
        }
        self.file.sync_all().map_err(|err| self.failed(err))?;
        let linked = std::fs::hard_link(&self.partial, &self.path);
        std::fs::remove_file(&self.partial).ok();
        match linked {
            Ok(()) => Ok(Written::Created),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                Ok(Written::AlreadyThere)
            }
            Err(err) => Err(StoreError::Backend(format!(
                "{} not written: {err}",
                self.key
            ))),
        }
    }
}
