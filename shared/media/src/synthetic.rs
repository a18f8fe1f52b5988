//! Synthetic sources of any length, for the tests and the budget example (BENCHMARKS.md,
//! "Clips"): a real recording's tracks (their sample entries) with sample tables written here,
//! in each layout a cut must read. The index boxes are kept; media bytes are made on each read,
//! every sample's bytes naming it, so a clip's samples can be told apart.

use std::num::NonZeroU32;
use std::ops::Range;

use async_trait::async_trait;
use bytes::{BufMut, Bytes, BytesMut};
use shiguredo_mp4::boxes::{
    Co64Box, FtypBox, MfhdBox, MfraBox, MfroBox, MoofBox, MoovBox, MvexBox, StcoBox, StscBox,
    StscEntry, StssBox, StszBox, SttsBox, SttsEntry, TfdtBox, TfhdBox, TfraBox, TfraEntry, TrafBox,
    TrexBox, TrunBox, TrunSample,
};
use shiguredo_mp4::{Decode, Either, Encode, SampleFlags};

use crate::{ClipSink, RangeSource};

/// The recording shipped for test streams: its tracks' sample entries are the synthetic
/// sources' (H.264 and AAC).
const TEMPLATE: &[u8] = include_bytes!("../../domain/assets/test-recording.mp4");
pub const VIDEO_TRACK: u32 = 1;
pub const AUDIO_TRACK: u32 = 2;
const VIDEO_TIMESCALE: u32 = 90_000;
const AUDIO_TIMESCALE: u32 = 48_000;
const AUDIO_FRAME: u32 = 1024;
/// 128 kbit/s of AAC.
const AUDIO_SAMPLE_SIZE: u32 = 341;
/// A progressive file's interleave: half a second of video, then its audio.
const CHUNK_SECONDS: f64 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Progressive, `moov` before `mdat`.
    IndexFirst,
    /// Progressive, `moov` after `mdat` (as LiveKit's egress writes it).
    IndexLast,
    /// Fragmented, one fragment a keyframe interval; `mfra` at the end when `true`.
    Fragmented { mfra: bool },
}

#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub seconds: u32,
    pub fps: u32,
    /// Frames from one keyframe to the next.
    pub keyframe_every: u32,
    pub video_bits_per_second: u64,
    pub layout: Layout,
}

/// A sample's place: which track, its number (from 1), where its bytes are.
#[derive(Debug, Clone, Copy)]
struct Placed {
    offset: u64,
    size: u32,
    track: u32,
    number: u32,
}

pub struct Source {
    pub len: u64,
    /// The boxes that are not media, where they are.
    boxes: Vec<(u64, Bytes)>,
    /// Every sample, by offset.
    samples: Vec<Placed>,
}

/// The byte at `at` of sample `number` of `track`: its first 8 bytes name it, the rest repeat
/// its number's low byte.
pub fn sample_byte(track: u32, number: u32, at: u32) -> u8 {
    match at {
        0..4 => track.to_be_bytes()[at as usize],
        4..8 => number.to_be_bytes()[at as usize - 4],
        _ => number as u8,
    }
}

/// The track and number a sample's bytes name.
pub fn sample_name(bytes: &[u8]) -> (u32, u32) {
    let word = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    (word(0), word(4))
}

struct TrackPlan {
    track: u32,
    /// (decode time, duration, size, sync) of every sample, in order.
    samples: Vec<(u64, u32, u32, bool)>,
    timescale: u32,
}

