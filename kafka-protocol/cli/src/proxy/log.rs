//! The exchange log: one JSON object per line, in the order responses
//! arrive. The key names are pinned; outside tools read them.
//!
//! The relaying path only queues an [`Entry`] (frames are shared, not
//! copied); a thread of its own decodes, redacts and writes. The queue is
//! bounded in entries and in the bytes its entries keep alive. When the
//! writer falls behind, entries are dropped and counted, never waited for,
//! and the next line written is `{"dropped": N}`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;

use serde_json::json;

use super::entry::Entry;
use crate::error::CliError;

/// Entries the queue holds at most.
const QUEUE_ENTRIES: usize = 4096;

/// Bytes of frames the queued entries may keep alive together.
const QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// What the writer thread is sent.
enum Message {
    /// An entry to write.
    Entry(Entry),
    /// Write what is pending, flush, and say so.
    Flush(mpsc::Sender<()>),
}

/// Counters shared by the queue's two ends.
#[derive(Default)]
struct Counters {
    /// Entries dropped since the last `{"dropped": N}` line.
    dropped: AtomicU64,
    /// Entries queued and not yet written.
    queued: AtomicUsize,
    /// Bytes the queued entries keep alive.
    queued_bytes: AtomicUsize,
}

/// Where exchange lines go: a file or standard output, through a bounded
/// queue and a writer thread.
pub struct ExchangeLog {
    queue: SyncSender<Message>,
    counters: Arc<Counters>,
}

impl ExchangeLog {
    /// Opens `path` for writing (truncating it), or standard output for
    /// `-`, and starts the writer; lines longer than `max_line` bytes have
    /// their bodies truncated.
    pub fn open(path: &Path, max_line: usize) -> Result<Self, CliError> {
        let out: Box<dyn Write + Send> = if path == Path::new("-") {
            Box::new(std::io::stdout())
        } else {
            let file = File::create(path).map_err(|source| CliError::ProxyStart {
                what: format!("cannot create the log {}", path.display()),
                source,
            })?;
            Box::new(BufWriter::new(file))
        };
        Self::start(out, max_line, QUEUE_ENTRIES).map_err(|source| CliError::ProxyStart {
            what: "cannot start the log's writer".into(),
            source,
        })
    }

    /// A log writing to `out`, whose queue holds `entries` at most.
    fn start(out: Box<dyn Write + Send>, max_line: usize, entries: usize) -> std::io::Result<Self> {
        let (queue, receiver) = mpsc::sync_channel(entries);
        let counters = Arc::new(Counters::default());
        let shared = Arc::clone(&counters);
        std::thread::Builder::new()
            .name("proxy-log".into())
            .spawn(move || write_lines(&receiver, out, max_line, &shared))?;
        Ok(ExchangeLog { queue, counters })
    }

    /// Queues an entry, or drops and counts it when the writer is behind.
    /// Never blocks.
    pub fn submit(&self, entry: Entry) {
        let bytes = entry.held_bytes();
        let counters = &self.counters;
        let before = counters.queued_bytes.fetch_add(bytes, Ordering::Relaxed);
        counters.queued.fetch_add(1, Ordering::Relaxed);
        let over_budget = before > 0 && before.saturating_add(bytes) > QUEUE_BYTES;
        if over_budget || self.queue.try_send(Message::Entry(entry)).is_err() {
            counters.queued_bytes.fetch_sub(bytes, Ordering::Relaxed);
            counters.queued.fetch_sub(1, Ordering::Relaxed);
            counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Writes everything queued so far and flushes it: waits for the
    /// writer.
    pub fn flush(&self) {
        let (done, wait) = mpsc::channel();
        if self.queue.send(Message::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
    }
}

/// The writer thread: one line per entry, a `{"dropped": N}` line first
/// whenever entries were dropped since the last one. It ends when the log
/// is dropped.
fn write_lines(
    receiver: &Receiver<Message>,
    mut out: Box<dyn Write + Send>,
    max_line: usize,
    counters: &Counters,
) {
    while let Ok(message) = receiver.recv() {
        report_dropped(&mut out, counters);
        match message {
            Message::Entry(entry) => {
                write_line(&mut out, &entry.to_line(max_line));
                counters
                    .queued_bytes
                    .fetch_sub(entry.held_bytes(), Ordering::Relaxed);
                drop(entry);
                // Flushed once the queue is empty: a reader of the file
                // sees each line soon, without a flush per line under load.
                if counters.queued.fetch_sub(1, Ordering::Relaxed) == 1 {
                    let _ = out.flush();
                }
            }
            Message::Flush(done) => {
                let _ = out.flush();
                let _ = done.send(());
            }
        }
    }
    report_dropped(&mut out, counters);
    let _ = out.flush();
}

/// Writes `{"dropped": N}` when entries were dropped since the last time.
fn report_dropped(out: &mut Box<dyn Write + Send>, counters: &Counters) {
    let dropped = counters.dropped.swap(0, Ordering::Relaxed);
    if dropped > 0 {
        write_line(out, &json!({ "dropped": dropped }).to_string());
    }
}

/// Writes one line. A full disk or a closed pipe must not stop the
/// traffic, so failures are ignored.
fn write_line(out: &mut Box<dyn Write + Send>, line: &str) {
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::Receiver as GateReceiver;

    /// Output that waits for a signal before each write, so that the
    /// writer falls behind, and keeps what it was given.
    struct Gated {
        gate: GateReceiver<()>,
        written: Arc<std::sync::Mutex<Vec<u8>>>,
    }

    impl Write for Gated {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if bytes != b"\n" {
                let _ = self.gate.recv();
            }
            if let Ok(mut written) = self.written.lock() {
                written.extend_from_slice(bytes);
            }
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn error(n: usize) -> Entry {
        Entry::Error {
            client: format!("client-{n}"),
            message: "gone".into(),
        }
    }

    #[test]
    fn a_writer_that_falls_behind_drops_and_counts_never_blocks() {
        let (open, gate) = mpsc::channel();
        let written = Arc::new(std::sync::Mutex::new(Vec::new()));
        let out = Gated {
            gate,
            written: Arc::clone(&written),
        };
        let log = ExchangeLog::start(Box::new(out), 1 << 20, 2).unwrap();
        // The writer takes the first entry and waits at its write; two more
        // fill the queue; the rest are dropped at once.
        for n in 0..10 {
            log.submit(error(n));
            if n == 0 {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        for _ in 0..100 {
            let _ = open.send(());
        }
        log.flush();
        let text = String::from_utf8(written.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let errors = lines.iter().filter(|l| l.get("error").is_some()).count();
        let dropped: u64 = lines
            .iter()
            .filter_map(|l| l.get("dropped").and_then(serde_json::Value::as_u64))
            .sum();
        assert_eq!(errors, 3, "{text}");
        assert_eq!(dropped, 7, "{text}");
    }
}
