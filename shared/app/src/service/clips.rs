//! Clips (docs/clips.md): asked for with `POST /streams/{id}/clips`, cut in the background from
//! the stream's recording without re-encoding (`hosting_media`), kept beside it in the
//! recordings storage and handed out like it.
//!
//! The clip's record drives its cut: it is created owed one (in the due index), and a cut
//! claims it (`processing`, due again when its lease ends), then settles it `ready` or `failed`
//! with its event in the same write. A cut lost with its process is taken again once its lease
//! has passed; a read or write that fails is tried again later, [`CLIP_ATTEMPTS`] times in all.
//! The object is written at most once (`RecordingStorage::create`), so a cut made twice leaves
//! the first one's bytes. The queue only says which clip to cut: a job lost is sent again by
//! the sweep.

use std::ops::Range;
use std::time::Duration;

use bytes::Bytes;
use chrono::TimeDelta;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::idempotency::{self, Answer, Begin, Held};
use crate::app::App;
use hosting_domain::clip::{
    CLIP_ATTEMPTS, Clip, ClipList, ClipRequest, ClipStatus, ClipView, MAX_CLIPS_PER_STREAM,
    SOURCE_GONE, sort_oldest_first, source_of,
};
use hosting_domain::error::{ApiError, ApiResult, StoreError};
use hosting_domain::idempotency::{Endpoint, StoredAnswer};
use hosting_domain::ports::{
    ClipJob, CreateClipOutcome, ObjectWriter, RecordingStorage, StoreResult, Written,
};
use hosting_domain::{API_PREFIX, Caller, StreamEvent};

/// Clips whose work is due, taken per sweep.
const SWEEP_BATCH: usize = 100;

/// `POST /streams/{id}/clips`: checks in the documented order, then the clip, owed its cut.
pub async fn create(
    app: &App,
    caller: &Caller,
    stream_id: Option<Uuid>,
    body: &Map<String, Value>,
    key: Option<&[u8]>,
) -> ApiResult<Answer> {
    let request = ClipRequest::parse(body, app.config.clip_max_seconds)?;
    let key = idempotency::parse_key(key)?;
    let stream = match stream_id {
        Some(id) => super::streams::find_own(app, caller, id).await,
        None => None,
    }
    .ok_or(ApiError::NotFound)?;
    let recording = stream.egress.recording.as_ref().ok_or(ApiError::NotFound)?;
    let now = app.clock.now();
    let source = source_of(
        recording,
        request.start_seconds,
        request.end_seconds,
        now,
        app.config.recordings.retention,
    )?;
    // The stream in the path is part of the request: the same key and body for another stream
    // is a mismatch, as another body is (docs/idempotency.md).
    let mut scoped = body.clone();
    scoped.insert("stream_id".into(), Value::String(stream.id.to_string()));
    let held = match idempotency::begin(app, caller, Endpoint::CutClip, key, &scoped).await? {
        Begin::Run(held) => held,
        Begin::Replay(answer) => return Ok(answer),
        // The answer is bound with the clip: a bound key always has one.
        Begin::Rebuild { .. } => return Err(ApiError::IdempotencyKeyInUse),
    };
    let clip = Clip::new(request, &stream, source, now);
    let outcome = store_new(app, &clip, held.as_ref()).await;
    idempotency::finish(app, held, &outcome).await;
    if outcome.is_ok() {
        queue_cut(app, &clip, Duration::ZERO).await;
    }
    outcome
}

async fn store_new(app: &App, clip: &Clip, held: Option<&Held>) -> ApiResult<Answer> {
    let view = ClipView::new(clip, clip.created_at, app.config.recordings.retention);
    let answer = StoredAnswer {
        status: 202,
        body: serde_json::to_string(&view).unwrap_or_default(),
        location: Some(format!(
            "{API_PREFIX}/streams/{}/clips/{}",
            clip.stream_id, clip.id
        )),
        sealed_body: None,
    };
    let binding = held.map(|held| held.binding(app, Some(answer.clone())));
    match app
        .clips()
        .create_clip(clip, MAX_CLIPS_PER_STREAM, binding.as_ref())
        .await?
    {
        CreateClipOutcome::Created => Ok(Answer::fresh(answer)),
        CreateClipOutcome::Limit => Err(ApiError::InvalidFields(format!(
            "A stream has at most {MAX_CLIPS_PER_STREAM} clips."
        ))),
        CreateClipOutcome::KeyLost => Err(ApiError::IdempotencyKeyInUse),
    }
}

