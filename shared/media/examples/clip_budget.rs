//! The clip cutter's budgets (BENCHMARKS.md, "Clips"), on a generated 2-hour source (1080p-sized
//! samples: 6 Mbit/s of video at 30 frames a second, a keyframe every 2 s, 128 kbit/s of audio)
//! in each layout:
//! - bytes read for a 60 s clip: at most the source's index plus the clip's own media plus 1 MiB;
//! - peak memory of a 180 s cut (heap, counted by the allocator) under 64 MiB, whatever the
//!   source's length: a 10-minute source is cut as well, to compare;
//! - the time of a 60 s cut on one thread, written to a file.
//!
//!   cargo run --release -p hosting-media --example clip_budget

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use async_trait::async_trait;
use bytes::Bytes;
use hosting_media::synthetic::{Layout, Source, Spec};
use hosting_media::{ClipRange, ClipSink, cut};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Writes the clip to a file, as a store's upload would take it: nothing held.
struct FileSink(std::fs::File);

#[async_trait]
impl ClipSink for FileSink {
    async fn write(&mut self, bytes: Bytes) -> Result<(), String> {
        self.0.write_all(&bytes).map_err(|e| e.to_string())
    }
}

const MIB: f64 = 1024.0 * 1024.0;

async fn measure(source: &Source, label: &str, start: f64, seconds: f64) {
    let path = std::env::temp_dir().join("clip-budget.mp4");
    let mut sink = FileSink(std::fs::File::create(&path).expect("a temporary file"));
    let baseline = LIVE.load(Ordering::Relaxed);
    PEAK.store(baseline, Ordering::Relaxed);
    let began = Instant::now();
    let range = ClipRange {
        start_seconds: start,
        end_seconds: start + seconds,
    };
    let (clip, cost) = cut(source, source.len, range, &mut sink)
        .await
        .expect("cut");
    let elapsed = began.elapsed();
    let peak = PEAK.load(Ordering::Relaxed) - baseline;
    let slack = cost.media_bytes as f64 - clip.media_bytes as f64;
    println!(
        "{label:<34} {seconds:>4} s clip: {:>7.1} MiB written, read {:>3} requests, index {:>6.2} MiB, media {:>7.2} MiB ({:+.2} MiB beyond the clip's own), peak heap {:>5.1} MiB, {:>6.0} ms",
        clip.size as f64 / MIB,
        cost.requests,
        cost.index_bytes as f64 / MIB,
        cost.media_bytes as f64 / MIB,
        slack / MIB,
        peak as f64 / MIB,
        elapsed.as_secs_f64() * 1000.0,
    );
    std::fs::remove_file(&path).ok();
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    for (layout, name) in [
        (Layout::IndexLast, "index last (LiveKit's egress)"),
        (Layout::IndexFirst, "index first"),
        (Layout::Fragmented { mfra: true }, "fragmented, with mfra"),
        (Layout::Fragmented { mfra: false }, "fragmented, walked"),
    ] {
        for hours in [2.0, 1.0 / 6.0] {
            let seconds = (hours * 3600.0) as u32;
            let source = Source::build(Spec {
                seconds,
                fps: 30,
                keyframe_every: 60,
                video_bits_per_second: 6_000_000,
                layout,
            });
            let label = format!("{name}, {:.0} min source", hours * 60.0);
            runtime.block_on(async {
                let middle = seconds as f64 / 2.0 + 0.5;
                measure(&source, &label, middle, 60.0).await;
                measure(&source, &label, middle, 180.0).await;
            });
        }
    }
}
