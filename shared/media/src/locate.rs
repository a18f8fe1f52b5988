//! Finding and reading the source's index with ranged reads: the top-level boxes walked from
//! the start (a progressive file's `moov` is first or after its `mdat`; a fragmented file's
//! `moov` is first and its `moof`s follow), then the `moov`, and for a fragmented file the
//! `moof`s of the clip's span, found through a `sidx`, the `mfra` at the end, or box by box.

use std::ops::Range;

use bytes::Bytes;
use shiguredo_mp4::boxes::{MfraBox, MfroBox, MoofBox, MoovBox, SidxBox};
use shiguredo_mp4::{BoxHeader, BoxType, Decode};

use crate::samples::{self, Kind, SpanCollector, Track};
use crate::{ClipRange, CutError, RangeSource};

/// The first read: the file's first boxes (`ftyp`, and often all of a short file's `moov`).
const HEAD: u64 = 64 * 1024;
/// A box header's read: the longest header (a 64-bit size and a `uuid` type).
const HEADER: u64 = BoxHeader::MAX_SIZE as u64;
/// No index over this size is read (a 3-hour recording's `moov` is about 5 MiB).
const MAX_INDEX: u64 = 64 * 1024 * 1024;
/// Top-level boxes walked to find the index, at most: a recorder writes a handful (`ftyp`,
/// `free`, `mdat`, `moov`); a file of many tiny boxes is refused rather than read box by box.
const MAX_TOP_BOXES: usize = 1024;
/// Seconds of fragments read before the clip's start, for a keyframe and the audio covering it.
const LEAD_SECONDS: f64 = 10.0;

/// The source, with the reads it took counted.
pub(crate) struct CountingReader<'a> {
    source: &'a dyn RangeSource,
    pub len: u64,
    pub requests: u64,
    pub bytes: u64,
}

impl<'a> CountingReader<'a> {
    pub fn new(source: &'a dyn RangeSource, len: u64) -> Self {
        Self {
            source,
            len,
            requests: 0,
            bytes: 0,
        }
    }

    /// `range`, cut to the file's end; an empty read when it starts past the end.
    pub async fn read(&mut self, range: Range<u64>) -> Result<Bytes, CutError> {
        let range = range.start.min(self.len)..range.end.min(self.len);
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let bytes = self
            .source
            .read(range.clone())
            .await
            .map_err(CutError::Read)?;
        self.requests += 1;
        self.bytes += bytes.len() as u64;
        if bytes.len() as u64 != range.end - range.start {
            return Err(CutError::Read(format!(
                "{} bytes came for a read of {}",
                bytes.len(),
                range.end - range.start
            )));
        }
        Ok(bytes)
    }
}

/// A top-level box: its type, where it starts and its whole size.
#[derive(Debug, Clone, Copy)]
struct TopBox {
    kind: [u8; 4],
    offset: u64,
    size: u64,
}

/// The file's bytes from `offset` that the last read holds, if any.
struct Window {
    start: u64,
    bytes: Bytes,
}

impl Window {
    fn slice(&self, range: Range<u64>) -> Option<Bytes> {
        let from = range.start.checked_sub(self.start)? as usize;
        let to = range.end.checked_sub(self.start)? as usize;
        (to <= self.bytes.len()).then(|| self.bytes.slice(from..to))
    }
}

/// The top-level box at `offset`, read from `window` or with a read of its own (which becomes
/// the window, `extra` bytes longer so a small box that follows comes with it).
async fn box_at(
    reader: &mut CountingReader<'_>,
    window: &mut Window,
    offset: u64,
    extra: u64,
) -> Result<TopBox, CutError> {
    let header_end = (offset + BoxHeader::MAX_SIZE as u64).min(reader.len);
    let header = match window.slice(offset..header_end) {
        Some(bytes) => bytes,
        None => {
            *window = Window {
                start: offset,
                bytes: reader.read(offset..offset + extra.max(HEADER)).await?,
            };
            window
                .slice(offset..header_end)
                .ok_or_else(|| CutError::unreadable("a box runs past the file's end"))?
        }
    };
    let (header, _) = BoxHeader::decode(&header)?;
    let kind = match header.box_type {
        BoxType::Normal(kind) => kind,
        BoxType::Uuid(_) => *b"uuid",
    };
    // A size of 0 runs to the end of the file.
    let size = match header.box_size.get() {
        0 => reader.len - offset,
        size => size,
    };
    if size < 8 || offset + size > reader.len {
        return Err(CutError::unreadable(format!(
            "the box {} at byte {offset} runs past the file's end",
            String::from_utf8_lossy(&kind)
        )));
    }
    Ok(TopBox { kind, offset, size })
}