fn track_plans(spec: &Spec) -> [TrackPlan; 2] {
    let frames = spec.seconds * spec.fps;
    let frame = VIDEO_TIMESCALE / spec.fps;
    let average = spec.video_bits_per_second / 8 / spec.fps as u64;
    // A keyframe ten times the size of another frame, at the same bitrate.
    let other =
        (average * spec.keyframe_every as u64 / (spec.keyframe_every as u64 + 9)).max(16) as u32;
    let video = (0..frames)
        .map(|i| {
            let sync = i % spec.keyframe_every == 0;
            (
                i as u64 * frame as u64,
                frame,
                if sync { other * 10 } else { other },
                sync,
            )
        })
        .collect();
    let audio_frames = (spec.seconds as u64 * AUDIO_TIMESCALE as u64 / AUDIO_FRAME as u64) as u32;
    let audio = (0..audio_frames)
        .map(|i| {
            (
                i as u64 * AUDIO_FRAME as u64,
                AUDIO_FRAME,
                AUDIO_SAMPLE_SIZE,
                true,
            )
        })
        .collect();
    [
        TrackPlan {
            track: VIDEO_TRACK,
            samples: video,
            timescale: VIDEO_TIMESCALE,
        },
        TrackPlan {
            track: AUDIO_TRACK,
            samples: audio,
            timescale: AUDIO_TIMESCALE,
        },
    ]
}

fn template() -> MoovBox {
    let mut offset = 0;
    loop {
        let size = u32::from_be_bytes(TEMPLATE[offset..offset + 4].try_into().expect("4")) as usize;
        if &TEMPLATE[offset + 4..offset + 8] == b"moov" {
            return MoovBox::decode(&TEMPLATE[offset..offset + size])
                .expect("the template's moov")
                .0;
        }
        offset += size;
    }
}

/// The template's moov with `plans`' timescales and durations, no edit lists, and empty
/// sample tables.
fn base_moov(plans: &[TrackPlan; 2], seconds: u32) -> MoovBox {
    let mut moov = template();
    moov.unknown_boxes.clear();
    moov.mvhd_box.timescale = NonZeroU32::new(1000).expect("1000");
    moov.mvhd_box.duration = seconds as u64 * 1000;
    for (trak, plan) in moov.trak_boxes.iter_mut().zip(plans) {
        trak.edts_box = None;
        trak.tkhd_box.track_id = plan.track;
        trak.tkhd_box.duration = seconds as u64 * 1000;
        trak.mdia_box.mdhd_box.timescale = NonZeroU32::new(plan.timescale).expect("not zero");
        trak.mdia_box.mdhd_box.duration = plan.samples.iter().map(|s| s.1 as u64).sum();
        let stbl = &mut trak.mdia_box.minf_box.stbl_box;
        stbl.stts_box = SttsBox {
            entries: Vec::new(),
        };
        stbl.ctts_box = None;
        stbl.cslg_box = None;
        stbl.stss_box = None;
        stbl.sdtp_box = None;
        stbl.stsc_box = StscBox {
            entries: Vec::new(),
        };
        stbl.stsz_box = StszBox::Variable {
            entry_sizes: Vec::new(),
        };
        stbl.stco_or_co64_box = Either::A(StcoBox {
            chunk_offsets: Vec::new(),
        });
    }
    moov.mvhd_box.next_track_id = 3;
    moov
}

fn ftyp() -> Bytes {
    let ftyp = FtypBox {
        major_brand: shiguredo_mp4::boxes::Brand::ISOM,
        minor_version: 512,
        compatible_brands: vec![
            shiguredo_mp4::boxes::Brand::ISOM,
            shiguredo_mp4::boxes::Brand::AVC1,
        ],
    };
    Bytes::from(ftyp.encode_to_vec().expect("ftyp"))
}

fn mdat_header(payload: u64) -> Bytes {
    let mut header = BytesMut::new();
    header.put_u32(1);
    header.put_slice(b"mdat");
    header.put_u64(payload + 16);
    header.freeze()
}

impl Source {
    pub fn build(spec: Spec) -> Self {
        match spec.layout {
            Layout::Fragmented { mfra } => Self::fragmented(&spec, mfra),
            layout => Self::progressive(&spec, layout == Layout::IndexFirst),
        }
    }

