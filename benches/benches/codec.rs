//! Decode and encode times of kafka-wire ("ours") and kafka-protocol 0.18
//! ("peer") on the same bytes.
//!
//! Groups are named `<op>_<workload>`, each with an `ours` and a `peer`
//! function, so that criterion's estimates land in
//! `target/criterion/<op>_<workload>/<crate>/new/estimates.json`, where
//! `benches/run` reads them. The operations:
//!
//! - `decode`: decode from the bytes, and drop the result.
//! - `encode`: encode into a buffer pre-sized from the computed size; ours
//!   encodes the value as code builds it ([`Workload::built`]), the peer its
//!   decoded value (it has only the one form).
//! - `reencode`: ours encodes its decoded value, whose arrays of structs are
//!   copied when canonical, as these are (a proxy forwarding a message); the
//!   peer as above.
//! - `read`: decode, then read every field of every element into a checksum
//!   (see `kafka_wire_benches::read`); both crates' checksums are equal.
//! - `validate_metadata_v13_1000x10`: our validate-only pass (`ours`)
//!   against a hand-written scan (`scan`) and the peer's decode (`peer`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafka_wire::messages::MetadataResponse;
use kafka_wire::runtime::Message;
use kafka_wire_benches::{
    check_roundtrip, for_each_workload, scan_metadata_response_v13, MetadataV13, Visitor, Workload,
};

struct Bench<'c>(&'c mut Criterion);

impl Visitor for Bench<'_> {
    fn visit<W: Workload>(&mut self) {
        // Same bytes for both crates, and both must round-trip them.
        check_roundtrip::<W>();
        let wire = W::wire();
        let throughput = Throughput::Bytes(wire.len() as u64);

        let mut group = self.0.benchmark_group(format!("decode_{}", W::NAME));
        group.throughput(throughput.clone());
        // The decoded value is returned, so its drop is timed too.
        group.bench_function("ours", |b| b.iter(|| W::decode_ours(black_box(&wire[..]))));
        group.bench_function("peer", |b| b.iter(|| W::decode_peer(black_box(&wire))));
        group.finish();

        let built = W::built();
        let ours = W::decode_ours(&wire);
        let peer = W::decode_peer(&wire);
        let mut group = self.0.benchmark_group(format!("encode_{}", W::NAME));
        group.throughput(throughput.clone());
        group.bench_function("ours", |b| b.iter(|| W::encode_ours(black_box(&built))));
        group.bench_function("peer", |b| b.iter(|| W::encode_peer(black_box(&peer))));
        group.finish();

        let mut group = self.0.benchmark_group(format!("reencode_{}", W::NAME));
        group.throughput(throughput.clone());
        group.bench_function("ours", |b| b.iter(|| W::encode_ours(black_box(&ours))));
        group.bench_function("peer", |b| b.iter(|| W::encode_peer(black_box(&peer))));
        group.finish();

        let mut group = self.0.benchmark_group(format!("read_{}", W::NAME));
        group.throughput(throughput);
        group.bench_function("ours", |b| {
            b.iter(|| W::read_ours(&W::decode_ours(black_box(&wire[..]))))
        });
        group.bench_function("peer", |b| {
            b.iter(|| W::read_peer(&W::decode_peer(black_box(&wire))))
        });
        group.finish();
    }
}

/// Our validate-only pass against a hand-written scan, on the Metadata bytes.
fn validate(c: &mut Criterion) {
    let wire = MetadataV13::wire();
    assert!(scan_metadata_response_v13(&wire));
    assert!(MetadataResponse::validate(&wire, 13).is_ok());
    let mut group = c.benchmark_group(format!("validate_{}", MetadataV13::NAME));
    group.throughput(Throughput::Bytes(wire.len() as u64));
    group.bench_function("ours", |b| {
        b.iter(|| MetadataResponse::validate(black_box(&wire[..]), 13))
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

/// Short runs: 49 benchmarks must fit in a few minutes. Criterion's own
/// command-line options (`--measurement-time` and so on) still override these.
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
