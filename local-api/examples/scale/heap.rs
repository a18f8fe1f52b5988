//! The heap as a counting allocator sees it: what a request's peak memory is measured with.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The heap: bytes allocated and not yet freed, and the most there were since the last reset.
/// Counting every allocation shows a request's own peak even where the allocator would reuse
/// memory already resident (which the process's resident size would not show).
struct CountingAllocator;

static HEAP_LIVE: AtomicUsize = AtomicUsize::new(0);
static HEAP_PEAK: AtomicUsize = AtomicUsize::new(0);

fn heap_grew(by: usize) {
    let live = HEAP_LIVE.fetch_add(by, Ordering::Relaxed) + by;
    HEAP_PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is passed to the system allocator unchanged; only sizes are counted.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` are the system allocator's.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            heap_grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `alloc` or `realloc` above with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        HEAP_LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and `new_size` is the caller's to vouch for.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            if new_size >= layout.size() {
                heap_grew(new_size - layout.size());
            } else {
                HEAP_LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// How far the heap rose above where it stood before `request` ran: the request's own peak
/// memory, in KiB.
pub async fn peak_memory_of<F: std::future::Future>(request: F) -> (F::Output, u64) {
    let before = HEAP_LIVE.load(Ordering::Relaxed);
    HEAP_PEAK.store(before, Ordering::Relaxed);
    let output = request.await;
    let peak = HEAP_PEAK.load(Ordering::Relaxed);
    (output, (peak.saturating_sub(before) / 1024) as u64)
}
