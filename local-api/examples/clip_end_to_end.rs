//! A clip cut and stored end to end on the embedded backend (BENCHMARKS.md, "Clips"): a
//! generated 2-hour recording (6 Mbit/s of 1080p-sized video at 30 frames a second, a keyframe
//! every 2 s, 128 kbit/s of audio, its index last as LiveKit's egress writes it) is written to
//! the local server's recordings folder, then a 60 s clip of its middle is cut by the clips
//! service (`hosting_app::service::clips::cut`: the claim, the ranged reads of the folder, the
//! clip written and linked into place, the clip settled `ready`), on one thread of a
//! current-thread runtime, as a function instance or the local server's cutting loop runs it.
//! Each of `N` clips is a fresh one of the same range.
//!
//!   cargo run --release -p local-api --example clip_end_to_end [N]

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use hosting_app::service::clips::{CutOutcome, cut};
use hosting_domain::clip::{Clip, ClipSource, ClipStatus, new_clip_id};
use hosting_domain::clock::SystemClock;
use hosting_domain::ports::ClipJob;
use hosting_media::synthetic::{Layout, Source, Spec};
use hosting_runtime::Runtime;
use hosting_support::config::{Config, StoreKind};

const SECONDS: u32 = 2 * 3600;
const CHUNK: u64 = 8 << 20;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let dir = std::env::temp_dir().join(format!("clip-e2e-{}", uuid::Uuid::new_v4().simple()));
    let config = Config::from_lookup(StoreKind::Embedded, |name| match name {
        "RECORDINGS_DIR" => Some(dir.display().to_string()),
        _ => None,
    })
    .expect("a configuration");
    let stream_id = uuid::Uuid::new_v4();
    let source_key = format!("recordings/brand_bench/{stream_id}.mp4");
    let written = Instant::now();
    let source = Source::build(Spec {
        seconds: SECONDS,
        fps: 30,
        keyframe_every: 60,
        video_bits_per_second: 6_000_000,
        layout: Layout::IndexLast,
    });
    let path = dir.join(&source_key);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("the folder");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("the source"));
    let mut at = 0;
    while at < source.len {
        let end = (at + CHUNK).min(source.len);
        file.write_all(&source.bytes(at..end)).expect("written");
        at = end;
    }
    file.flush().expect("written");
    drop(file);
    println!(
        "source: {:.0} MiB, written in {:.1} s",
        source.len as f64 / (1 << 20) as f64,
        written.elapsed().as_secs_f64()
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let app = Runtime::embedded(config, Arc::new(SystemClock), None).app;
        let mut times = Vec::new();
        for _ in 0..n {
            let now = Utc::now();
            let clip = Clip {
                id: new_clip_id(),
                stream_id,
                brand_id: "brand_bench".into(),
                test: false,
                title: None,
                start_seconds: 3600.5,
                end_seconds: 3660.5,
                status: ClipStatus::Pending,
                source: ClipSource {
                    key: source_key.clone(),
                    offset_seconds: 0.0,
                    ready_at: now,
                },
                duration_seconds: None,
                size_bytes: None,
                error: None,
                created_at: now,
                attempts: 0,
                due_at: Some(now),
                version: 0,
            };
            app.clips()
                .create_clip(&clip, 50, None)
                .await
                .expect("created");
            let job = ClipJob {
                stream_id,
                clip_id: clip.id.clone(),
            };
            let began = Instant::now();
            let outcome = cut(&app, &job).await.expect("cut");
            let elapsed = began.elapsed();
            assert_eq!(outcome, CutOutcome::Ready);
            let made = app
                .clips()
                .get_clip(stream_id, &clip.id)
                .await
                .expect("read")
                .expect("there");
            println!(
                "60 s clip: {:.1} MiB, {:.3} s long, cut and stored in {:.0} ms",
                made.size_bytes.unwrap_or(0) as f64 / (1 << 20) as f64,
                made.duration_seconds.unwrap_or(0.0),
                elapsed.as_secs_f64() * 1000.0
            );
            times.push(elapsed.as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{n} clips: median {:.0} ms, slowest {:.0} ms",
            times[times.len() / 2] * 1000.0,
            times[times.len() - 1] * 1000.0
        );
    });
    std::fs::remove_dir_all(&dir).ok();
}