    fn progressive(spec: &Spec, index_first: bool) -> Self {
        let plans = track_plans(spec);
        // Chunks in file order: each track's samples of every half second.
        let mut chunks: Vec<(usize, Range<usize>)> = Vec::new();
        let mut next = [0usize; 2];
        let mut at = 0.0;
        while next.iter().zip(&plans).any(|(n, p)| *n < p.samples.len()) {
            at += CHUNK_SECONDS;
            for (t, plan) in plans.iter().enumerate() {
                let until = (at * plan.timescale as f64) as u64;
                let from = next[t];
                while next[t] < plan.samples.len() && plan.samples[next[t]].0 < until {
                    next[t] += 1;
                }
                if next[t] > from {
                    chunks.push((t, from..next[t]));
                }
            }
        }
        let media: u64 = plans
            .iter()
            .flat_map(|p| p.samples.iter().map(|s| s.2 as u64))
            .sum();
        let mut moov = base_moov(&plans, spec.seconds);
        let wide = media > u32::MAX as u64 / 2;
        let set = |moov: &mut MoovBox, media_start: u64| {
            let mut position = media_start;
            let mut offsets: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
            for (t, range) in &chunks {
                offsets[*t].push(position);
                position += plans[*t].samples[range.clone()]
                    .iter()
                    .map(|s| s.2 as u64)
                    .sum::<u64>();
            }
            for (t, trak) in moov.trak_boxes.iter_mut().enumerate() {
                let plan = &plans[t];
                let stbl = &mut trak.mdia_box.minf_box.stbl_box;
                stbl.stts_box = SttsBox {
                    entries: vec![SttsEntry {
                        sample_count: plan.samples.len() as u32,
                        sample_delta: plan.samples[0].1,
                    }],
                };
                stbl.stsz_box = StszBox::Variable {
                    entry_sizes: plan.samples.iter().map(|s| s.2).collect(),
                };
                if plan.samples.iter().any(|s| !s.3) {
                    stbl.stss_box = Some(StssBox {
                        sample_numbers: (0..plan.samples.len())
                            .filter(|i| plan.samples[*i].3)
                            .map(|i| NonZeroU32::new(i as u32 + 1).expect("from 1"))
                            .collect(),
                    });
                }
                let mut stsc: Vec<StscEntry> = Vec::new();
                for (n, (_, range)) in chunks.iter().filter(|(ct, _)| *ct == t).enumerate() {
                    if stsc
                        .last()
                        .is_none_or(|e| e.sample_per_chunk != range.len() as u32)
                    {
                        stsc.push(StscEntry {
                            first_chunk: NonZeroU32::new(n as u32 + 1).expect("from 1"),
                            sample_per_chunk: range.len() as u32,
                            sample_description_index: NonZeroU32::MIN,
                        });
                    }
                }
                stbl.stsc_box = StscBox { entries: stsc };
                let track_offsets = std::mem::take(&mut offsets[t]);
                stbl.stco_or_co64_box = if wide {
                    Either::B(Co64Box {
                        chunk_offsets: track_offsets,
                    })
                } else {
                    Either::A(StcoBox {
                        chunk_offsets: track_offsets.into_iter().map(|o| o as u32).collect(),
                    })
                };
            }
        };
        let ftyp = ftyp();
        let mdat = mdat_header(media);
        set(&mut moov, 0);
        let moov_len = moov.encode_to_vec().expect("moov").len() as u64;
        let media_start =
            ftyp.len() as u64 + mdat.len() as u64 + if index_first { moov_len } else { 0 };
        set(&mut moov, media_start);
        let moov = Bytes::from(moov.encode_to_vec().expect("moov"));
        let mut boxes = vec![(0, ftyp.clone())];
        if index_first {
            boxes.push((ftyp.len() as u64, moov.clone()));
            boxes.push((ftyp.len() as u64 + moov.len() as u64, mdat));
        } else {
            boxes.push((ftyp.len() as u64, mdat));
            boxes.push((media_start + media, moov.clone()));
        }
        let mut samples = Vec::new();
        let mut position = media_start;
        for (t, range) in &chunks {
            for (i, s) in plans[*t].samples[range.clone()].iter().enumerate() {
                samples.push(Placed {
                    offset: position,
                    size: s.2,
                    track: plans[*t].track,
                    number: (range.start + i) as u32 + 1,
                });
                position += s.2 as u64;
            }
        }
        let len = media_start + media + if index_first { 0 } else { moov.len() as u64 };
        Self {
            len,
            boxes,
            samples,
        }
    }

