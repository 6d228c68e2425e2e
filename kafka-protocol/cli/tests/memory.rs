//! `decode` prints a body without building its JSON form in memory, and
//! decodes it without building its arrays: the peak resident memory of
//! decoding and printing a body of S bytes stays under 3 x S + 64 MiB (the
//! bound users are promised), and in fact under S + 32 MiB (the input, read
//! once, and no heap that grows with it), however many tiny elements it
//! holds.
//!
//! Two bodies, each made of tiny elements:
//! - an ApiVersions v0 response of millions of six-byte `api_keys` entries
//!   (each printed as about fifty bytes of JSON, and once taken as a JSON
//!   tree some 50 to 100 times its wire size);
//! - a Metadata v12 response of hundreds of thousands of topics, each with
//!   one partition: an array of structs that hold arrays of structs, which a
//!   decode for reuse builds as `Vec`s of about four times the input.
//!
//! Each body is written to a file as it is made, so that this process stays
//! small: a child's peak, as `wait4` reports it, starts from the peak of the
//! process that spawned it (Linux keeps it across `exec`), which is reset
//! to the current size first (`/proc/self/clear_refs`). The bodies are
//! decoded one after the other, alone in this test binary, so nothing else
//! runs beside them.
//!
//! `KAFKA_WIRE_MEMORY_TEST_MIB` sets each body's size in MiB (20 by
//! default, at least 20; the figures in docs/cli.md are for 100, with a
//! release build).

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MIB: usize = 1 << 20;

/// A file for a body, in the temporary directory, removed when dropped.
struct BodyFile(PathBuf);

impl BodyFile {
    /// Writes a body through `write`, which returns the number of JSON
    /// objects the body prints as.
    fn write(
        what: &str,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<usize>,
    ) -> (Self, usize, usize) {
        let path = std::env::temp_dir().join(format!(
            "kafka-protocol-memory-{}-{what}.bin",
            std::process::id()
        ));
        let file = BodyFile(path);
        let mut out = BufWriter::new(
            File::create(&file.0).unwrap_or_else(|e| panic!("{}: {e}", file.0.display())),
        );
        let objects = write(&mut out)
            .and_then(|objects| out.flush().map(|()| objects))
            .unwrap_or_else(|e| panic!("{}: {e}", file.0.display()));
        drop(out);
        let size = std::fs::metadata(&file.0)
            .map(|m| m.len() as usize)
            .unwrap_or_else(|e| panic!("{}: {e}", file.0.display()));
        (file, size, objects)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for BodyFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// An ApiVersions v0 response body of `entries` api_keys entries; it
/// prints as one object per entry and the outer one.
fn api_versions_v0(out: &mut dyn Write, entries: usize) -> std::io::Result<usize> {
    let count = i32::try_from(entries).unwrap_or_else(|e| panic!("{e}"));
    out.write_all(&0i16.to_be_bytes())?;
    out.write_all(&count.to_be_bytes())?;
    for index in 0..entries {
        // Key, lowest and highest version, varied so that no two lines of
        // output repeat each other for long.
        let key = (index % 30_000) as i16;
        out.write_all(&key.to_be_bytes())?;
        out.write_all(&((index % 7) as i16).to_be_bytes())?;
        out.write_all(&((index % 13) as i16 + 7).to_be_bytes())?;
    }
    Ok(entries + 1)
}

/// An unsigned varint.
fn uvarint(out: &mut dyn Write, mut value: usize) -> std::io::Result<()> {
    while value >= 0x80 {
        out.write_all(&[(value as u8 & 0x7f) | 0x80])?;
        value >>= 7;
    }
    out.write_all(&[value as u8])
}

/// A Metadata v12 response body of `topics` topics of one partition each,
/// written field by field in the schema's order (about 50 bytes a topic);
/// it prints as the outer object, and one per topic and per partition.
fn metadata_v12(out: &mut dyn Write, topics: usize) -> std::io::Result<usize> {
    out.write_all(&0i32.to_be_bytes())?; // throttle_time_ms
    uvarint(out, 1)?; // brokers: empty
    uvarint(out, 0)?; // cluster_id: null
    out.write_all(&(-1i32).to_be_bytes())?; // controller_id
    uvarint(out, topics + 1)?;
    for index in 0..topics {
        let name = format!("t{index}");
        out.write_all(&0i16.to_be_bytes())?; // error_code
        uvarint(out, name.len() + 1)?;
        out.write_all(name.as_bytes())?;
        out.write_all(&(index as u128 + 1).to_be_bytes())?; // topic_id
        out.write_all(&[0])?; // is_internal
        uvarint(out, 2)?; // partitions: one
        out.write_all(&0i16.to_be_bytes())?; // error_code
        out.write_all(&0i32.to_be_bytes())?; // partition_index
        out.write_all(&((index % 3) as i32).to_be_bytes())?; // leader_id
        out.write_all(&((index % 11) as i32).to_be_bytes())?; // leader_epoch
                                                              // replica_nodes, isr_nodes, offline_replicas: empty; no tags.
        out.write_all(&[1, 1, 1, 0])?;
        out.write_all(&i32::MIN.to_be_bytes())?; // topic_authorized_operations
        out.write_all(&[0])?; // the topic's tagged fields
    }
    out.write_all(&[0])?; // the body's tagged fields
    Ok(1 + 2 * topics)
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

/// Runs `kafka-protocol decode` with `args` on the body in `file`, of
/// `size` bytes, and checks that every object was printed and that the
/// peak stayed under both bounds.
fn decode_within_bound(
    what: &str,
    (file, size, objects_expected): (BodyFile, usize, usize),
    args: &[&str],
) {
    // Resets this process's peak to its current size, which the child's
    // peak would otherwise start from (see the module's doc).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let started = std::time::Instant::now();
    let (objects, tail, code, peak) = run_measured(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
            .arg("decode")
            .args(args)
            .arg("--response")
            .arg(file.path())
            .arg("--compact"),
    );
    drop(file);
    let promised = 3 * size + 64 * MIB;
    let heap_free = size + 32 * MIB;
    eprintln!(
        "{what}: body {size} bytes ({objects_expected} objects): peak RSS {peak} bytes \
         ({:.2} x body), bounds {promised} and {heap_free}, {:.1} s",
        peak as f64 / size as f64,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(code, 0, "kafka-protocol failed on the {what} body");
    assert_eq!(objects, objects_expected, "{what}: objects printed");
    assert!(
        tail.ends_with(b"}\n"),
        "{what}: {}",
        String::from_utf8_lossy(&tail)
    );
    assert!(
        peak < promised,
        "{what}: peak RSS {peak} bytes for a body of {size}: over 3 x S + 64 MiB = {promised}"
    );
    assert!(
        peak < heap_free,
        "{what}: peak RSS {peak} bytes for a body of {size}: over S + 32 MiB = {heap_free}, \
         so decoding took heap that grows with the input"
    );
}

#[test]
fn decoding_and_printing_a_large_body_stays_within_three_times_its_size() {
    let mib = std::env::var("KAFKA_WIRE_MEMORY_TEST_MIB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(20)
        .max(20);

    let entries = (mib * MIB - 6) / 6;
    decode_within_bound(
        "ApiVersions v0",
        BodyFile::write("api-versions", |out| api_versions_v0(out, entries)),
        &["--api", "ApiVersions", "--version", "0"],
    );

    let topics = mib * MIB / 50;
    decode_within_bound(
        "Metadata v12",
        BodyFile::write("metadata", |out| metadata_v12(out, topics)),
        &["--api", "Metadata", "--version", "12"],
    );
}
