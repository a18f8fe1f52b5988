//! Replays (docs/recordings.md): the recording as a read shows it, `expired` past the
//! retention and a fresh download URL for each file that is `ready`, presigned locally (no store
//! or network round trip); and the test streams' recordings, written before the event that
//! announces them is relayed.

use crate::app::App;
use hosting_domain::ports::StoreResult;
use hosting_domain::recording::{RecordingView, TEST_RECORDING_MP4, recording_key};
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

/// Before a test stream's `stream.recording_ready` is relayed: its file, the short MP4 the
/// project ships, written under the stream's own key, so the URL a receiver reads next
/// downloads it. Writing it again (a relay retried) writes the same bytes.
pub async fn before_relay(app: &App, event: &StreamEvent) -> StoreResult<()> {
    let Some(stream_id) = event.stream_id else {
        return Ok(());
    };
    if event.event_type != EventType::RecordingReady || !is_test(&event.body) {
        return Ok(());
    }
    let key = recording_key(&event.brand_id, stream_id, 1);
    app.recordings.put(&key, TEST_RECORDING_MP4).await
}

/// Whether an event's body is a test stream's (`"test":true` at its top level).
fn is_test(body: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        test: bool,
    }
    serde_json::from_str::<Head>(body).is_ok_and(|head| head.test)
}
