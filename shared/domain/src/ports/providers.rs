//! What lies outside the store: timers, the room provider and the delivery queue.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::TimerKind;
use crate::error::RoomError;

use super::*;

/// A one-shot timer of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timer {
    pub stream_id: Uuid,
    pub kind: TimerKind,
    pub due_at: DateTime<Utc>,
}

/// One-shot timers that call back into `hosting_app::service::timers::fire`. Scheduling the same
/// (stream, kind) again replaces its timer. Timers are the precise path; the deadline sweep
/// (`hosting_app::service::timers::sweep`) is the safety net when one is lost.
#[async_trait]
pub trait Timers: Send + Sync {
    async fn schedule(&self, timer: Timer) -> StoreResult<()>;
    async fn cancel(&self, stream_id: Uuid, kind: TimerKind) -> StoreResult<()>;
}

/// An event of the room provider's, as its adapter reads it (docs/livekit.md, "Event mapping").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderEventKind {
    /// The host joined: an agent of the configured agent name that acts for no one else
    /// (docs/livekit.md, "The host").
    AgentJoined,
    /// The host left.
    AgentLeft,
    /// Any other agent (an avatar publishing on the host's behalf, a stray automatic agent):
    /// neither the host nor a viewer. Its joining still shows a finished stream's room in use.
    OtherAgentJoined,
    OtherAgentLeft,
    /// A participant of a kind this build knows other than agent (a missing kind is a
    /// standard participant).
    ViewerJoined,
    ViewerLeft,
    /// A participant of a kind this build does not know: neither an agent nor a viewer. Its
    /// joining still shows a finished stream's room in use.
    UnknownParticipantJoined,
    /// The room's egress (its recorder joining as a participant of kind `EGRESS`): neither a
    /// viewer nor a host.
    EgressParticipant,
    /// `egress_started`, `egress_updated` or `egress_ended`, with its report.
    Egress,
    RoomFinished,
    /// Anything else: acknowledged, changes nothing.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderEvent {
    pub id: String,
    pub room_name: String,
    pub kind: ProviderEventKind,
    /// The participant's id (its `sid`), for participant events.
    pub participant: String,
    /// The participant's identity, which `RemoveParticipant` names.
    pub identity: String,
    /// The host set `lsh.finished` to `"true"` before leaving: it ended the show on purpose.
    pub finished: bool,
    /// When the participant joined, as the provider reports it.
    pub joined_at: Option<DateTime<Utc>>,
    /// Why a participant left, as the provider names it (`CLIENT_INITIATED`, ...).
    pub disconnect_reason: Option<String>,
    /// When the provider says the event happened.
    pub created_at: Option<DateTime<Utc>>,
    /// What an egress event reports.
    pub egress: Option<EgressReport>,
}

/// An egress's state as an egress event reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressReport {
    pub egress_id: String,
    /// The egress has ended (`EGRESS_COMPLETE`, `EGRESS_FAILED`, `EGRESS_ABORTED`,
    /// `EGRESS_LIMIT_REACHED`).
    pub ended: bool,
    /// It ended `EGRESS_COMPLETE`: its files are written.
    pub complete: bool,
    /// It ended `EGRESS_LIMIT_REACHED`: LiveKit's time limit on an output, its files finished
    /// and written as on completion; not a failure (docs/destinations.md, "Limits").
    pub limit_reached: bool,
    /// Its error text, as the provider gives it (it may name an output URL).
    pub error: Option<String>,
    pub outputs: Vec<OutputReport>,
    /// The files it wrote (`fileResults`).
    pub files: Vec<FileReport>,
}

/// A file an egress wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    pub filename: String,
    pub size_bytes: u64,
    pub duration_nanos: u64,
}

/// One output of an egress: its URL and state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputReport {
    pub url: String,
    pub state: OutputState,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputState {
    Active,
    Finished,
    Failed,
    /// Anything else (`ACTIVE` not yet reached): changes nothing.
    Other,
}

