//! A track's samples in the span a clip needs, from a progressive file's sample tables or from
//! a fragmented file's `moof`s, in one shape.

use shiguredo_mp4::boxes::{HdlrBox, MoofBox, MvhdBox, TrakBox, TrexBox};
use shiguredo_mp4::{Either, aux::SampleTableAccessor};

use crate::CutError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Video,
    Audio,
}

/// One sample, as the clip needs it. Times are in the track's timescale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sample {
    pub dts: u64,
    pub duration: u32,
    /// Composition offset: the sample is presented at `dts + cts`.
    pub cts: i64,
    pub offset: u64,
    pub size: u32,
    pub sync: bool,
    /// Its sample description (1-based, as `stsc` counts).
    pub description: u32,
}

/// A track of the source: its boxes (sample tables emptied) and the samples of the span asked.
#[derive(Debug, Clone)]
pub(crate) struct Track {
    pub kind: Kind,
    pub trak: TrakBox,
    /// The source's movie header, which the clip's starts from.
    pub mvhd: MvhdBox,
    pub timescale: u32,
    /// Where presentation starts, in the track's timescale: the media time of its edit list's
    /// first edit, less any empty edit before it (a track that starts late).
    pub media_start: i64,
    pub samples: Vec<Sample>,
    /// Whether `samples` starts with the track's first sample.
    pub from_first: bool,
}

impl Track {
    /// The track's video or audio trak, with what its edit list says; `None` for other tracks.
    pub fn from_trak(trak: TrakBox, mvhd: &MvhdBox) -> Result<Option<Self>, CutError> {
        let movie_timescale = mvhd.timescale.get();
        let kind = match trak.mdia_box.hdlr_box.handler_type {
            HdlrBox::HANDLER_TYPE_VIDE => Kind::Video,
            HdlrBox::HANDLER_TYPE_SOUN => Kind::Audio,
            _ => return Ok(None),
        };
        let timescale = trak.mdia_box.mdhd_box.timescale.get();
        let mut media_start = 0i64;
        if let Some(elst) = trak
            .edts_box
            .as_ref()
            .and_then(|edts| edts.elst_box.as_ref())
        {
            let mut empty = 0u64;
            for entry in &elst.entries {
                if entry.media_time < 0 {
                    empty += entry.edit_duration;
                } else {
                    let delay =
                        (empty as u128 * timescale as u128 / movie_timescale.max(1) as u128) as i64;
                    media_start = entry.media_time - delay;
                    break;
                }
            }
        }
        Ok(Some(Self {
            kind,
            trak,
            mvhd: mvhd.clone(),
            timescale,
            media_start,
            samples: Vec::new(),
            from_first: false,
        }))
    }

    /// A sample's presentation time, in the track's timescale, counted from the presentation's
    /// start.
    pub fn pts(&self, sample: &Sample) -> i64 {
        sample.dts as i64 + sample.cts - self.media_start
    }

    /// Seconds to the track's timescale, rounded to the nearest tick.
    pub fn ticks(&self, seconds: f64) -> i64 {
        (seconds * self.timescale as f64).round() as i64
    }

    pub fn seconds(&self, ticks: i64) -> f64 {
        ticks as f64 / self.timescale as f64
    }

    /// How far before its decode time a sample may be presented (ticks, at least 0): a negative
    /// composition offset. Scans stop once decode times pass the span by this much.
    pub fn lookahead(&self) -> i64 {
        let earliest = match &self.trak.mdia_box.minf_box.stbl_box.ctts_box {
            Some(ctts) => ctts
                .entries
                .iter()
                .map(|e| e.sample_offset)
                .min()
                .unwrap_or(0),
            None => 0,
        };
        self.media_start - earliest.min(0)
    }
}

/// Collects a track's samples for the span `[from, to]` (ticks of presentation) as they come,
/// in decode order, holding only what the span needs: from the last sync sample presented at
/// or before `from` (every sample after it, which decoding needs), or from the first sync
/// sample when none is, through the last sample whose decode time can still be presented by
/// `to`.
pub(crate) struct SpanCollector {
    from: i64,
    to: i64,
    lookahead: i64,
    media_start: i64,
    pub samples: Vec<Sample>,
    /// Whether `samples` starts with the first sample offered: nothing is presented before it.
    pub from_first: bool,
    offered: bool,
}

impl SpanCollector {
    pub fn new(track: &Track, from: i64, to: i64) -> Self {
        Self {
            from,
            to,
            lookahead: track.lookahead(),
            media_start: track.media_start,
            samples: Vec::new(),
            from_first: false,
            offered: false,
        }
    }

    /// For a track that follows the video: drops the samples presented wholly before `from`
    /// (ticks), keeping the one that covers it.
    pub fn retain_from(&mut self, from: i64) {
        let media_start = self.media_start;
        let pts = |s: &Sample| s.dts as i64 + s.cts - media_start;
        let drop = self
            .samples
            .iter()
            .skip(1)
            .take_while(|s| pts(s) <= from)
            .count();
        self.samples.drain(..drop);
        self.from_first &= drop == 0;
    }

