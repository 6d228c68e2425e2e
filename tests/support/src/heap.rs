//! Per-thread heap accounting.
//!
//! A test binary installs [`Tracking`] as its global allocator:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: kafka_wire_test_support::heap::Tracking =
//!     kafka_wire_test_support::heap::Tracking;
//! ```
//!
//! and then measures a closure with [`peak_during`] or [`measure`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts live and peak heap bytes per thread, so that tests running in
/// parallel do not see each other's allocations.
pub struct Tracking;

thread_local! {
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn grow(bytes: usize) {
    // `try_with`: the allocator may run while the thread's locals are gone.
    let _ = CURRENT.try_with(|current| {
        let now = current.get().wrapping_add(bytes as isize);
        current.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrink(bytes: usize) {
    let _ = CURRENT.try_with(|current| current.set(current.get().wrapping_sub(bytes as isize)));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// bookkeeping touches only const-initialised thread-locals, which neither
// allocate nor register destructors.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        shrink(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            // Count the new block before freeing the old one: a moving
            // realloc holds both for a moment.
            grow(new_size);
            shrink(layout.size());
        }
        new
    }
}

/// Slack allowed on top of `4 * n`.
pub const SLACK: usize = 64 * 1024;

/// Runs `f` and returns its result with the peak number of heap bytes this
/// thread held during it, above what it held before.
pub fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = CURRENT.with(Cell::get);
    PEAK.with(|peak| peak.set(base));
    let result = f();
    let peak = PEAK.with(Cell::get) - base;
    (result, usize::try_from(peak).unwrap_or(0))
}

/// Runs `f`, decoding an input of `len` bytes, and asserts that the heap
/// stayed below `4 * len + extra + 64 KiB`.
pub fn measure<R>(len: usize, extra: usize, what: &str, f: impl FnOnce() -> R) -> R {
    let (result, peak) = peak_during(f);
    let limit = 4 * len + extra + SLACK;
    assert!(
        peak <= limit,
        "{what}: decoding {len} byte(s) peaked at {peak} heap bytes (limit {limit})"
    );
    result
}
