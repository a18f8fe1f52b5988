use std::ops::Range;

use async_trait::async_trait;
use bytes::Bytes;
use shiguredo_mp4::aux::SampleTableAccessor;
use shiguredo_mp4::boxes::{HdlrBox, MoovBox};
use shiguredo_mp4::{BoxHeader, BoxType, Decode};

use crate::copy::{READ_WINDOW, Read, windows};
use crate::synthetic::{
    AUDIO_TRACK, InMemory, Layout, Source, Spec, VIDEO_TRACK, VecSink, sample_name,
};
use crate::{ClipRange, CutError, RangeSource, cut};

const SHIPPED: &[u8] = include_bytes!("../../domain/assets/test-recording.mp4");

struct Failing;

#[async_trait]
impl RangeSource for Failing {
    async fn read(&self, _: Range<u64>) -> Result<Bytes, String> {
        Err("503 Slow Down".into())
    }
}

fn range(start_seconds: f64, end_seconds: f64) -> ClipRange {
    ClipRange {
        start_seconds,
        end_seconds,
    }
}

/// The top-level boxes of a file, in order.
fn top_level(file: &[u8]) -> Vec<([u8; 4], usize, usize)> {
    let mut boxes = Vec::new();
    let mut offset = 0;
    while offset < file.len() {
        let (header, _) = BoxHeader::decode(&file[offset..]).expect("a box header");
        let BoxType::Normal(kind) = header.box_type else {
            panic!("a uuid box")
        };
        let size = header.box_size.get() as usize;
        boxes.push((kind, offset, size));
        offset += size;
    }
    boxes
}

/// A clip's sample as read back: its bytes, whether it is sync, its duration.
type ReadSample = (Bytes, bool, u32);

/// A clip's track as read back: its handler and its samples.
type ReadTrack = ([u8; 4], Vec<ReadSample>);

/// A clip's moov and its tracks.
fn read_clip(file: &[u8]) -> (MoovBox, Vec<ReadTrack>) {
    let boxes = top_level(file);
    let kinds: Vec<_> = boxes.iter().map(|b| &b.0).collect();
    assert_eq!(
        kinds,
        [b"ftyp", b"moov", b"mdat"],
        "ftyp, then moov before mdat"
    );
    let (_, moov_at, moov_size) = boxes[1];
    let (moov, _) = MoovBox::decode(&file[moov_at..moov_at + moov_size]).expect("the clip's moov");
    let tracks = moov
        .trak_boxes
        .iter()
        .map(|trak| {
            let table = SampleTableAccessor::new(&trak.mdia_box.minf_box.stbl_box)
                .expect("consistent tables");
            let samples = table
                .samples()
                .map(|s| {
                    let at = s.data_offset() as usize;
                    assert!(
                        at >= boxes[2].1 && at + s.data_size() as usize <= file.len(),
                        "a sample inside the mdat"
                    );
                    (
                        Bytes::copy_from_slice(&file[at..at + s.data_size() as usize]),
                        s.is_sync_sample(),
                        s.duration(),
                    )
                })
                .collect();
            (trak.mdia_box.hdlr_box.handler_type, samples)
        })
        .collect();
    (moov, tracks)
}

async fn cut_synthetic(
    layout: Layout,
    asked: ClipRange,
) -> (Vec<u8>, crate::Clip, crate::ReadCost, Source) {
    let source = Source::build(Spec {
        seconds: 60,
        fps: 30,
        keyframe_every: 60,
        video_bits_per_second: 2_000_000,
        layout,
    });
    let mut sink = VecSink::default();
    let (clip, cost) = cut(&source, source.len, asked, &mut sink)
        .await
        .expect("cut");
    assert_eq!(clip.size, sink.0.len() as u64);
    (sink.0, clip, cost, source)
}