    /// Takes the next sample; `false` once samples are past the span (the rest can be skipped).
    pub fn push(&mut self, sample: Sample) -> bool {
        if sample.dts as i64 - self.lookahead > self.to {
            return false;
        }
        let pts = sample.dts as i64 + sample.cts - self.media_start;
        let first = !std::mem::replace(&mut self.offered, true);
        if sample.sync && pts <= self.from {
            self.samples.clear();
            self.from_first = first;
        }
        if sample.sync || !self.samples.is_empty() {
            if self.samples.is_empty() {
                self.from_first = first;
            }
            self.samples.push(sample);
        }
        true
    }
}

/// The samples of a progressive file's track in the span `[from, to]` (ticks), with their
/// places in the file; the source's sample tables are dropped afterwards.
pub(crate) fn from_sample_tables(track: &mut Track, from: i64, to: i64) -> Result<(), CutError> {
    let mut span = SpanCollector::new(track, from, to);
    let stbl = &track.trak.mdia_box.minf_box.stbl_box;
    let table = SampleTableAccessor::new(stbl).map_err(CutError::unreadable)?;
    for sample in table.samples() {
        let next = Sample {
            dts: sample.timestamp(),
            duration: sample.duration(),
            cts: sample.composition_time_offset().unwrap_or(0),
            offset: sample.data_offset(),
            size: sample.data_size(),
            sync: sample.is_sync_sample(),
            description: sample.chunk().sample_entry_index() as u32 + 1,
        };
        if !span.push(next) {
            break;
        }
    }
    track.from_first = span.from_first;
    track.samples = span.samples;
    empty_tables(&mut track.trak);
    Ok(())
}

/// The samples of `track` in one `moof` (at `moof_offset`), appended; `next_dts` carries the
/// decode time from one fragment to the next where a fragment has no `tfdt`.
/// Returns `false` once the track's samples are past the span.
pub(crate) fn from_fragment(
    track: &Track,
    moof: &MoofBox,
    moof_offset: u64,
    trex: Option<&TrexBox>,
    next_dts: &mut u64,
    span: &mut SpanCollector,
) -> Result<bool, CutError> {
    let mut more = true;
    let track_id = track.trak.tkhd_box.track_id;
    // Where a traf's data starts when its tfhd names no base: the moof for the first traf (and
    // for every traf flagged default-base-is-moof), else the end of the previous traf's data.
    let mut data_end = moof_offset;
    for traf in &moof.traf_boxes {
        let tfhd = &traf.tfhd_box;
        let base = match tfhd.base_data_offset {
            Some(base) => base,
            None if tfhd.default_base_is_moof => moof_offset,
            None => data_end,
        };
        let mut position = base;
        let mut dts = traf
            .tfdt_box
            .as_ref()
            .map_or(*next_dts, |t| t.base_media_decode_time);
        for trun in &traf.trun_boxes {
            if let Some(data_offset) = trun.data_offset {
                position = base.checked_add_signed(data_offset as i64).ok_or_else(|| {
                    CutError::unreadable("a trun's data offset is before the file")
                })?;
            }
            for (i, entry) in trun.samples.iter().enumerate() {
                let duration = entry
                    .duration
                    .or(tfhd.default_sample_duration)
                    .or(trex.map(|t| t.default_sample_duration))
                    .ok_or_else(|| CutError::unreadable("a fragment's sample has no duration"))?;
                let size = entry
                    .size
                    .or(tfhd.default_sample_size)
                    .or(trex.map(|t| t.default_sample_size))
                    .ok_or_else(|| CutError::unreadable("a fragment's sample has no size"))?;
                let flags = if i == 0 {
                    trun.first_sample_flags
                } else {
                    None
                }
                .or(entry.flags)
                .or(tfhd.default_sample_flags)
                .or(trex.map(|t| t.default_sample_flags));
                if tfhd.track_id == track_id && more {
                    more = span.push(Sample {
                        dts,
                        duration,
                        cts: entry.composition_time_offset.unwrap_or(0),
                        offset: position,
                        size,
                        // Without flags a sample is taken as sync (audio, most often).
                        sync: flags.is_none_or(|f| !f.sample_is_non_sync_sample()),
                        description: tfhd
                            .sample_description_index
                            .or(trex.map(|t| t.default_sample_description_index))
                            .unwrap_or(1)
                            .max(1),
                    });
                }
                position += size as u64;
                dts += duration as u64;
            }
        }
        data_end = position;
        if tfhd.track_id == track_id {
            *next_dts = dts;
        }
    }
    Ok(more)
}

/// The source's sample tables are not needed once the span's samples are out: the clip writes
/// its own.
pub(crate) fn empty_tables(trak: &mut TrakBox) {
    let stbl = &mut trak.mdia_box.minf_box.stbl_box;
    stbl.stts_box.entries = Vec::new();
    stbl.ctts_box = None;
    stbl.cslg_box = None;
    stbl.stss_box = None;
    stbl.sdtp_box = None;
    stbl.stsc_box.entries = Vec::new();
    stbl.stsz_box = shiguredo_mp4::boxes::StszBox::Variable {
        entry_sizes: Vec::new(),
    };
    stbl.stco_or_co64_box = Either::A(shiguredo_mp4::boxes::StcoBox {
        chunk_offsets: Vec::new(),
    });
}
