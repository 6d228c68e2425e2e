//! Runs one operation of one workload a given number of times, so that
//! `benches/instructions` can count its instructions under callgrind: the
//! count of a run of 2N iterations minus that of N is the cost of N
//! iterations, without the setup.
//!
//! ```sh
//! cargo run --release -p kafka-wire-benches --example instructions -- decode metadata_v13_1000x10 ours 100
//! ```
//!
//! Operations: `decode`, `read` (decode, then read every field), `encode`
//! (the value as code builds it for ours, the decoded value for the peer)
//! and `reencode` (our decoded value). Crates: `ours`, `peer`.

use std::hint::black_box;
use std::process::ExitCode;

use kafka_wire_benches::{for_each_workload, Visitor, Workload};

struct Run {
    op: String,
    workload: String,
    ours: bool,
    iterations: u64,
    found: bool,
}

impl Visitor for Run {
    fn visit<W: Workload>(&mut self) {
        if W::NAME != self.workload {
            return;
        }
        self.found = true;
        let wire = W::wire();
        let mut sum = 0u64;
        match (self.op.as_str(), self.ours) {
            ("decode", true) => {
                for _ in 0..self.iterations {
                    drop(black_box(W::decode_ours(black_box(&wire[..]))));
                }
            }
            ("decode", false) => {
                for _ in 0..self.iterations {
                    drop(black_box(W::decode_peer(black_box(&wire))));
                }
            }
            ("read", true) => {
                for _ in 0..self.iterations {
                    sum ^= W::read_ours(&W::decode_ours(black_box(&wire[..])));
                }
            }
            ("read", false) => {
                for _ in 0..self.iterations {
                    sum ^= W::read_peer(&W::decode_peer(black_box(&wire)));
                }
            }
            ("encode", true) => {
                let built = W::built();
                for _ in 0..self.iterations {
                    sum ^= W::encode_ours(black_box(&built)).len() as u64;
                }
            }
            ("encode" | "reencode", false) => {
                let peer = W::decode_peer(&wire);
                for _ in 0..self.iterations {
                    sum ^= W::encode_peer(black_box(&peer)).len() as u64;
                }
            }
            ("reencode", true) => {
                let ours = W::decode_ours(&wire);
                for _ in 0..self.iterations {
                    sum ^= W::encode_ours(black_box(&ours)).len() as u64;
                }
            }
            (op, _) => {
                eprintln!("unknown operation {op}: decode, read, encode or reencode");
                self.found = false;
            }
        }
        black_box(sum);
    }
}

/// Collects the workload names.
struct Names(Vec<&'static str>);

impl Visitor for Names {
    fn visit<W: Workload>(&mut self) {
        self.0.push(W::NAME);
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("list") {
        let mut names = Names(Vec::new());
        for_each_workload(&mut names);
        for name in names.0 {
            println!("{name}");
        }
        return ExitCode::SUCCESS;
    }
    let [op, workload, who, iterations] = &args[..] else {
        eprintln!("usage: instructions <decode|read|encode|reencode> <workload> <ours|peer> <iterations> | list");
        return ExitCode::FAILURE;
    };
    let Ok(iterations) = iterations.parse() else {
        eprintln!("iterations must be a number: {iterations}");
        return ExitCode::FAILURE;
    };
    let mut run = Run {
        op: op.clone(),
        workload: workload.clone(),
        ours: who == "ours",
        iterations,
        found: false,
    };
    for_each_workload(&mut run);
    if run.found {
        ExitCode::SUCCESS
    } else {
        eprintln!("no workload {workload} (see `instructions list`)");
        ExitCode::FAILURE
    }
}