    fn fragmented(spec: &Spec, with_mfra: bool) -> Self {
        let plans = track_plans(spec);
        let mut moov = base_moov(&plans, spec.seconds);
        moov.mvex_box = Some(MvexBox {
            mehd_box: None,
            trex_boxes: plans
                .iter()
                .map(|p| TrexBox {
                    track_id: p.track,
                    default_sample_description_index: 1,
                    default_sample_duration: 0,
                    default_sample_size: 0,
                    default_sample_flags: SampleFlags::new(0),
                })
                .collect(),
            unknown_boxes: Vec::new(),
        });
        let ftyp = ftyp();
        let moov = Bytes::from(moov.encode_to_vec().expect("moov"));
        let mut boxes = vec![(0, ftyp.clone()), (ftyp.len() as u64, moov.clone())];
        let mut position = ftyp.len() as u64 + moov.len() as u64;
        let mut samples = Vec::new();
        let mut next = [0usize; 2];
        let mut tfra = Vec::new();
        let keyframes = plans[0]
            .samples
            .iter()
            .enumerate()
            .filter(|(_, s)| s.3)
            .map(|(i, _)| i)
            .collect::<Vec<_>>();
        for (fragment, &first) in keyframes.iter().enumerate() {
            let video_end = keyframes
                .get(fragment + 1)
                .copied()
                .unwrap_or(plans[0].samples.len());
            let until = plans[0].samples.get(video_end).map_or(u64::MAX, |s| s.0) as f64
                / VIDEO_TIMESCALE as f64;
            let audio_end = plans[1]
                .samples
                .iter()
                .position(|s| s.0 as f64 / AUDIO_TIMESCALE as f64 >= until)
                .unwrap_or(plans[1].samples.len());
            let ranges = [first..video_end, next[1]..audio_end.max(next[1])];
            next = [video_end, ranges[1].end];
            let traf = |t: usize, data_offset: i32| TrafBox {
                tfhd_box: TfhdBox {
                    track_id: plans[t].track,
                    base_data_offset: None,
                    sample_description_index: None,
                    default_sample_duration: None,
                    default_sample_size: None,
                    default_sample_flags: None,
                    duration_is_empty: false,
                    default_base_is_moof: true,
                },
                tfdt_box: Some(TfdtBox {
                    version: 1,
                    base_media_decode_time: plans[t]
                        .samples
                        .get(ranges[t].start)
                        .map_or(0, |s| s.0),
                }),
                trun_boxes: vec![TrunBox {
                    data_offset: Some(data_offset),
                    first_sample_flags: None,
                    samples: plans[t].samples[ranges[t].clone()]
                        .iter()
                        .map(|s| TrunSample {
                            duration: Some(s.1),
                            size: Some(s.2),
                            flags: Some(SampleFlags::new(if s.3 {
                                0x0200_0000
                            } else {
                                0x0101_0000
                            })),
                            composition_time_offset: None,
                        })
                        .collect(),
                }],
                unknown_boxes: Vec::new(),
            };
            let bytes = |t: usize| {
                plans[t].samples[ranges[t].clone()]
                    .iter()
                    .map(|s| s.2 as u64)
                    .sum::<u64>()
            };
            let moof = |video_offset: i32, audio_offset: i32| MoofBox {
                mfhd_box: MfhdBox {
                    sequence_number: fragment as u32 + 1,
                },
                traf_boxes: vec![traf(0, video_offset), traf(1, audio_offset)],
                unknown_boxes: Vec::new(),
            };
            let moof_len = moof(0, 0).encode_to_vec().expect("moof").len() as u64;
            let data = moof_len + 16;
            let encoded = Bytes::from(
                moof(data as i32, (data + bytes(0)) as i32)
                    .encode_to_vec()
                    .expect("moof"),
            );
            tfra.push(TfraEntry {
                time: plans[0].samples[first].0,
                moof_offset: position,
                traf_number: 1,
                trun_number: 1,
                sample_number: 1,
            });
            boxes.push((position, encoded));
            boxes.push((position + moof_len, mdat_header(bytes(0) + bytes(1))));
            let mut at = position + data;
            for t in 0..2 {
                for i in ranges[t].clone() {
                    samples.push(Placed {
                        offset: at,
                        size: plans[t].samples[i].2,
                        track: plans[t].track,
                        number: i as u32 + 1,
                    });
                    at += plans[t].samples[i].2 as u64;
                }
            }
            position = at;
        }
        if with_mfra {
            let mfra = |size: u32| MfraBox {
                tfra_boxes: vec![TfraBox {
                    version: 1,
                    track_id: VIDEO_TRACK,
                    length_size_of_traf_num: 0,
                    length_size_of_trun_num: 0,
                    length_size_of_sample_num: 0,
                    entries: tfra.clone(),
                }],
                mfro_box: MfroBox { size },
            };
            let size = mfra(0).encode_to_vec().expect("mfra").len() as u32;
            let encoded = Bytes::from(mfra(size).encode_to_vec().expect("mfra"));
            boxes.push((position, encoded.clone()));
            position += encoded.len() as u64;
        }
        Self {
            len: position,
            boxes,
            samples,
        }
    }

