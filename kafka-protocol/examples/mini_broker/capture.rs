//! Recording frames: one JSON line per request or response, one file per
//! connection (`conn-0001.jsonl`, ...), flushed line by line so that a
//! failing test can show the last frames exchanged.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The directory frames are recorded in.
pub struct Capture {
    dir: PathBuf,
    sequence: Arc<AtomicU64>,
}

/// Which way a frame went.
#[derive(Debug, Clone, Copy)]
pub enum Direction {
    /// From the client.
    Request,
    /// To the client.
    Response,
}

/// What is known about a frame besides its bytes.
pub struct FrameInfo<'a> {
    /// The api key of the request (or of the request a response answers).
    pub api_key: i16,
    /// The api version.
    pub api_version: i16,
    /// The correlation id.
    pub correlation_id: i32,
    /// The client id of the request, when it has one.
    pub client_id: Option<&'a str>,
}

impl Capture {
    /// Creates `dir` if needed.
    pub fn create(dir: PathBuf) -> io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        Ok(Capture {
            dir,
            sequence: Arc::default(),
        })
    }

    /// Opens the file of connection number `connection`.
    pub fn connection(&self, connection: u64) -> io::Result<ConnectionCapture> {
        let path = self.dir.join(format!("conn-{connection:04}.jsonl"));
        Ok(ConnectionCapture {
            file: File::create(path)?,
            connection,
            sequence: Arc::clone(&self.sequence),
        })
    }
}

/// The capture file of one connection.
pub struct ConnectionCapture {
    file: File,
    connection: u64,
    /// Shared by all connections: orders frames across files.
    sequence: Arc<AtomicU64>,
}

impl ConnectionCapture {
    /// Appends one frame (without its size prefix). Small blocking writes:
    /// acceptable for an example, and they keep frames in order.
    pub fn record(&mut self, direction: Direction, info: &FrameInfo<'_>, frame: &[u8]) {
        let line = serde_json::json!({
            "seq": self.sequence.fetch_add(1, Ordering::Relaxed),
            "connection": self.connection,
            "direction": match direction {
                Direction::Request => "request",
                Direction::Response => "response",
            },
            "api_key": info.api_key,
            "api_name": kafka_wire::ApiKey::from_key(info.api_key).map(|api| api.name()),
            "api_version": info.api_version,
            "correlation_id": info.correlation_id,
            "client_id": info.client_id,
            "hex": to_hex(frame),
        });
        if let Err(e) = writeln!(self.file, "{line}") {
            eprintln!("capture: {e}");
        }
    }
}

fn to_hex(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}