/// Where recordings are kept (S3 in AWS, a folder of the local server) and how they are handed
/// out (docs/recordings.md).
#[async_trait]
pub trait RecordingStorage: Send + Sync {
    /// A URL that downloads `key` until `now + valid_for`, made without any network round trip.
    async fn download_url(
        &self,
        key: &str,
        now: DateTime<Utc>,
        valid_for: Duration,
    ) -> StoreResult<crate::recording::DownloadUrl>;
    /// Writes `bytes` (an MP4) under `key`, replacing what is there.
    async fn put(&self, key: &str, bytes: &'static [u8]) -> StoreResult<()>;
    /// A download of a URL this storage signed itself (the local server's folder): `key` and
    /// the URL's `expires` and `signature` parameters as sent. S3 serves its own URLs.
    async fn open_signed(&self, _key: &str, _expires: &str, _signature: &str) -> SignedDownload {
        SignedDownload::NotServed
    }
    /// The size of the object `key`; `None` when there is none.
    async fn size_of(&self, key: &str) -> StoreResult<Option<u64>>;
    /// The bytes `range` (end exclusive) of the object `key`, all of them.
    async fn read_range(&self, key: &str, range: std::ops::Range<u64>) -> StoreResult<Vec<u8>>;
    /// Starts writing the object `key`, `len` bytes in all, handed to the writer in order
    /// (docs/clips.md, "Storage"). Nothing is visible under `key` until the writer finishes.
    async fn create(&self, key: &str, len: u64) -> StoreResult<Box<dyn ObjectWriter>>;
    /// Removes the object `key`; one already gone is no error.
    async fn delete(&self, key: &str) -> StoreResult<()>;
}

/// An object being written: its bytes in order, then [`ObjectWriter::finish`].
#[async_trait]
pub trait ObjectWriter: Send {
    async fn write(&mut self, bytes: &[u8]) -> StoreResult<()>;
    /// Makes the object whole under its key, at most once: when the key already holds an
    /// object (a cut done again after its first write), that one stays.
    async fn finish(self: Box<Self>) -> StoreResult<Written>;
}

/// How a finished write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    /// The key held an object already; it was left as it was.
    AlreadyThere,
}

/// What a download of a signed URL gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignedDownload {
    /// This storage signs no URL of its own.
    NotServed,
    /// The signature does not match, or the URL has expired: why.
    Refused(&'static str),
    /// Signed, but no file is there (past the retention, or never written).
    Missing,
    File(Vec<u8>),
}

/// What a viewer needs to join a launched room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewerAccess {
    pub ws_url: String,
    pub viewer_token: String,
}

/// A host in a room as the provider lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomHost {
    pub sid: String,
    pub identity: String,
    pub joined_at: Option<DateTime<Utc>>,
}

/// What the provider reports of a room now (docs/livekit.md, "Read-backs").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoomPresence {
    /// The hosts in the room, earliest joined first.
    pub hosts: Vec<RoomHost>,
    /// The room's viewers as the provider counts them (agents and egress left out).
    pub viewers: u64,
}

/// The real-time room provider (LiveKit): its rooms and their host, and its egress.
pub trait RoomProvider: RoomService + EgressService {}

impl<T: RoomService + EgressService + ?Sized> RoomProvider for T {}

/// The provider's rooms, the host in them and their viewers.
#[async_trait]
pub trait RoomService: Send + Sync {
    /// Creates the room, kept open while empty (or agent-only) for `keep_open`, with the host
    /// dispatched into it (`host_metadata` handed to the agent), so that no other agent is
    /// dispatched into it by itself.
    async fn create_room(
        &self,
        room_name: &str,
        keep_open: Duration,
        host_metadata: &str,
    ) -> Result<(), RoomError>;
    /// Dispatches the host agent explicitly, never restarted by the provider; `metadata` is
    /// handed to the agent.
    async fn dispatch_agent(&self, room_name: &str, metadata: &str) -> Result<(), RoomError>;
    /// The room's hosts and viewers now; `None` when the provider has no such room.
    async fn room_presence(&self, room_name: &str) -> Result<Option<RoomPresence>, RoomError>;
    /// Deletes every dispatch of the host into the room (the room's own included), so a
    /// new one is the only one.
    async fn delete_dispatches(&self, room_name: &str) -> Result<(), RoomError>;
    /// Removes a participant from the room; one already gone is no error.
    async fn remove_participant(&self, room_name: &str, identity: &str) -> Result<(), RoomError>;
    /// A subscribe-only token for viewers, valid for `valid_for`.
    async fn viewer_access(
        &self,
        room_name: &str,
        valid_for: Duration,
    ) -> Result<ViewerAccess, RoomError>;
    /// Deletes the room; a room that does not exist (deleted already, or never created)
    /// counts as deleted.
    async fn delete_room(&self, room_name: &str) -> Result<(), RoomError>;
}

