//! `decode` prints a body without building its JSON form in memory: the
//! peak resident memory of decoding and printing a body of S bytes stays
//! under 3 x S + 64 MiB, however many tiny elements it holds.
//!
//! The body is an ApiVersions v0 response of millions of six-byte
//! `api_keys` entries (each printed as about fifty bytes of JSON, and once
//! taken as a JSON tree some 50 to 100 times its wire size). The child's
//! peak is read exactly, from the resource usage `wait4` returns for it.
//! It is alone in this test binary, so nothing else runs beside it.
//!
//! `KAFKA_WIRE_MEMORY_TEST_MIB` sets the body's size in MiB (20 by default,
//! at least 20; the figure in docs/cli.md is for 100, with a release build).

use std::io::{Read, Write};
use std::process::{Command, Stdio};

const MIB: usize = 1 << 20;

/// An ApiVersions v0 response body of `entries` api_keys entries.
fn api_versions_v0(entries: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(6 + 6 * entries);
    body.extend_from_slice(&0i16.to_be_bytes());
    let count = i32::try_from(entries).unwrap_or_else(|e| panic!("{e}"));
    body.extend_from_slice(&count.to_be_bytes());
    for index in 0..entries {
        // Key, lowest and highest version, varied so that no two lines of
        // output repeat each other for long.
        let key = (index % 30_000) as i16;
        body.extend_from_slice(&key.to_be_bytes());
        body.extend_from_slice(&((index % 7) as i16).to_be_bytes());
        body.extend_from_slice(&((index % 13) as i16 + 7).to_be_bytes());
    }
    body
}

/// Runs `command`, counting the `{` of its standard output (one per
/// object) and keeping its last bytes, and returns them with its exit
/// status and its peak resident memory in bytes.
// The child is reaped by wait4, which std's `wait` cannot stand in for: it
// does not give the resource usage.
#[allow(clippy::zombie_processes)]
fn run_measured(command: &mut Command) -> (usize, Vec<u8>, i32, usize) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let mut stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        let mut objects = 0usize;
        let mut tail = Vec::new();
        loop {
            let n = stdout
                .read(&mut buf)
                .unwrap_or_else(|e| panic!("read: {e}"));
            if n == 0 {
                break;
            }
            objects += buf[..n].iter().filter(|&&b| b == b'{').count();
            tail.extend_from_slice(&buf[..n]);
            let keep = tail.len().saturating_sub(64);
            tail.drain(..keep);
        }
        (objects, tail)
    });
    let pid = libc::pid_t::try_from(child.id()).unwrap_or_else(|e| panic!("{e}"));
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data, for which all zero bytes are valid;
    // wait4 writes it and `status`, both owned here, and reaps the child
    // that std spawned and has not waited for.
    let (waited, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let waited = libc::wait4(pid, &mut status, 0, &mut usage);
        (waited, usage)
    };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let (objects, tail) = reader.join().unwrap_or_else(|_| panic!("reader panicked"));
    // Linux gives the peak in KiB.
    let peak = usize::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (objects, tail, code, peak)
}

#[test]
fn decoding_and_printing_a_large_body_stays_within_three_times_its_size() {
    let mib = std::env::var("KAFKA_WIRE_MEMORY_TEST_MIB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(20)
        .max(20);
    let entries = (mib * MIB - 6) / 6;
    let body = api_versions_v0(entries);
    let size = body.len();
    let path = std::env::temp_dir().join(format!(
        "kafka-protocol-memory-{}-{mib}.bin",
        std::process::id()
    ));
    std::fs::File::create(&path)
        .and_then(|mut file| file.write_all(&body))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    drop(body);

    let started = std::time::Instant::now();
    let (objects, tail, code, peak) = run_measured(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
            .args([
                "decode",
                "--api",
                "ApiVersions",
                "--version",
                "0",
                "--response",
            ])
            .arg(&path)
            .arg("--compact"),
    );
    let _ = std::fs::remove_file(&path);
    let bound = 3 * size + 64 * MIB;
    eprintln!(
        "body {size} bytes ({entries} entries): peak RSS {peak} bytes ({:.2} x body), \
         bound {bound}, {:.1} s",
        peak as f64 / size as f64,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(code, 0, "kafka-protocol failed");
    // The outer object and one per entry: the output is complete.
    assert_eq!(objects, entries + 1, "entries printed");
    assert!(
        tail.ends_with(b"}]}\n"),
        "{}",
        String::from_utf8_lossy(&tail)
    );
    assert!(
        peak < bound,
        "peak RSS {peak} bytes for a body of {size}: over 3 x S + 64 MiB = {bound}"
    );
}
