//! Clips cut from a real recording (the one test streams get) remuxed into every layout, and
//! read back with FFmpeg's libraries (scripts/media/check_clip.py, through PyAV): each starts on
//! a keyframe, both tracks presented from 0, `moov` before `mdat`, as long as asked to the frame,
//! every packet decoding.

use std::path::{Path, PathBuf};
use std::process::Command;

use hosting_media::synthetic::{InMemory, VecSink};
use hosting_media::{ClipRange, cut};

const RECORDING: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../domain/assets/test-recording.mp4"
);
const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/media");
/// The recording's frame rate and audio frame (AAC, 1024 samples at 22,050 Hz).
const FRAME: f64 = 0.1;
const AUDIO_FRAME: f64 = 1024.0 / 22_050.0;

fn python() -> String {
    std::env::var("MEDIA_PYTHON")
        .expect("MEDIA_PYTHON: a Python with PyAV (scripts/lib/venv.sh media)")
}

fn run(args: &[&Path]) -> String {
    let output = Command::new(python())
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

fn work_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("clip-sources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

#[tokio::test]
#[ignore = "needs MEDIA_PYTHON, a Python with PyAV: run by scripts/test.sh"]
async fn clips_of_every_layout_start_on_a_keyframe_at_0_and_last_as_asked() {
    let dir = work_dir();
    run(&[
        &Path::new(SCRIPTS).join("make-sources.py"),
        Path::new(RECORDING),
        &dir,
    ]);
    for layout in [
        "index-first",
        "index-last",
        "fragmented",
        "fragmented-no-mfra",
    ] {
        let file = InMemory(std::fs::read(dir.join(format!("{layout}.mp4"))).expect("the source"));
        for (start, end) in [(0.0, 5.0), (10.5, 20.25), (31.0, 61.5)] {
            let asked = ClipRange {
                start_seconds: start,
                end_seconds: end,
            };
            let mut sink = VecSink::default();
            let (clip, cost) = cut(&file, file.0.len() as u64, asked, &mut sink)
                .await
                .expect("cut");
            let path = dir.join(format!("{layout}-{start}.mp4"));
            std::fs::write(&path, &sink.0).expect("the clip");
            let seen: serde_json::Value =
                serde_json::from_str(&run(&[&Path::new(SCRIPTS).join("check_clip.py"), &path]))
                    .expect("JSON");
            let case = format!("{layout} {start}-{end}: {seen} {clip:?} {cost:?}");
            assert_eq!(
                seen["boxes"],
                serde_json::json!(["ftyp", "moov", "mdat"]),
                "{case}"
            );
            let (video, audio) = (&seen["video"], &seen["audio"]);
            assert_eq!(video["first_packet_keyframe"], true, "{case}");
            let number = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
            // Every frame of the span decodes. A frame presented after the end that a B-frame of
            // the span refers to is in the file too, decoded and not shown (the edit list ends
            // before it).
            let frames = (clip.duration_seconds / FRAME).round();
            assert_eq!(number(&video["decoded"]), frames, "{case}");
            assert!(
                number(&video["packets"]) >= frames && number(&video["packets"]) <= frames + 2.0,
                "{case}"
            );
            assert_eq!(audio["decoded"], audio["packets"], "{case}");
            assert!(
                number(&video["start"]).abs() < 1e-6,
                "video presented from 0: {case}"
            );
            assert!(
                number(&audio["start"]).abs() <= AUDIO_FRAME,
                "audio presented from 0: {case}"
            );
            // From the keyframe at or before the start (one every 2 s) through the frame
            // covering the end.
            // The fragmented sources have no edit list: their first frame is presented at 0.2 s
            // (two B-frames' delay), and a clip from 0 starts there.
            let keyframe = clip.source_start_seconds;
            assert!(
                keyframe <= start.max(0.2) + 1e-9 && start - keyframe < 2.0 + FRAME,
                "{case}"
            );
            assert!(
                (clip.duration_seconds - (end - keyframe)).abs() <= FRAME + 1e-6,
                "{case}"
            );
            assert!(
                (number(&video["duration"]) - clip.duration_seconds).abs() <= FRAME + 1e-6,
                "{case}"
            );
            assert!(
                (number(&audio["duration"]) - clip.duration_seconds).abs() <= FRAME,
                "{case}"
            );
            assert!(cost.media_bytes <= clip.media_bytes + 1024 * 1024, "{case}");
        }
    }
    // A range that ends before the fragmented source's first frame (0.2 s) has nothing to cut.
    let file = InMemory(std::fs::read(dir.join("fragmented.mp4")).expect("the source"));
    let asked = ClipRange {
        start_seconds: 0.0,
        end_seconds: 0.1,
    };
    let outcome = cut(&file, file.0.len() as u64, asked, &mut VecSink::default()).await;
    assert_eq!(outcome.unwrap_err(), hosting_media::CutError::OutOfRange);
    std::fs::remove_dir_all(&dir).ok();
}
