//! Clips cut from an MP4 recording without re-encoding (docs/clips.md).
//!
//! A clip starts at the last video keyframe at or before its start and ends with the sample that
//! covers its end; audio is cut to the same span; both tracks' timestamps start at 0; the result
//! is a progressive MP4 with its index (`moov`) before its media (`mdat`), playable in a browser.
//!
//! The source is read with ranged reads only: its index (the `moov`, found first or last in a
//! progressive file, and the `moof`s of the clip's span in a fragmented one), then the byte ranges
//! of the clip's samples, in windows of at most [`READ_WINDOW`] bytes. Memory is bounded by the
//! source's index and one window, never by the source's length.
//!
//! The crate does no I/O: [`RangeSource`] reads the source and [`ClipSink`] takes the clip's bytes
//! in order (the caller stores them: one upload, or the parts of a multipart upload).

mod copy;
mod error;
mod locate;
mod plan;
mod samples;
/// Sources of any length in every layout, made up: for tests and the budget example.
#[doc(hidden)]
pub mod synthetic;

#[cfg(test)]
mod tests;

use std::ops::Range;

use async_trait::async_trait;
use bytes::Bytes;

pub use copy::READ_WINDOW;
pub use error::CutError;

/// Where a clip's bytes come from: ranged reads of one object.
#[async_trait]
pub trait RangeSource: Send + Sync {
    /// The bytes in `range` (end exclusive), all of them. An error is worth retrying later: a
    /// source that cannot be cut is reported by the cut itself.
    async fn read(&self, range: Range<u64>) -> Result<Bytes, String>;
}

/// Where a clip's bytes go, in order: [`Clip::size`] bytes in all, announced by
/// [`ClipSink::begin`] before the first (an upload states its length first).
#[async_trait]
pub trait ClipSink: Send {
    async fn begin(&mut self, _size: u64) -> Result<(), String> {
        Ok(())
    }
    async fn write(&mut self, bytes: Bytes) -> Result<(), String>;
}

/// The part of the source asked for, in seconds of its presentation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipRange {
    pub start_seconds: f64,
    pub end_seconds: f64,
}

/// A clip as written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clip {
    /// Bytes written to the sink.
    pub size: u64,
    /// Of those, its samples' (the rest is its index).
    pub media_bytes: u64,
    /// Its real length: from the keyframe it starts on to the end of the sample covering the
    /// asked end.
    pub duration_seconds: f64,
    /// Where in the source it starts (the keyframe's time), in seconds.
    pub source_start_seconds: f64,
}

/// What reading the source cost: the figures the budgets are stated in (BENCHMARKS.md, "Clips").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadCost {
    pub requests: u64,
    pub index_bytes: u64,
    pub media_bytes: u64,
}

/// Cuts `range` out of the MP4 of `source_len` bytes that `source` reads, writing the clip to
/// `sink`. Returns the clip and what reading cost.
pub async fn cut(
    source: &dyn RangeSource,
    source_len: u64,
    range: ClipRange,
    sink: &mut dyn ClipSink,
) -> Result<(Clip, ReadCost), CutError> {
    if !(range.start_seconds >= 0.0 && range.end_seconds > range.start_seconds) {
        return Err(CutError::OutOfRange);
    }
    let mut reader = locate::CountingReader::new(source, source_len);
    let tracks = locate::read_tracks(&mut reader, range).await?;
    let plan = plan::plan(tracks, range)?;
    // A sample past the file's end is a corrupt index, not a read to try again.
    if plan.copies.iter().any(|copy| copy.end > source_len) {
        return Err(CutError::Unreadable(
            "a sample lies past the file's end".into(),
        ));
    }
    let index_bytes = reader.bytes;
    sink.begin(plan.clip.size).await.map_err(CutError::Write)?;
    copy::copy(&mut reader, &plan, sink).await?;
    let cost = ReadCost {
        requests: reader.requests,
        index_bytes,
        media_bytes: reader.bytes - index_bytes,
    };
    Ok((plan.clip, cost))
}
