//! Replays (docs/recordings.md): the recording as a read shows it, `expired` past the
//! retention and a fresh download URL for each file that is `ready`, presigned locally (no store
//! or network round trip); and the test streams' recordings, written when their end's event is
//! relayed, and only then `ready`.

use crate::app::App;
use hosting_domain::ports::StoreResult;
use hosting_domain::recording::{
    RecordingStatus, RecordingView, TEST_RECORDING_MP4, recording_key,
};
use hosting_domain::{EventType, Stream, StreamEvent};

/// `recording` of a stream's detail as read now.
pub async fn shown(app: &App, stream: &Stream) -> Option<RecordingView> {
    let recording = stream.egress.recording.as_ref()?;
    let now = app.clock.now();
    let config = &app.config.recordings;
    let mut view = RecordingView::new(recording, now, config.retention);
    for (index, key) in view.downloadable(recording) {
        match app.recordings.download_url(key, now, config.url_ttl).await {
            Ok(url) => view.set_url(index, &url),
            // Shown without its URL; the next read makes one.
            Err(err) => {
                tracing::error!(stream_id = %stream.id, error = %err, "download URL not made");
            }
        }
    }
    Some(view)
}

/// Before a test stream's end (`stream.ended`, `stream.error`) is relayed: its recording's
/// file, the short MP4 the project ships, written under the stream's own key, and only then the
/// recording `ready`, with its `stream.recording_ready` in the same step, so that no one reads
/// `ready` before the file can be downloaded. The relay of the end's event is the durable
/// record of the work: a failure retries the event, and a retry writes the same bytes again.
/// (A `stream.recording_ready` of a test stream has its file written again: harmless.)
pub async fn before_relay(app: &App, event: &StreamEvent) -> StoreResult<()> {
    let Some(stream_id) = event.stream_id else {
        return Ok(());
    };
    let ends = matches!(
        event.event_type,
        EventType::StreamEnded | EventType::StreamError
    );
    if !(ends || event.event_type == EventType::RecordingReady) || !is_test(&event.body) {
        return Ok(());
    }
    if ends && !waits_for_its_file(&event.body) {
        return Ok(());
    }
    let key = recording_key(&event.brand_id, stream_id, 1);
    app.recordings.put(&key, TEST_RECORDING_MP4).await?;
    if ends && let Some(stream) = app.streams().get_stream(stream_id).await? {
        let now = app.clock.now();
        super::destinations::change(app, &stream, None, None, |s| {
            s.with_test_recording_written(now)
        })
        .await?;
    }
    Ok(())
}

/// Whether an end's body shows a recording `processing` (`data.stream.recording.status`).
fn waits_for_its_file(body: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Body {
        data: Data,
    }
    #[derive(serde::Deserialize)]
    struct Data {
        stream: Detail,
    }
    #[derive(serde::Deserialize)]
    struct Detail {
        recording: Option<Recording>,
    }
    #[derive(serde::Deserialize)]
    struct Recording {
        status: RecordingStatus,
    }
    serde_json::from_str::<Body>(body).is_ok_and(|body| {
        body.data
            .stream
            .recording
            .is_some_and(|r| r.status == RecordingStatus::Processing)
    })
}

/// Whether an event's body is a test stream's (`"test":true` at its top level).
fn is_test(body: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        test: bool,
    }
    serde_json::from_str::<Head>(body).is_ok_and(|head| head.test)
}
