//! The clip's file, planned from the span's samples: which samples it keeps, its index
//! (`ftyp`, `moov` and the `mdat` header, written whole before any media), and the source's
//! byte ranges that follow it, in order.

use std::num::NonZeroU32;
use std::ops::Range;

use bytes::Bytes;
use shiguredo_mp4::boxes::{
    Brand, Co64Box, CttsBox, CttsEntry, EdtsBox, ElstBox, ElstEntry, FtypBox, MoovBox, StcoBox,
    StscBox, StscEntry, StssBox, StszBox, SttsBox, SttsEntry,
};
use shiguredo_mp4::{Either, Encode, FixedPointNumber};

use crate::samples::{Kind, Sample, Track};
use crate::{Clip, ClipRange, CutError};

/// The clip's movie timescale (its edit lists and track durations): milliseconds.
const MOVIE_TIMESCALE: u32 = 1000;

pub(crate) struct Plan {
    /// `ftyp`, `moov` and the `mdat` header.
    pub head: Bytes,
    /// The source's byte ranges of the clip's samples, in the order the clip holds them.
    pub copies: Vec<Range<u64>>,
    pub clip: Clip,
}

/// One output track: the source track with the samples the clip keeps, and its edit.
struct Kept {
    track: Track,
    /// An empty edit first (the track starts after the clip does), in movie ticks.
    delay: u64,
    /// Where its presentation starts, in its own ticks of the clip's timeline.
    media_time: i64,
    /// How long it is presented, in movie ticks.
    presented: u64,
}

pub(crate) fn plan(tracks: Vec<Track>, range: ClipRange) -> Result<Plan, CutError> {
    let video = tracks
        .iter()
        .find(|t| t.kind == Kind::Video)
        .expect("read_tracks checked it");
    let keyframe = *video.samples.first().ok_or(CutError::NoKeyframe)?;
    let start = video.pts(&keyframe);
    let (asked_start, asked_end) = (
        video.ticks(range.start_seconds),
        video.ticks(range.end_seconds),
    );
    // A start before the video's first frame is presented starts with that frame.
    if !keyframe.sync || (start > asked_start && !video.from_first) {
        return Err(CutError::NoKeyframe);
    }
    // The last sample presented at or before the asked end: the one covering it. None when
    // the video's first frame comes after the asked end.
    let (last, covering) = video
        .samples
        .iter()
        .enumerate()
        .filter(|(_, s)| video.pts(s) <= asked_end)
        .max_by_key(|(_, s)| video.pts(s))
        .map(|(i, s)| (i, *s))
        .ok_or(CutError::OutOfRange)?;
    let end = video.pts(&covering) + covering.duration as i64;
    if end <= asked_start {
        return Err(CutError::OutOfRange);
    }
    // Decoding needs every sample up to the last one presented in the span.
    let through = video
        .samples
        .iter()
        .enumerate()
        .filter(|(_, s)| video.pts(s) < end)
        .map(|(i, _)| i)
        .max()
        .unwrap_or(last);
    let (start_seconds, end_seconds) = (video.seconds(start), video.seconds(end));
    let movie = |seconds: f64| (seconds * MOVIE_TIMESCALE as f64).round().max(0.0) as u64;
    let length = movie(end_seconds - start_seconds);

    let mut kept = Vec::new();
    for mut track in tracks {
        let edit = if track.kind == Kind::Video {
            track.samples.truncate(through + 1);
            Kept {
                media_time: keyframe.cts,
                delay: 0,
                presented: length,
                track,
            }
        } else {
            // Audio: from the sample covering the clip's start to the one covering its end.
            let to = track.ticks(end_seconds);
            let from = track.ticks(start_seconds);
            let audio = &track;
            let samples: Vec<Sample> = audio
                .samples
                .iter()
                .copied()
                .filter(|s| audio.pts(s) < to && audio.pts(s) + s.duration as i64 > from)
                .collect();
            let Some(first) = samples.first() else {
                continue;
            };
            let first_pts = audio.pts(first);
            let (delay, media_time) = if first_pts >= from {
                (movie(audio.seconds(first_pts - from)), first.cts)
            } else {
                (0, from - first_pts + first.cts)
            };
            track.samples = samples;
            Kept {
                delay,
                media_time,
                presented: length.saturating_sub(delay),
                track,
            }
        };
        kept.push(edit);
    }
    write(kept, start_seconds, end_seconds)
}

