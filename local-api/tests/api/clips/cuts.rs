//! The cut: a clip of the test recording, cut for real and downloaded; read by FFmpeg's
//! libraries; its one event; deleted with its file; failed on a recording that is no MP4;
//! expired with the recording; and a cut lost with its process taken again, once.

use hosting_app::service::clips::CutOutcome;

use super::*;

/// Downloads a ready clip's URL: its bytes.
async fn downloaded(api: &TestApp, shown: &Value) -> Vec<u8> {
    let (status, bytes) = crate::recordings::download(api, shown["url"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{shown}");
    bytes
}

/// The top-level box types of an MP4, in order.
fn boxes(bytes: &[u8]) -> Vec<String> {
    let mut kinds = Vec::new();
    let mut offset = 0usize;
    while offset + 8 <= bytes.len() {
        let size = u32::from_be_bytes(bytes[offset..offset + 4].try_into().unwrap()) as usize;
        kinds.push(String::from_utf8_lossy(&bytes[offset + 4..offset + 8]).into_owned());
        if size < 8 {
            break;
        }
        offset += size;
    }
    kinds
}

#[tokio::test]
async fn a_clip_is_cut_from_the_test_recording_and_downloads() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    // The test recording has a keyframe every 2 s: a clip asked from 11 s starts at 10 s.
    let clip_id = ask_ok(&api, &id, 11.0, 20.0).await;
    assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Ready]);
    let shown = clip(&api, &id, &clip_id).await;
    assert_eq!(shown["status"], "ready", "{shown}");
    let duration = shown["duration_seconds"].as_f64().unwrap();
    assert!(
        (10.0..10.2).contains(&duration),
        "from the keyframe at 10 s: {duration}"
    );
    assert!(shown["url_expires_at"].is_string());
    let bytes = downloaded(&api, &shown).await;
    assert_eq!(bytes.len() as u64, shown["size_bytes"].as_u64().unwrap());
    assert_eq!(boxes(&bytes), ["ftyp", "moov", "mdat"], "moov before mdat");
    assert!(
        bytes.len() < hosting_domain::recording::TEST_RECORDING_MP4.len() / 3,
        "a part of the recording, not all of it"
    );
    // Its one event, without a URL; read again, nothing more happens.
    assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Nothing]);
    let events = clip_events(&api, &id).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event["type"], "stream.clip_ready");
    assert_eq!(event["test"], true);
    assert_eq!(event["data"]["clip"]["clip_id"], clip_id.as_str());
    assert_eq!(event["data"]["clip"]["status"], "ready");
    assert!(event["data"]["clip"]["url"].is_null());
    assert!(event["data"]["clip"]["url_expires_at"].is_null());
    assert_eq!(event["data"]["stream"]["stream_id"], id.as_str());
    assert!(event["data"].get("destination").is_none());
    // The stream's detail is unchanged: clips are read on their own.
    let detail = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert!(detail.body.get("clips").is_none());
}

#[tokio::test]
#[ignore = "needs MEDIA_PYTHON, a Python with PyAV: run by scripts/test.sh"]
async fn a_clip_decodes_from_a_keyframe_with_both_tracks_from_0() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let clip_id = ask_ok(&api, &id, 21.3, 33.0).await;
    run_cuts(&api, &id).await;
    let shown = clip(&api, &id, &clip_id).await;
    let bytes = downloaded(&api, &shown).await;
    let dir = std::env::temp_dir().join(format!("clip-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("clip.mp4");
    std::fs::write(&path, &bytes).unwrap();
    let seen: Value = serde_json::from_str(&media_python(&[
        std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scripts/media/check_clip.py"
        )),
        &path,
    ]))
    .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(seen["boxes"], json!(["ftyp", "moov", "mdat"]), "{seen}");
    for track in ["video", "audio"] {
        assert_eq!(seen[track]["start"], 0.0, "{track} from 0: {seen}");
        assert!(seen[track]["decoded"].as_u64().unwrap() > 0, "{seen}");
    }
    assert_eq!(seen["video"]["first_packet_keyframe"], true, "{seen}");
    // From the keyframe at 20 s through the frame covering 33 s, within a frame (30 fps).
    let length = seen["video"]["duration"].as_f64().unwrap();
    let shown_length = shown["duration_seconds"].as_f64().unwrap();
    assert!((length - 13.0).abs() <= 0.1, "{seen}");
    assert!(
        (length - shown_length).abs() <= 1.0 / 30.0 + 0.001,
        "{seen} {shown}"
    );
}