    /// The file's bytes in `range`.
    pub fn bytes(&self, range: Range<u64>) -> Bytes {
        let mut out = vec![0u8; (range.end - range.start) as usize];
        for (offset, bytes) in &self.boxes {
            let (from, to) = (
                (*offset).max(range.start),
                (offset + bytes.len() as u64).min(range.end),
            );
            if from < to {
                out[(from - range.start) as usize..(to - range.start) as usize]
                    .copy_from_slice(&bytes[(from - offset) as usize..(to - offset) as usize]);
            }
        }
        let first = self
            .samples
            .partition_point(|s| s.offset + s.size as u64 <= range.start);
        for sample in self.samples[first..]
            .iter()
            .take_while(|s| s.offset < range.end)
        {
            let from = sample.offset.max(range.start);
            let to = (sample.offset + sample.size as u64).min(range.end);
            for at in from..to {
                out[(at - range.start) as usize] =
                    sample_byte(sample.track, sample.number, (at - sample.offset) as u32);
            }
        }
        Bytes::from(out)
    }

    /// The whole file, for a source short enough to hold.
    pub fn to_vec(&self) -> Vec<u8> {
        self.bytes(0..self.len).to_vec()
    }
}

#[async_trait]
impl RangeSource for Source {
    async fn read(&self, range: Range<u64>) -> Result<Bytes, String> {
        Ok(self.bytes(range))
    }
}

/// A whole file held in memory, read by ranges: a short real recording in the tests.
pub struct InMemory(pub Vec<u8>);

#[async_trait]
impl RangeSource for InMemory {
    async fn read(&self, range: Range<u64>) -> Result<Bytes, String> {
        Ok(Bytes::copy_from_slice(
            &self.0[range.start as usize..range.end as usize],
        ))
    }
}

/// A clip's bytes, collected.
#[derive(Default)]
pub struct VecSink(pub Vec<u8>);

#[async_trait]
impl ClipSink for VecSink {
    async fn write(&mut self, bytes: Bytes) -> Result<(), String> {
        self.0.extend_from_slice(&bytes);
        Ok(())
    }
}
