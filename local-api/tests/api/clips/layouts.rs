//! Clips of recordings in each layout an MP4 recorder writes, through the API: the test
//! recording remuxed (scripts/media/make-sources.py) with its index first, its index last (as
//! LiveKit's egress writes it) and fragmented, put in place of a test stream's recording, cut
//! by the clips service and read back with FFmpeg's libraries.

use std::path::Path;

use hosting_app::service::clips::CutOutcome;

use super::*;

/// The recording's audio frame (AAC, 1024 samples at 22,050 Hz).
const AUDIO_FRAME: f64 = 1024.0 / 22_050.0;

#[tokio::test]
#[ignore = "needs MEDIA_PYTHON, a Python with PyAV: run by scripts/test.sh"]
async fn a_recording_of_each_layout_is_cut_through_the_api_and_decodes() {
    let api = TestApp::new().await;
    let dir = std::env::temp_dir().join(format!("clip-layouts-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    media_python(&[
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scripts/media/make-sources.py"
        )),
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/domain/assets/test-recording.mp4"
        )),
        &dir,
    ]);
    for layout in ["index-first", "index-last", "fragmented"] {
        let id = ready_recording(&api).await;
        let source: &'static [u8] = Box::leak(
            std::fs::read(dir.join(format!("{layout}.mp4")))
                .unwrap()
                .into_boxed_slice(),
        );
        api.runtime
            .app
            .recordings
            .put(&format!("recordings/{BRAND}/{id}.mp4"), source)
            .await
            .unwrap();
        let clip_id = ask_ok(&api, &id, 21.3, 33.0).await;
        assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Ready], "{layout}");
        let shown = clip(&api, &id, &clip_id).await;
        let (status, bytes) =
            crate::recordings::download(&api, shown["url"].as_str().unwrap()).await;
        assert_eq!(status, 200, "{layout}");
        let path = dir.join(format!("clip-{layout}.mp4"));
        std::fs::write(&path, &bytes).unwrap();
        let seen: Value = serde_json::from_str(&media_python(&[
            Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../scripts/media/check_clip.py"
            )),
            &path,
        ]))
        .unwrap();
        let case = format!("{layout}: {seen} {shown}");
        assert_eq!(seen["boxes"], json!(["ftyp", "moov", "mdat"]), "{case}");
        assert_eq!(seen["video"]["first_packet_keyframe"], true, "{case}");
        assert!(
            seen["video"]["start"].as_f64().unwrap().abs() < 1e-6,
            "{case}"
        );
        assert!(
            seen["audio"]["start"].as_f64().unwrap().abs() <= AUDIO_FRAME,
            "{case}"
        );
        for track in ["video", "audio"] {
            assert!(seen[track]["decoded"].as_u64().unwrap() > 0, "{case}");
        }
        // From the keyframe at 20 s through the frame covering 33 s (10 frames a second).
        let length = seen["video"]["duration"].as_f64().unwrap();
        assert!((length - 13.0).abs() <= 0.1 + 1e-6, "{case}");
        let shown_length = shown["duration_seconds"].as_f64().unwrap();
        assert!((length - shown_length).abs() <= 0.1 + 1e-3, "{case}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