#[tokio::test]
async fn a_deleted_clip_is_gone_with_its_file() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let clip_id = ask_ok(&api, &id, 0.0, 4.0).await;
    run_cuts(&api, &id).await;
    let key = clip_key(&id, &clip_id);
    let storage = &api.runtime.app.recordings;
    assert!(storage.size_of(&key).await.unwrap().is_some());
    let path = format!("/streams/{id}/clips/{clip_id}");
    let r = api.delete(&path, &Keys::test_a()).await;
    r.assert_status(200);
    assert_eq!(r.body["status"], "deleted");
    assert!(r.body["url"].is_null());
    assert_eq!(
        storage.size_of(&key).await.unwrap(),
        None,
        "its file removed"
    );
    assert_eq!(clip(&api, &id, &clip_id).await["status"], "deleted");
    // Deleting it again answers it again.
    let again = api.delete(&path, &Keys::test_a()).await;
    again.assert_status(200);
    assert_eq!(again.body["status"], "deleted");
    // A clip deleted before its cut is never cut, and never evented.
    let early = ask_ok(&api, &id, 4.0, 8.0).await;
    api.delete(&format!("/streams/{id}/clips/{early}"), &Keys::test_a())
        .await
        .assert_status(200);
    assert!(!run_cuts(&api, &id).await.contains(&CutOutcome::Ready));
    assert_eq!(storage.size_of(&clip_key(&id, &early)).await.unwrap(), None);
    assert_eq!(
        clip_events(&api, &id).await.len(),
        1,
        "the first clip's only"
    );
}

#[tokio::test]
async fn a_recording_that_is_not_an_mp4_fails_its_clip_with_a_reason() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let source = format!("recordings/{BRAND}/{id}.mp4");
    api.runtime
        .app
        .recordings
        .put(&source, b"not an mp4 at all, whatever its name")
        .await
        .unwrap();
    let clip_id = ask_ok(&api, &id, 0.0, 4.0).await;
    assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Failed]);
    let shown = clip(&api, &id, &clip_id).await;
    assert_eq!(shown["status"], "failed");
    assert!(shown["url"].is_null());
    let error = shown["error"].as_str().unwrap();
    assert!(error.contains("not an MP4"), "{error}");
    let events = clip_events(&api, &id).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "stream.clip_failed");
    assert_eq!(events[0]["data"]["clip"]["error"], error);
}

#[tokio::test]
async fn clips_expire_with_their_recording() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let clip_id = ask_ok(&api, &id, 30.0, 40.0).await;
    run_cuts(&api, &id).await;
    assert_eq!(clip(&api, &id, &clip_id).await["status"], "ready");
    api.advance(Duration::days(30));
    let shown = clip(&api, &id, &clip_id).await;
    assert_eq!(shown["status"], "expired", "{shown}");
    assert!(shown["url"].is_null());
    assert!(shown["size_bytes"].is_u64(), "what it was is still shown");
    let listed = api
        .get(&format!("/streams/{id}/clips"), &Keys::test_a())
        .await;
    assert_eq!(listed.body["clips"][0]["status"], "expired");
    ask(&api, &id, json!({"start_seconds": 0, "end_seconds": 5}))
        .await
        .assert_error(409, "recording_not_ready");
}

#[tokio::test]
async fn a_cut_lost_with_its_process_is_taken_again_once_its_lease_ends() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let clip_id = ask_ok(&api, &id, 5.0, 9.0).await;
    // A cut that claimed the clip, then died: the clip is `processing`, held by its lease.
    let app = &api.runtime.app;
    let stream_id = uuid::Uuid::parse_str(&id).unwrap();
    let read = app
        .clips()
        .get_clip(stream_id, &clip_id)
        .await
        .unwrap()
        .unwrap();
    let claimed = read.claimed(api.now(), hosting_domain::clip::DEFAULT_CLIP_LEASE);
    assert!(
        app.clips()
            .replace_clip(&read, &claimed, None)
            .await
            .unwrap()
    );
    assert_eq!(clip(&api, &id, &clip_id).await["status"], "processing");
    // Its job comes again (SQS's redelivery): held, nothing done; the sweep leaves it too.
    assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Nothing]);
    assert_eq!(hosting_app::service::clips::sweep(app).await.unwrap(), 0);
    // Once the lease has ended, the sweep queues it again and the cut makes it, once.
    api.advance(Duration::seconds(301));
    assert_eq!(hosting_app::service::clips::sweep(app).await.unwrap(), 1);
    assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Ready]);
    assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Nothing]);
    assert_eq!(hosting_app::service::clips::sweep(app).await.unwrap(), 0);
    let shown = clip(&api, &id, &clip_id).await;
    assert_eq!(shown["status"], "ready");
    assert_eq!(clip_events(&api, &id).await.len(), 1, "evented once");
}