#[tokio::test]
async fn every_layout_gives_the_keyframe_before_the_start_through_the_frame_covering_the_end() {
    for layout in [
        Layout::IndexFirst,
        Layout::IndexLast,
        Layout::Fragmented { mfra: false },
        Layout::Fragmented { mfra: true },
    ] {
        let (file, clip, cost, source) = cut_synthetic(layout, range(10.5, 20.2)).await;
        let (moov, tracks) = read_clip(&file);
        // Video: frames 301 (10.0 s, the keyframe) to 607 (20.2 s falls in it), in order.
        let (handler, video) = &tracks[0];
        assert_eq!(handler, &HdlrBox::HANDLER_TYPE_VIDE, "{layout:?}");
        let names: Vec<_> = video.iter().map(|s| sample_name(&s.0)).collect();
        assert_eq!(
            names,
            (301..=607).map(|n| (VIDEO_TRACK, n)).collect::<Vec<_>>(),
            "{layout:?}"
        );
        assert!(
            video[0].1,
            "the first video sample is a keyframe ({layout:?})"
        );
        assert_eq!(
            video.iter().filter(|s| s.1).count(),
            6,
            "keyframes every 2 s ({layout:?})"
        );
        // Audio: the frames covering 10.0 s to 20.233 s (the last video frame's end).
        let (handler, audio) = &tracks[1];
        assert_eq!(handler, &HdlrBox::HANDLER_TYPE_SOUN);
        let names: Vec<_> = audio.iter().map(|s| sample_name(&s.0)).collect();
        assert_eq!(
            names,
            (469..=949).map(|n| (AUDIO_TRACK, n)).collect::<Vec<_>>(),
            "{layout:?}"
        );
        // Both presented from 0: the video's edit starts at its first frame, the audio's 768
        // ticks (16 ms) into its first frame, which began before the keyframe.
        let media_times: Vec<_> = moov
            .trak_boxes
            .iter()
            .map(|t| {
                t.edts_box
                    .as_ref()
                    .unwrap()
                    .elst_box
                    .as_ref()
                    .unwrap()
                    .entries
                    .iter()
                    .map(|e| e.media_time)
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(media_times, [vec![0], vec![768]], "{layout:?}");
        assert!(
            (clip.duration_seconds - (20.0 + 7.0 / 30.0 - 10.0)).abs() < 1e-9,
            "{layout:?}: {clip:?}"
        );
        assert_eq!(clip.source_start_seconds, 10.0);
        assert_eq!(moov.mvhd_box.duration, 10_233, "{layout:?}");
        // What was read: the index (a moof per fragment read, in the walk) and the clip's media.
        let media: u64 = tracks
            .iter()
            .flat_map(|t| t.1.iter().map(|s| s.0.len() as u64))
            .sum();
        assert!(
            cost.media_bytes >= media && cost.media_bytes <= media + 1024 * 1024,
            "{layout:?}: {cost:?}, media {media}"
        );
        assert!(
            cost.index_bytes + cost.media_bytes < source.len / 4,
            "{layout:?}: {cost:?} of {}",
            source.len
        );
    }
}

#[tokio::test]
async fn the_shipped_recording_with_b_frames_and_edit_lists_is_cut() {
    let source = InMemory(SHIPPED.to_vec());
    let mut sink = VecSink::default();
    let (clip, _) = cut(&source, SHIPPED.len() as u64, range(3.5, 5.5), &mut sink)
        .await
        .expect("cut");
    let (_, tracks) = read_clip(&sink.0);
    assert!(tracks[0].1[0].1, "starts on a keyframe");
    // Keyframes every 2 s: the clip runs from 2 s through the frame covering 5.5 s.
    assert!((clip.duration_seconds - 3.6).abs() < 1e-9, "{clip:?}");
    assert_eq!(clip.source_start_seconds, 2.0);
    assert!(!tracks[1].1.is_empty(), "with its sound");
}

#[test]
fn the_shipped_recording_lasts_62_s_with_a_keyframe_every_2_s() {
    // hosting_domain::recording::TEST_RECORDING_SECONDS reports it.
    let moov_at = top_level(SHIPPED)
        .into_iter()
        .find(|b| &b.0 == b"moov")
        .expect("a moov");
    let (moov, _) = MoovBox::decode(&SHIPPED[moov_at.1..moov_at.1 + moov_at.2]).expect("its moov");
    assert_eq!(
        moov.mvhd_box.duration / moov.mvhd_box.timescale.get() as u64,
        62
    );
    let video = &moov.trak_boxes[0];
    let table = SampleTableAccessor::new(&video.mdia_box.minf_box.stbl_box).expect("tables");
    let timescale = video.mdia_box.mdhd_box.timescale.get() as f64;
    let keyframes: Vec<f64> = table
        .samples()
        .filter(|s| s.is_sync_sample())
        .map(|s| s.timestamp() as f64 / timescale)
        .collect();
    assert_eq!(keyframes.len(), 31);
    assert!(
        keyframes
            .windows(2)
            .all(|w| (w[1] - w[0] - 2.0).abs() < 1e-9),
        "{keyframes:?}"
    );
}

#[tokio::test]
async fn a_range_past_the_end_and_a_file_that_is_not_an_mp4_fail_for_good_and_a_failed_read_does_not()
 {
    let source = InMemory(SHIPPED.to_vec());
    let len = SHIPPED.len() as u64;
    let outcome = cut(&source, len, range(70.0, 71.0), &mut VecSink::default()).await;
    assert_eq!(outcome.unwrap_err(), CutError::OutOfRange);
    // Cut short after its index: its samples lie past the end, for good.
    let error = cut(&source, 40_000, range(0.0, 1.0), &mut VecSink::default())
        .await
        .unwrap_err();
    assert!(
        error.is_permanent() && matches!(error, CutError::Unreadable(_)),
        "{error:?}"
    );
    let garbage = InMemory(vec![7u8; 4096]);
    let error = cut(&garbage, 4096, range(0.0, 1.0), &mut VecSink::default())
        .await
        .unwrap_err();
    assert!(
        error.is_permanent() && matches!(error, CutError::Unreadable(_)),
        "{error:?}"
    );
    let error = cut(&Failing, len, range(0.0, 1.0), &mut VecSink::default())
        .await
        .unwrap_err();
    assert_eq!(error, CutError::Read("503 Slow Down".into()));
    assert!(!error.is_permanent());
}

#[tokio::test]
async fn a_clip_from_the_start_begins_with_the_first_frame() {
    let (file, _, _, _) = cut_synthetic(Layout::IndexFirst, range(0.0, 1.0)).await;
    let (_, tracks) = read_clip(&file);
    assert_eq!(sample_name(&tracks[0].1[0].0), (VIDEO_TRACK, 1));
}

fn one(range: Range<u64>) -> Vec<Range<u64>> {
    std::iter::once(range).collect()
}

#[test]
fn reads_run_over_small_gaps_and_stay_within_a_window() {
    let mb = 1024 * 1024;
    let reads = windows(&[
        0..100,
        200..300,
        100 * mb..100 * mb + 10,
        200 * mb..200 * mb + 9 * mb,
    ]);
    assert_eq!(
        reads,
        [
            Read {
                window: 0..300,
                ranges: vec![0..100, 200..300]
            },
            Read {
                window: 100 * mb..100 * mb + 10,
                ranges: one(100 * mb..100 * mb + 10)
            },
            Read {
                window: 200 * mb..200 * mb + READ_WINDOW,
                ranges: one(200 * mb..200 * mb + READ_WINDOW)
            },
            Read {
                window: 200 * mb + READ_WINDOW..200 * mb + 2 * READ_WINDOW,
                ranges: one(200 * mb + READ_WINDOW..200 * mb + 2 * READ_WINDOW)
            },
            Read {
                window: 200 * mb + 2 * READ_WINDOW..200 * mb + 9 * mb,
                ranges: one(200 * mb + 2 * READ_WINDOW..200 * mb + 9 * mb)
            },
        ]
    );
}