/// The provider's egress: what pushes a room to the destinations and records it.
#[async_trait]
pub trait EgressService: Send + Sync {
    /// Starts one room-composite egress of the room pushing to `output_urls` over RTMP, and
    /// writing an MP4 to `file` (its key in the recordings bucket) when given; its id.
    async fn start_egress(
        &self,
        room_name: &str,
        output_urls: Vec<String>,
        file: Option<&str>,
    ) -> Result<String, EgressError>;
    /// Adds and removes outputs of a running egress.
    async fn update_egress_outputs(
        &self,
        egress_id: &str,
        add: Vec<String>,
        remove: Vec<String>,
    ) -> Result<(), EgressError>;
    /// Stops the egress; one the provider no longer knows, or one that has ended, counts as
    /// stopped.
    async fn stop_egress(&self, egress_id: &str) -> Result<(), EgressError>;
    /// The egresses running now across the project, as reports: one `ListEgress` of the
    /// active ones, whatever the number of streams (an egress missing from it, on a page not
    /// read or ended since, is read by its id).
    async fn active_egresses(&self) -> Result<Vec<EgressReport>, EgressError>;
    /// One egress by its id, in whatever state it is or ended in; `None` when the provider no
    /// longer knows it.
    async fn egress(&self, egress_id: &str) -> Result<Option<EgressReport>, EgressError>;
    /// The ids of the room's egresses that are still running (any a start made whose id was
    /// never recorded included).
    async fn running_egresses(&self, room_name: &str) -> Result<Vec<String>, EgressError>;
}

/// Why an egress request failed. Its text never holds an output URL or a stream key: the
/// adapter removes them before it is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    /// The provider does not know the egress (it ended and was forgotten).
    #[error("the egress no longer exists")]
    Gone,
    #[error("{0}")]
    Failed(String),
}

/// One delivery of one event to one webhook. The body, and so the event id, is the same on
/// every attempt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Delivery {
    pub event_id: String,
    pub event_type: crate::EventType,
    pub brand_id: String,
    pub webhook_id: Uuid,
    /// 1 for the first attempt.
    pub attempt: u32,
    pub body: String,
}

/// A delivery that failed its last attempt, with everything needed to replay it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeadLetter {
    pub delivery: Delivery,
    pub last_error: String,
    pub failed_at: DateTime<Utc>,
}

/// The queue of webhook deliveries (SQS in AWS).
#[async_trait]
pub trait DeliveryQueue: Send + Sync {
    /// Makes `delivery` available to the delivery worker after `delay`.
    async fn enqueue(&self, delivery: Delivery, delay: Duration) -> StoreResult<()>;
    /// Makes every one of `deliveries` available now, in as few requests as the queue allows.
    /// On an error, some of them may have been queued.
    async fn enqueue_now(&self, deliveries: Vec<Delivery>) -> StoreResult<()> {
        for delivery in deliveries {
            self.enqueue(delivery, Duration::ZERO).await?;
        }
        Ok(())
    }
    async fn dead_letter(&self, dead: DeadLetter) -> StoreResult<()>;
}

/// The stack's key for secrets at rest (docs/security.md, "Secrets at rest"): KMS on AWS, a
/// key of the process on the embedded backend. It only makes and unwraps data keys; the
/// envelope around each secret is `hosting_app::secrets`.
#[async_trait]
pub trait KeyVault: Send + Sync {
    /// A fresh data key, and the same wrapped by the stack's key. A failure is
    /// [`crate::error::StoreError::Backend`], naming no key material.
    async fn new_data_key(&self) -> StoreResult<crate::sealed::DataKey>;
    /// The data key `wrapped` holds; [`crate::error::StoreError::Corrupt`] when the stack's
    /// key refuses it (not its wrapping, or tampered), `Backend` when the key service failed.
    async fn unwrap_data_key(&self, wrapped: &[u8]) -> StoreResult<[u8; 32]>;
}
