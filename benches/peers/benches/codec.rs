//! Decode, read and encode times of kafka-wire ("ours"), kafka-protocol 0.18
//! ("peer"), kacrab-protocol 0.4 ("kacrab") and krabka-protocol 0.8 (owned
//! decode "krabka-owned", borrowed decode "krabka-borrowed") on the same
//! bytes, in one run.
//!
//! Groups are named `<op>_<workload>`, with one function per crate, so that
//! criterion's estimates land in
//! `<target>/criterion/<op>_<workload>/<crate>/new/estimates.json`, where
//! `benches/run` reads them. The operations, as in the workspace's own
//! `kafka-wire-benches` bench:
//!
//! - `decode`: decode from the bytes, and drop the result. Ours and
//!   krabka-borrowed decode `&bytes[..]`; the others a clone of the `Bytes`.
//! - `encode`: encode into a buffer pre-sized from the computed size; ours
//!   encodes the value as code builds it, every peer its decoded value.
//! - `read`: decode, then read every field of every element into a checksum
//!   that every crate computes alike.
//! - `reencode` (ours and kafka-protocol): ours encodes its decoded value.
//! - `floor` (kafka-protocol and ours): the read's checksum over a value
//!   already decoded. kafka-protocol's is issue 23's floor, the consumer's
//!   own work; its read time over that floor is the best ratio any codec
//!   could show.
//! - `validate_metadata_v13_1000x10`: our validate-only pass (`ours`) against
//!   a hand-written scan (`scan`) and kafka-protocol's decode (`peer`).

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use kafka_wire::messages::MetadataResponse;
use kafka_wire::runtime::Message;
use kafka_wire_benches::{scan_metadata_response_v13, MetadataV13, Workload};
use kafka_wire_peers::{check_peers, for_each_workload, Peers, Visitor};

struct Bench<'c>(&'c mut Criterion);

impl Bench<'_> {
    fn group(&mut self, op: &str, workload: &str, bytes: usize) -> BenchmarkGroup<'_, WallTime> {
        let mut group = self.0.benchmark_group(format!("{op}_{workload}"));
        group.throughput(Throughput::Bytes(bytes as u64));
        group
    }
}

impl Visitor for Bench<'_> {
    fn visit<W: Peers>(&mut self) {
        // Same bytes for every crate, and every one must round-trip them.
        let len = check_peers::<W>();
        let wire = W::wire();

        let mut group = self.group("decode", W::NAME, len);
        // The decoded value is returned, so its drop is timed too.
        group.bench_function("ours", |b| b.iter(|| W::decode_ours(black_box(&wire[..]))));
        group.bench_function("peer", |b| b.iter(|| W::decode_peer(black_box(&wire))));
        group.bench_function("kacrab", |b| b.iter(|| W::decode_kacrab(black_box(&wire))));
        group.bench_function("krabka-owned", |b| {
            b.iter(|| W::decode_krabka_owned(black_box(&wire)))
        });
        group.bench_function("krabka-borrowed", |b| {
            b.iter(|| W::decode_krabka_borrowed(black_box(&wire[..])))
        });
        group.finish();

        let mut group = self.group("read", W::NAME, len);
        group.bench_function("ours", |b| {
            b.iter(|| W::read_ours(&W::decode_ours(black_box(&wire[..]))))
        });
        group.bench_function("peer", |b| {
            b.iter(|| W::read_peer(&W::decode_peer(black_box(&wire))))
        });
        group.bench_function("kacrab", |b| {
            b.iter(|| W::read_kacrab(&W::decode_kacrab(black_box(&wire))))
        });
        group.bench_function("krabka-owned", |b| {
            b.iter(|| W::read_krabka_owned(&W::decode_krabka_owned(black_box(&wire))))
        });
        group.bench_function("krabka-borrowed", |b| {
            b.iter(|| W::read_krabka_borrowed(&W::decode_krabka_borrowed(black_box(&wire[..]))))
        });
        group.finish();

        let built = W::built();
        let ours = W::decode_ours(&wire);
        let peer = W::decode_peer(&wire);
        // The floor of a read: the checksum alone, over a value
        // kafka-protocol has already decoded (`peer`), and our read of a
        // value already decoded (`ours`: arrays kept as checked bytes are
        // decoded as they are read).
        let mut group = self.group("floor", W::NAME, len);
        group.bench_function("peer", |b| b.iter(|| W::read_peer(black_box(&peer))));
        group.bench_function("ours", |b| b.iter(|| W::read_ours(black_box(&ours))));
        group.finish();

        let kacrab = W::decode_kacrab(&wire);
        let owned = W::decode_krabka_owned(&wire);
        let borrowed = W::decode_krabka_borrowed(&wire);
        let mut group = self.group("encode", W::NAME, len);
        group.bench_function("ours", |b| b.iter(|| W::encode_ours(black_box(&built))));
        group.bench_function("peer", |b| b.iter(|| W::encode_peer(black_box(&peer))));
        group.bench_function("kacrab", |b| {
            b.iter(|| W::encode_kacrab(black_box(&kacrab)))
        });
        group.bench_function("krabka-owned", |b| {
            b.iter(|| W::encode_krabka_owned(black_box(&owned)))
        });
        group.bench_function("krabka-borrowed", |b| {
            b.iter(|| W::encode_krabka_borrowed(black_box(&borrowed)))
        });
        group.finish();

        let mut group = self.group("reencode", W::NAME, len);
        group.bench_function("ours", |b| b.iter(|| W::encode_ours(black_box(&ours))));
        group.bench_function("peer", |b| b.iter(|| W::encode_peer(black_box(&peer))));
        group.finish();
    }
}

/// Our validate-only pass against a hand-written scan, on the Metadata bytes.
fn validate(c: &mut Criterion) {
    let wire = MetadataV13::wire();
    assert!(scan_metadata_response_v13(&wire));
    assert!(MetadataResponse::validate(&wire, MetadataV13::VERSION).is_ok());
    let mut group = c.benchmark_group(format!("validate_{}", MetadataV13::NAME));
    group.throughput(Throughput::Bytes(wire.len() as u64));
    group.bench_function("ours", |b| {
        b.iter(|| MetadataResponse::validate(black_box(&wire[..]), MetadataV13::VERSION))
    });
    group.bench_function("scan", |b| {
        b.iter(|| scan_metadata_response_v13(black_box(&wire[..])))
    });
    group.bench_function("peer", |b| {
        b.iter(|| MetadataV13::decode_peer(black_box(&wire)))
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    for_each_workload(&mut Bench(c));
}

/// Short runs: about 150 benchmarks must fit in a quarter of an hour.
/// Criterion's own command-line options (`--measurement-time` and so on)
/// still override these.
fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
        .without_plots()
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = codec, validate
}
criterion_main!(benches);