/// Hands the clip's cut to the queue after `delay`; a failure leaves it to the sweep.
async fn queue_cut(app: &App, clip: &Clip, delay: Duration) {
    let job = ClipJob {
        stream_id: clip.stream_id,
        clip_id: clip.id.clone(),
    };
    if let Err(err) = app.clip_queue.enqueue_cut(job, delay).await {
        tracing::warn!(clip_id = %clip.id, error = %err, "cut not queued; the sweep queues it");
    }
}

/// `GET /streams/{id}/clips`: every clip of the caller's stream, oldest first.
pub async fn list(app: &App, caller: &Caller, stream_id: Option<Uuid>) -> ApiResult<ClipList> {
    let stream_id = own_stream(app, caller, stream_id).await?;
    let mut clips = app.clips().stream_clips(stream_id).await?;
    sort_oldest_first(&mut clips);
    let mut shown = Vec::with_capacity(clips.len());
    for clip in &clips {
        shown.push(view(app, clip).await);
    }
    Ok(ClipList { clips: shown })
}

/// `GET /streams/{id}/clips/{clip_id}`.
pub async fn get(
    app: &App,
    caller: &Caller,
    stream_id: Option<Uuid>,
    clip_id: &str,
) -> ApiResult<ClipView> {
    let clip = find(app, caller, stream_id, clip_id).await?;
    Ok(view(app, &clip).await)
}

/// `DELETE /streams/{id}/clips/{clip_id}`: the clip `deleted`, its object removed (now, or once
/// a cut that holds it has ended). A deleted clip stays listed; deleting it again answers it.
pub async fn delete(
    app: &App,
    caller: &Caller,
    stream_id: Option<Uuid>,
    clip_id: &str,
) -> ApiResult<ClipView> {
    let mut clip = find(app, caller, stream_id, clip_id).await?;
    // A write conditional on the version read; a cut settling meanwhile is read again.
    for _ in 0..3 {
        if clip.status == ClipStatus::Deleted {
            return Ok(view(app, &clip).await);
        }
        let deleted = clip.deleted(app.clock.now());
        if app.clips().replace_clip(&clip, &deleted, None).await? {
            remove_object_when_due(app, &deleted).await;
            return Ok(view(app, &deleted).await);
        }
        clip = app
            .clips()
            .get_clip(clip.stream_id, &clip.id)
            .await?
            .ok_or(ApiError::NotFound)?;
    }
    Err(ApiError::Db(StoreError::Backend(
        "the clip kept changing while it was deleted".into(),
    )))
}

async fn own_stream(app: &App, caller: &Caller, stream_id: Option<Uuid>) -> ApiResult<Uuid> {
    let id = stream_id.ok_or(ApiError::NotFound)?;
    super::streams::find_own(app, caller, id)
        .await
        .map(|stream| stream.id)
        .ok_or(ApiError::NotFound)
}

async fn find(
    app: &App,
    caller: &Caller,
    stream_id: Option<Uuid>,
    clip_id: &str,
) -> ApiResult<Clip> {
    if !hosting_domain::clip::is_clip_id(clip_id) {
        return Err(ApiError::NotFound);
    }
    let stream_id = own_stream(app, caller, stream_id).await?;
    app.clips()
        .get_clip(stream_id, clip_id)
        .await?
        .ok_or(ApiError::NotFound)
}

/// The clip as read now: `expired` past its recording's retention, and a fresh download URL
/// when `ready`.
async fn view(app: &App, clip: &Clip) -> ClipView {
    let now = app.clock.now();
    let config = &app.config.recordings;
    let mut view = ClipView::new(clip, now, config.retention);
    if view.status == ClipStatus::Ready {
        match app
            .recordings
            .download_url(&clip.key(), now, config.url_ttl)
            .await
        {
            Ok(url) => view.set_url(&url),
            // Shown without its URL; the next read makes one.
            Err(err) => tracing::error!(clip_id = %clip.id, error = %err, "download URL not made"),
        }
    }
    view
}

