//! Counts the heap allocations and the peak live heap of one decode of each
//! workload, and of one decode followed by reading every field, for every
//! crate: kafka-wire ("ours"), kafka-protocol 0.18 ("peer"), kacrab-protocol
//! 0.4 ("kacrab") and krabka-protocol 0.8 ("krabka-owned",
//! "krabka-borrowed").
//!
//! A counting global allocator wraps the system allocator; this is a binary of
//! its own so that the counting never slows down the timed benchmarks. Prints
//! one line per workload and operation, the workspace bench's line with the
//! other peers appended:
//!
//! `allocs <decode|read> <workload> ours=<n> peer=<n> kacrab=<n> krabka-owned=<n> krabka-borrowed=<n> heap_ours=<bytes> heap_peer=<bytes> heap_kacrab=<bytes> heap_krabka-owned=<bytes> heap_krabka-borrowed=<bytes> wire=<bytes>`
//!
//! An allocation is a call to `alloc`, `alloc_zeroed` or `realloc`; the heap
//! figure is the peak of live heap bytes during the decode, above what was
//! live before it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use kafka_wire_peers::{for_each_workload, Peers, Visitor, CRATES};

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
    fn visit<W: Peers>(&mut self) {
        let wire = W::wire();
        // The peers that decode from a clone: the first clone of a
        // vector-backed `Bytes` allocates its shared header, so do that
        // before counting.
        drop(wire.clone());
        let decode = [
            measure(|| W::decode_ours(black_box(&wire[..]))),
            measure(|| W::decode_peer(black_box(&wire))),
            measure(|| W::decode_kacrab(black_box(&wire))),
            measure(|| W::decode_krabka_owned(black_box(&wire))),
            measure(|| W::decode_krabka_borrowed(black_box(&wire[..]))),
        ];
        report("decode", W::NAME, decode, wire.len());
        let read = [
            measure(|| W::read_ours(&W::decode_ours(black_box(&wire[..])))),
            measure(|| W::read_peer(&W::decode_peer(black_box(&wire)))),
            measure(|| W::read_kacrab(&W::decode_kacrab(black_box(&wire)))),
            measure(|| W::read_krabka_owned(&W::decode_krabka_owned(black_box(&wire)))),
            measure(|| W::read_krabka_borrowed(&W::decode_krabka_borrowed(black_box(&wire[..])))),
        ];
        report("read", W::NAME, read, wire.len());
    }
}

/// Prints one `allocs` line.
fn report(op: &str, workload: &str, counts: [(usize, usize); 5], wire: usize) {
    let mut line = format!("allocs {op} {workload}");
    for (name, (allocations, _)) in CRATES.iter().zip(counts) {
        line += &format!(" {name}={allocations}");
    }
    for (name, (_, heap)) in CRATES.iter().zip(counts) {
        line += &format!(" heap_{name}={heap}");
    }
    println!("{line} wire={wire}");
}

fn main() {
    for_each_workload(&mut Allocs);
}
