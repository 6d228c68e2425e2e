//! The guides, whose Rust blocks run as this crate's doc tests (`cargo
//! test -p kafka-wire-docs --doc`), and whose shell, console and Python
//! blocks `run_blocks.py` runs (`tests/blocks.rs`). A block that cannot run
//! says why: `no_run` or `ignore` with the reason beside it for Rust, an
//! HTML comment `<!-- not run: why -->` before the others.
//!
//! kafka-wire-fake's README is that crate's own documentation, tested
//! there.

// A build script's `fn main` is what codegen's README shows.
#![allow(clippy::needless_doctest_main)]

#[doc = include_str!("../../README.md")]
pub mod readme {}

#[doc = include_str!("../../docs/captures.md")]
pub mod captures {}

#[doc = include_str!("../../docs/cli.md")]
pub mod cli {}

#[doc = include_str!("../../docs/compat.md")]
pub mod compat {}

#[doc = include_str!("../../docs/fake-cluster.md")]
pub mod fake_cluster {}

#[doc = include_str!("../../docs/generator.md")]
pub mod generator {}

#[doc = include_str!("../../docs/library.md")]
pub mod library {}

#[doc = include_str!("../../docs/packages.md")]
pub mod packages {}

#[doc = include_str!("../../docs/proxy.md")]
pub mod proxy {}

#[doc = include_str!("../../docs/real-kafka.md")]
pub mod real_kafka {}

#[doc = include_str!("../../docs/semantics.md")]
pub mod semantics {}

#[doc = include_str!("../../codegen/README.md")]
pub mod codegen_readme {}

#[doc = include_str!("../../kafka-protocol/capture/README.md")]
pub mod capture_readme {}

#[doc = include_str!("../../kafka-protocol/cli/README.md")]
pub mod cli_readme {}

#[doc = include_str!("../../kafka-protocol/compat/README.md")]
pub mod compat_readme {}

#[doc = include_str!("../../kafka-protocol/junit/README.md")]
pub mod junit_readme {}

#[doc = include_str!("../../kafka-protocol/npm/kafka-wire/README.md")]
pub mod npm_readme {}

#[doc = include_str!("../../kafka-protocol/proxy/README.md")]
pub mod proxy_readme {}

#[doc = include_str!("../../kafka-protocol/python/README.md")]
pub mod python_readme {}

#[doc = include_str!("../../kafka-protocol/records/README.md")]
pub mod records_readme {}

#[doc = include_str!("../../kafka-protocol/wire/README.md")]
pub mod wire_readme {}
