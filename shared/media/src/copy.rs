//! The clip written out: its index, then its samples' bytes read from the source in windows,
//! each handed on as soon as it is read.

use std::ops::Range;

use crate::locate::CountingReader;
use crate::plan::Plan;
use crate::{ClipSink, CutError};

/// The most read from the source at once (and so held at once): the memory a cut needs beyond
/// the source's index.
pub const READ_WINDOW: u64 = 4 * 1024 * 1024;
/// Bytes between two of the clip's ranges read through rather than with a read of their own (a
/// fragment's `moof`, a sample of the other track left out at the span's edge).
const GAP: u64 = 64 * 1024;

pub(crate) async fn copy(
    reader: &mut CountingReader<'_>,
    plan: &Plan,
    sink: &mut dyn ClipSink,
) -> Result<(), CutError> {
    sink.write(plan.head.clone())
        .await
        .map_err(CutError::Write)?;
    for read in windows(&plan.copies) {
        let bytes = reader.read(read.window.clone()).await?;
        for range in read.ranges {
            let from = (range.start - read.window.start) as usize;
            let to = (range.end - read.window.start) as usize;
            sink.write(bytes.slice(from..to))
                .await
                .map_err(CutError::Write)?;
        }
    }
    Ok(())
}

/// One read and the clip's ranges it serves, in order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Read {
    pub window: Range<u64>,
    pub ranges: Vec<Range<u64>>,
}

/// The reads that serve `copies` in order: a read runs on over the next range when that starts
/// at or after it ends, within [`GAP`] bytes, and the read stays within [`READ_WINDOW`]; a range
/// longer than a window is split.
pub(crate) fn windows(copies: &[Range<u64>]) -> Vec<Read> {
    let mut reads: Vec<Read> = Vec::new();
    for copy in copies {
        let mut start = copy.start;
        while start < copy.end {
            let end = copy.end.min(start + READ_WINDOW);
            let joins = reads.last().is_some_and(|read| {
                start >= read.window.end
                    && start - read.window.end <= GAP
                    && end - read.window.start <= READ_WINDOW
            });
            if joins {
                let read = reads.last_mut().expect("checked");
                read.window.end = end;
                read.ranges.push(start..end);
            } else {
                reads.push(Read {
                    window: start..end,
                    ranges: std::iter::once(start..end).collect(),
                });
            }
            start = end;
        }
    }
    reads
}
