//! Counts the heap allocations and the peak live heap of one decode of each
//! workload, and of one decode followed by reading every field, for
//! kafka-wire ("ours") and kafka-protocol 0.18 ("peer").
//!
//! A counting global allocator wraps the system allocator; this is a binary of
//! its own so that the counting never slows down the timed benchmarks. Prints
//! one line per workload:
//!
//! `allocs <decode|read> <workload> ours=<n> peer=<n> heap_ours=<bytes> heap_peer=<bytes> wire=<bytes>`
//!
//! An allocation is a call to `alloc`, `alloc_zeroed` or `realloc`; the heap
//! figure is the peak of live heap bytes during the decode, above what was
//! live before it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use kafka_wire_benches::{for_each_workload, Visitor, Workload};

/// The system allocator, counting calls and live bytes.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn grew(by: usize) {
        let live = LIVE.fetch_add(by, Relaxed) + by;
        PEAK.fetch_max(live, Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters are only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        Counting::grew(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        Counting::grew(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        if new_size >= layout.size() {
            Counting::grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Relaxed);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and peak extra heap bytes while `f` runs and its result is
/// dropped.
fn measure<R>(f: impl FnOnce() -> R) -> (usize, usize) {
    let baseline = LIVE.load(Relaxed);
    PEAK.store(baseline, Relaxed);
    ALLOCATIONS.store(0, Relaxed);
    let result = black_box(f());
    drop(result);
    let allocations = ALLOCATIONS.load(Relaxed);
    let peak = PEAK.load(Relaxed).saturating_sub(baseline);
    (allocations, peak)
}

struct Allocs;

impl Visitor for Allocs {
    fn visit<W: Workload>(&mut self) {
        let wire = W::wire();
        // The peer decodes from a clone; the first clone of a vector-backed
        // `Bytes` allocates its shared header, so do that before counting.
        drop(wire.clone());
        let (ours, heap_ours) = measure(|| W::decode_ours(black_box(&wire[..])));
        let (peer, heap_peer) = measure(|| W::decode_peer(black_box(&wire)));
        report(
            "decode",
            W::NAME,
            [ours, peer, heap_ours, heap_peer],
            wire.len(),
        );
        let (ours, heap_ours) = measure(|| W::read_ours(&W::decode_ours(black_box(&wire[..]))));
        let (peer, heap_peer) = measure(|| W::read_peer(&W::decode_peer(black_box(&wire))));
        report(
            "read",
            W::NAME,
            [ours, peer, heap_ours, heap_peer],
            wire.len(),
        );
    }
}

/// Prints one `allocs` line.
fn report(op: &str, workload: &str, [ours, peer, heap_ours, heap_peer]: [usize; 4], wire: usize) {
    println!(
        "allocs {op} {workload} ours={ours} peer={peer} heap_ours={heap_ours} heap_peer={heap_peer} wire={wire}"
    );
}

fn main() {
    for_each_workload(&mut Allocs);
}