/// What one cut job did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutOutcome {
    /// Nothing to do: cut already, deleted, held by another cut, or not due.
    Nothing,
    Ready,
    Failed,
    /// A read or the write failed: tried again later.
    Retrying,
}

/// Runs the cut `job` points at, if its clip is owed one and due (the clips function, and the
/// local server's loop). `Err` only when the store failed before anything was decided: the
/// job is then worth receiving again.
pub async fn cut(app: &App, job: &ClipJob) -> StoreResult<CutOutcome> {
    let Some(clip) = app.clips().get_clip(job.stream_id, &job.clip_id).await? else {
        return Ok(CutOutcome::Nothing);
    };
    let now = app.clock.now();
    // A deleted clip's object is the sweep's (the cut's role may not delete).
    if !clip.cut_due(now) {
        return Ok(CutOutcome::Nothing);
    }
    if clip.attempts >= CLIP_ATTEMPTS {
        let reason = format!(
            "the recording could not be read, or the clip stored, in {CLIP_ATTEMPTS} attempts"
        );
        return settle(app, &clip, clip.failed(&reason)).await;
    }
    let claimed = clip.claimed(now, app.config.clip_lease);
    if !app.clips().replace_clip(&clip, &claimed, None).await? {
        return Ok(CutOutcome::Nothing);
    }
    match cut_and_store(app, &claimed).await {
        Ok(made) => {
            settle(
                app,
                &claimed,
                claimed.ready(made.size, made.duration_seconds),
            )
            .await
        }
        Err(err) if err.is_permanent() => {
            settle(app, &claimed, claimed.failed(&err.to_string())).await
        }
        Err(err) => {
            crate::metrics::count(crate::metrics::Metric::ClipCutRetries);
            let delay = retry_delay(claimed.attempts);
            tracing::warn!(clip_id = %claimed.id, attempt = claimed.attempts, error = %err, "cut failed; tried again");
            let mut later = claimed.next();
            later.due_at = Some(app.clock.now() + TimeDelta::from_std(delay).unwrap_or_default());
            if app.clips().replace_clip(&claimed, &later, None).await? {
                queue_cut(app, &later, delay).await;
            }
            Ok(CutOutcome::Retrying)
        }
    }
}

/// 10 s after the first attempt, doubling, at most 5 minutes: a storage outage of minutes is
/// waited out.
fn retry_delay(attempts: u32) -> Duration {
    Duration::from_secs(5u64.saturating_mul(1 << attempts.min(6)).min(300))
}

/// Writes `next` (`ready` or `failed`) over `claimed` with its event, unless the clip was
/// deleted meanwhile.
async fn settle(app: &App, claimed: &Clip, next: Clip) -> StoreResult<CutOutcome> {
    let now = app.clock.now();
    let stream = app.streams().get_stream(claimed.stream_id).await?;
    let event = stream.as_ref().map(|stream| {
        StreamEvent::clip(
            stream,
            ClipView::new(&next, now, app.config.recordings.retention),
            now,
        )
    });
    if app
        .clips()
        .replace_clip(claimed, &next, event.as_ref())
        .await?
    {
        return Ok(if next.status == ClipStatus::Ready {
            crate::metrics::count(crate::metrics::Metric::ClipsReady);
            CutOutcome::Ready
        } else {
            crate::metrics::count(crate::metrics::Metric::ClipsFailed);
            CutOutcome::Failed
        });
    }
    // Deleted while it was cut: what the cut wrote is removed by the sweep once the cut's
    // lease has ended (the cut's role may not delete).
    Ok(CutOutcome::Nothing)
}

/// Removes a deleted clip's object and settles its record, when no cut can still write it.
async fn remove_object_when_due(app: &App, clip: &Clip) {
    if clip.due_at.is_some_and(|due| due <= app.clock.now())
        && let Err(err) = remove_object(app, clip).await
    {
        tracing::warn!(clip_id = %clip.id, error = %err, "clip object not removed; the sweep removes it");
    }
}