/// Lays the kept samples out in the source's order (interleaved as it was), builds the index,
/// and gives every chunk its offset in the clip.
fn write(mut kept: Vec<Kept>, start_seconds: f64, end_seconds: f64) -> Result<Plan, CutError> {
    // Every kept sample, by its place in the source: the clip holds them in that order.
    let mut order: Vec<(u64, usize, usize)> = Vec::new();
    for (t, k) in kept.iter().enumerate() {
        order.extend(
            k.track
                .samples
                .iter()
                .enumerate()
                .map(|(i, s)| (s.offset, t, i)),
        );
    }
    order.sort_unstable();
    // Chunks: runs of one track's samples with one description. Per track: (first sample's
    // place in the clip's media, samples, description).
    let mut chunks: Vec<Vec<(u64, u32, u32)>> = vec![Vec::new(); kept.len()];
    let mut copies: Vec<Range<u64>> = Vec::new();
    let mut media_len = 0u64;
    let mut previous: Option<(usize, u32)> = None;
    for &(_, t, i) in &order {
        let sample = kept[t].track.samples[i];
        let track_chunks = &mut chunks[t];
        match (previous, track_chunks.last_mut()) {
            (Some((pt, pd)), Some(chunk)) if pt == t && pd == sample.description => chunk.1 += 1,
            _ => track_chunks.push((media_len, 1, sample.description)),
        }
        previous = Some((t, sample.description));
        let range = sample.offset..sample.offset + sample.size as u64;
        match copies.last_mut() {
            Some(last) if last.end == range.start => last.end = range.end,
            _ => copies.push(range),
        }
        media_len += sample.size as u64;
    }
    let mdat_header: u64 = if media_len + 8 <= u32::MAX as u64 {
        8
    } else {
        16
    };

    let ftyp = FtypBox {
        major_brand: Brand::ISOM,
        minor_version: 512,
        compatible_brands: vec![Brand::ISOM, Brand::ISO2, Brand::AVC1, Brand::MP41],
    }
    .encode_to_vec()?;
    let mut moov = build_moov(&mut kept, &chunks)?;
    // The offsets' width is chosen before their values, so the moov's size does not change
    // when they are filled in: 64-bit only when the clip passes 4 GiB.
    let narrow_len = moov.encode_to_vec()?.len() as u64;
    let wide = ftyp.len() as u64 + narrow_len + mdat_header + media_len > u32::MAX as u64;
    let set_offsets = |moov: &mut MoovBox, media_start: u64| {
        for (trak, track_chunks) in moov.trak_boxes.iter_mut().zip(&chunks) {
            let offsets = track_chunks.iter().map(|c| media_start + c.0);
            trak.mdia_box.minf_box.stbl_box.stco_or_co64_box = if wide {
                Either::B(Co64Box {
                    chunk_offsets: offsets.collect(),
                })
            } else {
                Either::A(StcoBox {
                    chunk_offsets: offsets.map(|o| o as u32).collect(),
                })
            };
        }
    };
    set_offsets(&mut moov, 0);
    let media_start = ftyp.len() as u64 + moov.encode_to_vec()?.len() as u64 + mdat_header;
    set_offsets(&mut moov, media_start);
    let moov = moov.encode_to_vec()?;
    if ftyp.len() as u64 + moov.len() as u64 + mdat_header != media_start {
        return Err(CutError::unreadable(
            "the clip's index changed size when its offsets were set",
        ));
    }
    let mut head = Vec::with_capacity(media_start as usize);
    head.extend_from_slice(&ftyp);
    head.extend_from_slice(&moov);
    if mdat_header == 8 {
        head.extend_from_slice(&((media_len + 8) as u32).to_be_bytes());
        head.extend_from_slice(b"mdat");
    } else {
        head.extend_from_slice(&1u32.to_be_bytes());
        head.extend_from_slice(b"mdat");
        head.extend_from_slice(&(media_len + 16).to_be_bytes());
    }
    Ok(Plan {
        head: Bytes::from(head),
        copies,
        clip: Clip {
            size: media_start + media_len,
            media_bytes: media_len,
            duration_seconds: end_seconds - start_seconds,
            source_start_seconds: start_seconds,
        },
    })
}