/// A whole top-level box's bytes, from the window or with a read.
async fn whole(
    reader: &mut CountingReader<'_>,
    window: &Window,
    top: TopBox,
) -> Result<Bytes, CutError> {
    if top.size > MAX_INDEX {
        return Err(CutError::unreadable("the file's index is over 64 MiB"));
    }
    let range = top.offset..top.offset + top.size;
    match window.slice(range.clone()) {
        Some(bytes) => Ok(bytes),
        None => reader.read(range).await,
    }
}

/// The video and audio tracks of the source, each with the samples of `range`'s span.
pub(crate) async fn read_tracks(
    reader: &mut CountingReader<'_>,
    range: ClipRange,
) -> Result<Vec<Track>, CutError> {
    let mut window = Window {
        start: 0,
        bytes: reader.read(0..HEAD).await?,
    };
    // Walk the top-level boxes until the moov and what follows it tell the layout.
    let mut offset = 0;
    let mut moov = None;
    let mut first_fragment = None;
    let mut sidx = None;
    let mut walked = 0;
    while offset < reader.len {
        walked += 1;
        if walked > MAX_TOP_BOXES {
            return Err(CutError::unreadable(
                "no moov among the file's first 1,024 boxes",
            ));
        }
        let top = box_at(reader, &mut window, offset, HEADER).await?;
        match &top.kind {
            b"moov" => moov = Some(top),
            b"sidx" if sidx.is_none() => sidx = Some(top),
            b"moof" => first_fragment = Some(top),
            _ => {}
        }
        // Done once the moov is found and, after it, media: progressive or fragmented.
        if moov.is_some() && (first_fragment.is_some() || &top.kind == b"mdat") {
            break;
        }
        offset += top.size;
    }
    let moov_box = moov.ok_or_else(|| CutError::unreadable("no moov box"))?;
    let moov_bytes = whole(reader, &window, moov_box).await?;
    let (moov, _) = MoovBox::decode(&moov_bytes)?;
    drop(moov_bytes);
    let trex = moov
        .mvex_box
        .as_ref()
        .map(|mvex| mvex.trex_boxes.clone())
        .unwrap_or_default();
    let fragmented = moov.mvex_box.is_some();
    let mut tracks = Vec::new();
    for trak in moov.trak_boxes {
        if let Some(track) = Track::from_trak(trak, &moov.mvhd_box)? {
            tracks.push(track);
        }
    }
    if !tracks.iter().any(|t| t.kind == Kind::Video) {
        return Err(CutError::unreadable("no video track"));
    }
    if !fragmented {
        // The video first: the other tracks are cut from its keyframe, which may come before
        // the asked start.
        let video = tracks
            .iter()
            .position(|t| t.kind == Kind::Video)
            .expect("checked above");
        let (from, to) = span_ticks(&tracks[video], range);
        samples::from_sample_tables(&mut tracks[video], from, to)?;
        let start = tracks[video]
            .samples
            .first()
            .map(|s| tracks[video].seconds(tracks[video].pts(s)));
        let start = start.unwrap_or(range.start_seconds);
        for (i, track) in tracks.iter_mut().enumerate() {
            if i != video {
                let (_, to) = span_ticks(track, range);
                samples::from_sample_tables(track, track.ticks(start), to)?;
            }
        }
        return Ok(tracks);
    }
    let first =
        first_fragment.ok_or_else(|| CutError::unreadable("a fragmented file with no moof"))?;
    let fragments = match sidx {
        Some(sidx) => from_sidx(reader, &window, sidx, range).await?,
        None => from_mfra(reader, &tracks, range).await?,
    };
    read_fragments(
        reader,
        window,
        &mut tracks,
        &trex,
        first.offset,
        fragments.unwrap_or(first.offset),
        range,
    )
    .await?;
    Ok(tracks)
}

/// The span a track's samples are collected for, in its ticks. A track other than the video
/// runs a second past the end: the video's last frame may end after the asked end.
fn span_ticks(track: &Track, range: ClipRange) -> (i64, i64) {
    let margin = if track.kind == Kind::Video { 0.0 } else { 1.0 };
    (
        track.ticks(range.start_seconds),
        track.ticks(range.end_seconds + margin),
    )
}

/// The offset of the last fragment that starts at least [`LEAD_SECONDS`] before the clip's
/// start, from the `sidx` (its references are consecutive, from the end of the `sidx`).
async fn from_sidx(
    reader: &mut CountingReader<'_>,
    window: &Window,
    top: TopBox,
    range: ClipRange,
) -> Result<Option<u64>, CutError> {
    let bytes = whole(reader, window, top).await?;
    let (sidx, _) = SidxBox::decode(&bytes)?;
    let timescale = sidx.timescale.max(1) as f64;
    let target = range.start_seconds - LEAD_SECONDS;
    let mut offset = top.offset + top.size + sidx.first_offset;
    let mut time = sidx.earliest_presentation_time as f64 / timescale;
    let mut found = None;
    for reference in &sidx.references {
        if time > target {
            break;
        }
        // A reference to another sidx (a hierarchy) is not followed: walk from the last known.
        if !reference.reference_type {
            found = Some(offset);
        }
        offset += reference.referenced_size as u64;
        time += reference.subsegment_duration as f64 / timescale;
    }
    Ok(found)
}