async fn remove_object(app: &App, clip: &Clip) -> StoreResult<()> {
    app.recordings.delete(&clip.key()).await?;
    let mut settled = clip.next();
    settled.due_at = None;
    app.clips().replace_clip(clip, &settled, None).await?;
    Ok(())
}

/// A clip as stored: its size and its real length.
struct Made {
    size: u64,
    duration_seconds: f64,
}

/// Cuts the clip from its source file and writes it under its key, at most once.
async fn cut_and_store(app: &App, clip: &Clip) -> Result<Made, hosting_media::CutError> {
    use hosting_media::CutError;
    let storage = &*app.recordings;
    let source_len = storage
        .size_of(&clip.source.key)
        .await
        .map_err(|err| CutError::Read(err.to_string()))?
        .ok_or_else(|| CutError::Unreadable(SOURCE_GONE.into()))?;
    let (start, end) = clip.range_in_source();
    let source = StoredSource {
        storage,
        key: &clip.source.key,
    };
    let mut sink = StoredClip {
        storage,
        key: clip.key(),
        writer: None,
    };
    let range = hosting_media::ClipRange {
        start_seconds: start,
        end_seconds: end,
    };
    let (made, cost) = hosting_media::cut(&source, source_len, range, &mut sink).await?;
    let written = match sink.writer.take() {
        Some(writer) => writer
            .finish()
            .await
            .map_err(|err| CutError::Write(err.to_string()))?,
        None => return Err(CutError::Write("the clip was never begun".into())),
    };
    tracing::info!(
        clip_id = %clip.id,
        size = made.size,
        read_requests = cost.requests,
        index_bytes = cost.index_bytes,
        media_bytes = cost.media_bytes,
        already_there = written == Written::AlreadyThere,
        "clip cut"
    );
    Ok(Made {
        size: made.size,
        duration_seconds: made.duration_seconds,
    })
}

/// The source file, read with ranged reads of the storage.
struct StoredSource<'a> {
    storage: &'a dyn RecordingStorage,
    key: &'a str,
}

#[async_trait::async_trait]
impl hosting_media::RangeSource for StoredSource<'_> {
    async fn read(&self, range: Range<u64>) -> Result<Bytes, String> {
        self.storage
            .read_range(self.key, range)
            .await
            .map(Bytes::from)
            .map_err(|err| err.to_string())
    }
}

/// The clip's object, written as the cut hands its bytes over.
struct StoredClip<'a> {
    storage: &'a dyn RecordingStorage,
    key: String,
    writer: Option<Box<dyn ObjectWriter>>,
}

#[async_trait::async_trait]
impl hosting_media::ClipSink for StoredClip<'_> {
    async fn begin(&mut self, size: u64) -> Result<(), String> {
        let writer = self
            .storage
            .create(&self.key, size)
            .await
            .map_err(|err| err.to_string())?;
        self.writer = Some(writer);
        Ok(())
    }

    async fn write(&mut self, bytes: Bytes) -> Result<(), String> {
        match &mut self.writer {
            Some(writer) => writer.write(&bytes).await.map_err(|err| err.to_string()),
            None => Err("written before it was begun".into()),
        }
    }
}

/// The clips whose work is due (a cut whose job was lost or whose lease ran out, a retry, a
/// deleted clip's object): each cut queued again, each object removed. Run with the deadline
/// sweep; how many it acted on.
pub async fn sweep(app: &App) -> StoreResult<usize> {
    let now = app.clock.now();
    let due = app.clips().due_clips(now, SWEEP_BATCH).await?;
    let mut acted = 0;
    for clip in due {
        acted += 1;
        if clip.status == ClipStatus::Deleted {
            if let Err(err) = remove_object(app, &clip).await {
                tracing::warn!(clip_id = %clip.id, error = %err, "clip object not removed; tried again");
            }
        } else {
            queue_cut(app, &clip, Duration::ZERO).await;
        }
    }
    Ok(acted)
}