/// The clip's `moov`: each source trak with its new edit and sample tables (chunk offsets
/// still zero).
fn build_moov(kept: &mut [Kept], chunks: &[Vec<(u64, u32, u32)>]) -> Result<MoovBox, CutError> {
    let first = kept.first().expect("the video is kept");
    let mut mvhd = first.track.mvhd.clone();
    mvhd.timescale = NonZeroU32::new(MOVIE_TIMESCALE).expect("not zero");
    let mut traks = Vec::new();
    let mut longest = 0;
    let mut next_track_id = 1;
    for (k, track_chunks) in kept.iter_mut().zip(chunks) {
        let samples = &k.track.samples;
        let mut trak = k.track.trak.clone();
        let total: u64 = samples.iter().map(|s| s.duration as u64).sum();
        let tkhd_duration = k.delay + k.presented;
        longest = longest.max(tkhd_duration);
        next_track_id = next_track_id.max(trak.tkhd_box.track_id + 1);
        trak.tkhd_box.duration = tkhd_duration;
        trak.mdia_box.mdhd_box.duration = total;
        let mut entries = Vec::new();
        let rate = FixedPointNumber::new(1, 0);
        if k.delay > 0 {
            entries.push(ElstEntry {
                edit_duration: k.delay,
                media_time: -1,
                media_rate: rate,
            });
        }
        entries.push(ElstEntry {
            edit_duration: k.presented,
            media_time: k.media_time,
            media_rate: rate,
        });
        trak.edts_box = Some(EdtsBox {
            elst_box: Some(ElstBox { entries }),
            unknown_boxes: Vec::new(),
        });
        trak.unknown_boxes = Vec::new();

        let stbl = &mut trak.mdia_box.minf_box.stbl_box;
        stbl.stts_box = SttsBox {
            entries: runs(samples.iter().map(|s| s.duration), |count, delta| {
                SttsEntry {
                    sample_count: count,
                    sample_delta: delta,
                }
            }),
        };
        stbl.ctts_box = samples.iter().any(|s| s.cts != 0).then(|| CttsBox {
            version: u8::from(samples.iter().any(|s| s.cts < 0)),
            entries: runs(samples.iter().map(|s| s.cts), |count, offset| CttsEntry {
                sample_count: count,
                sample_offset: offset,
            }),
        });
        stbl.cslg_box = None;
        stbl.sdtp_box = None;
        stbl.stss_box = (!samples.iter().all(|s| s.sync)).then(|| StssBox {
            sample_numbers: samples
                .iter()
                .enumerate()
                .filter(|(_, s)| s.sync)
                .map(|(i, _)| NonZeroU32::new(i as u32 + 1).expect("from 1"))
                .collect(),
        });
        stbl.stsz_box = StszBox::Variable {
            entry_sizes: samples.iter().map(|s| s.size).collect(),
        };
        let mut stsc = Vec::<StscEntry>::new();
        for (n, &(_, count, description)) in track_chunks.iter().enumerate() {
            if stsc.last().is_none_or(|e| {
                e.sample_per_chunk != count || e.sample_description_index.get() != description
            }) {
                stsc.push(StscEntry {
                    first_chunk: NonZeroU32::new(n as u32 + 1).expect("from 1"),
                    sample_per_chunk: count,
                    sample_description_index: NonZeroU32::new(description)
                        .ok_or_else(|| CutError::unreadable("a sample description index of 0"))?,
                });
            }
        }
        stbl.stsc_box = StscBox { entries: stsc };
        stbl.stco_or_co64_box = Either::A(StcoBox {
            chunk_offsets: vec![0; track_chunks.len()],
        });
        traks.push(trak);
    }
    mvhd.duration = longest;
    mvhd.next_track_id = next_track_id;
    Ok(MoovBox {
        mvhd_box: mvhd,
        trak_boxes: traks,
        mvex_box: None,
        unknown_boxes: Vec::new(),
    })
}

/// Run-length entries (`stts`, `ctts`) of a sequence of values.
fn runs<T: PartialEq + Copy, E>(
    values: impl Iterator<Item = T>,
    entry: impl Fn(u32, T) -> E,
) -> Vec<E> {
    let mut counted: Vec<(u32, T)> = Vec::new();
    for value in values {
        match counted.last_mut() {
            Some((count, last)) if *last == value => *count += 1,
            _ => counted.push((1, value)),
        }
    }
    counted
        .into_iter()
        .map(|(count, value)| entry(count, value))
        .collect()
}
