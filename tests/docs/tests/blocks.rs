//! Every shell, console and Python block of the guides runs, and every TOML
//! and JSON block parses: `run_blocks.py`, with the `kafka-protocol` (and
//! `kafka-codegen`) built beside this test on PATH. It prints how many
//! blocks ran, per guide, on standard error. The Rust blocks are this crate's doc tests.
//!
//! Blocks that need a tool this machine lacks (tcpdump as root, kcat) are
//! skipped with a message, unless the matching `KAFKA_WIRE_REQUIRE_*` is
//! set (`.ci/run` sets them). Without python3 the whole test skips, unless
//! `KAFKA_WIRE_REQUIRE_INTEROP` is set.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory of the binaries built with this test (`target/debug`).
fn built_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current exe: {e}"));
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("{} has no profile directory", exe.display()))
        .to_owned();
    let cli = dir.join(format!("kafka-protocol{}", std::env::consts::EXE_SUFFIX));
    assert!(
        cli.is_file(),
        "{} is missing: build it first with `cargo build -p kafka-wire-cli` (README command 2, \
         `cargo test --workspace --all-features`, builds it)",
        cli.display()
    );
    dir
}

#[test]
fn the_guides_blocks_run_as_shown() {
    let python = Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|out| out.status.success()) {
        assert!(
            std::env::var_os("KAFKA_WIRE_REQUIRE_INTEROP").is_none(),
            "KAFKA_WIRE_REQUIRE_INTEROP is set, but python3 does not run"
        );
        eprintln!("skipped the guides' blocks: python3 does not run");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("run_blocks.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--bin-dir")
        .arg(built_dir())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Per guide, how many blocks ran: written past the test harness's
    // capture, so that the run's log shows it.
    let _ = writeln!(std::io::stderr(), "{}", stdout.trim_end());
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("all guides: "), "{stdout}");
}