/// The offset of the last fragment whose video starts at least [`LEAD_SECONDS`] before the
/// clip's start, from the `mfra` at the file's end, when the file has one.
async fn from_mfra(
    reader: &mut CountingReader<'_>,
    tracks: &[Track],
    range: ClipRange,
) -> Result<Option<u64>, CutError> {
    if reader.len < 16 {
        return Ok(None);
    }
    let tail = reader.read(reader.len - 16..reader.len).await?;
    let Ok((mfro, _)) = MfroBox::decode(&tail) else {
        return Ok(None);
    };
    let size = mfro.size as u64;
    if size < 16 || size > reader.len || size > MAX_INDEX {
        return Ok(None);
    }
    let bytes = reader.read(reader.len - size..reader.len).await?;
    let Ok((mfra, _)) = MfraBox::decode(&bytes) else {
        return Ok(None);
    };
    let video = tracks
        .iter()
        .find(|t| t.kind == Kind::Video)
        .expect("checked above");
    let Some(tfra) = mfra
        .tfra_boxes
        .iter()
        .find(|t| t.track_id == video.trak.tkhd_box.track_id)
    else {
        return Ok(None);
    };
    let target = video.ticks(range.start_seconds - LEAD_SECONDS) + video.media_start;
    Ok(tfra
        .entries
        .iter()
        .take_while(|e| e.time as i64 <= target)
        .last()
        .map(|e| e.moof_offset))
}

/// Reads the fragments from `offset` on, box by box (a `moof` read with the header of the box
/// after it; an `mdat` skipped over), collecting each track's samples of the span, until the
/// tracks are past it or the file ends.
async fn read_fragments(
    reader: &mut CountingReader<'_>,
    mut window: Window,
    tracks: &mut [Track],
    trex: &[shiguredo_mp4::boxes::TrexBox],
    first: u64,
    mut offset: u64,
    range: ClipRange,
) -> Result<(), CutError> {
    // The other tracks keep every sample until the video's keyframe is known, trimmed to it
    // after each fragment.
    let mut spans: Vec<SpanCollector> = tracks
        .iter()
        .map(|track| {
            let (from, to) = span_ticks(track, range);
            let from = if track.kind == Kind::Video {
                from
            } else {
                i64::MIN / 2
            };
            SpanCollector::new(track, from, to)
        })
        .collect();
    let offset_was_first = offset == first;
    let mut next_dts = vec![0u64; tracks.len()];
    let mut open = vec![true; tracks.len()];
    let video = tracks
        .iter()
        .position(|t| t.kind == Kind::Video)
        .expect("checked above");
    while offset < reader.len && open.iter().any(|o| *o) {
        let top = box_at(reader, &mut window, offset, HEADER).await?;
        if &top.kind == b"moof" {
            if top.size > MAX_INDEX {
                return Err(CutError::unreadable("a moof box is over 64 MiB"));
            }
            let end = top.offset + top.size;
            let bytes = match window.slice(top.offset..end) {
                Some(bytes) => bytes,
                None => {
                    window = Window {
                        start: top.offset,
                        bytes: reader.read(top.offset..end + HEADER).await?,
                    };
                    window
                        .slice(top.offset..end)
                        .ok_or_else(|| CutError::unreadable("a moof runs past the file's end"))?
                }
            };
            let (moof, _) = MoofBox::decode(&bytes)?;
            for (i, track) in tracks.iter().enumerate() {
                if !open[i] {
                    continue;
                }
                let track_id = track.trak.tkhd_box.track_id;
                let track_trex = trex.iter().find(|t| t.track_id == track_id);
                let before = spans[i].samples.len();
                open[i] = samples::from_fragment(
                    track,
                    &moof,
                    top.offset,
                    track_trex,
                    &mut next_dts[i],
                    &mut spans[i],
                )?;
                // A track with nothing in a fragment after the video is done has ended.
                let present = moof
                    .traf_boxes
                    .iter()
                    .any(|t| t.tfhd_box.track_id == track_id);
                if i != video && !open[video] && (!present || spans[i].samples.len() == before) {
                    open[i] = false;
                }
            }
            let video_track = &tracks[video];
            if let Some(keyframe) = spans[video].samples.first() {
                let start = video_track.seconds(video_track.pts(keyframe));
                for (i, track) in tracks.iter().enumerate() {
                    if i != video {
                        spans[i].retain_from(track.ticks(start));
                    }
                }
            }
        }
        offset = top.offset + top.size;
    }
    // Only a walk from the first fragment offers a track's first sample first.
    let from_start = offset_was_first;
    for (track, span) in tracks.iter_mut().zip(spans) {
        track.from_first = span.from_first && from_start;
        track.samples = span.samples;
    }
    Ok(())
}
