//! The local server's global allocator: mimalloc, asked for plainly sized blocks whenever that
//! gives the alignment a layout needs. Under the local server's many threads, glibc's
//! allocator slowed requests (BENCHMARKS.md, "Throughput"). The Lambda functions, one thread each,
//! keep glibc's, which starts faster (`lambda` module).
//!
//! The `mimalloc` crate's allocator passes every request to `mi_malloc_aligned`. In mimalloc 3,
//! that call takes its fast path only while the size class's page has a free block at hand;
//! otherwise a size that is not a power of two (24, 40, 48 bytes...) goes through the
//! over-allocating path for aligned blocks, even for an alignment of 1. Under the local
//! server's read load that was many of a request's allocations, and a measurable share of its
//! instructions (BENCHMARKS.md, "What one request costs"). Every mimalloc block is aligned to
//! at least a pointer (its free list is kept inside the blocks), so layouts aligned to 8 bytes
//! or less take `mi_malloc`, and only larger alignments take the aligned calls.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};

/// The alignment of every block `mi_malloc` returns.
const BLOCK_ALIGNMENT: usize = std::mem::size_of::<usize>();

/// mimalloc, for `#[global_allocator]`.
pub struct Allocator;

// SAFETY: each method passes the layout's size, and its alignment whenever a plain block may
// not meet it, to the mimalloc call documented for that purpose; blocks are freed by mimalloc.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if layout.align() <= BLOCK_ALIGNMENT {
                mi_malloc(layout.size()) as *mut u8
            } else {
                mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if layout.align() <= BLOCK_ALIGNMENT {
                mi_zalloc(layout.size()) as *mut u8
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            if layout.align() <= BLOCK_ALIGNMENT {
                mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size from 1 to 5,000 bytes and every alignment from 1 to 4,096 gets a block with
    /// that alignment, zeroed when asked, that keeps its bytes when it grows and shrinks.
    #[test]
    fn blocks_have_the_alignment_their_layout_asks_for() {
        let sizes = (1..=300).chain((301..=5_000).step_by(37));
        for size in sizes {
            for align in (0..=12).map(|shift| 1usize << shift) {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let block = Allocator.alloc(layout);
                    assert!(!block.is_null());
                    assert_eq!(block as usize % align, 0, "size {size}, align {align}");
                    block.write_bytes(0xA5, size);
                    let grown = Allocator.realloc(block, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "grown {size}, align {align}");
                    assert!((0..size).all(|i| *grown.add(i) == 0xA5));
                    let grown_layout = Layout::from_size_align(size * 3, align).unwrap();
                    let shrunk = Allocator.realloc(grown, grown_layout, size.div_ceil(2));
                    assert_eq!(shrunk as usize % align, 0, "shrunk {size}, align {align}");
                    assert!((0..size.div_ceil(2)).all(|i| *shrunk.add(i) == 0xA5));
                    let shrunk_layout = Layout::from_size_align(size.div_ceil(2), align).unwrap();
                    Allocator.dealloc(shrunk, shrunk_layout);

                    let zeroed = Allocator.alloc_zeroed(layout);
                    assert_eq!(zeroed as usize % align, 0, "zeroed {size}, align {align}");
                    assert!((0..size).all(|i| *zeroed.add(i) == 0));
                    Allocator.dealloc(zeroed, layout);
                }
            }
        }
    }
}
