//! Recording frames: one JSON line per request or response, in one file,
//! in the form the retired example `mini_broker --capture` wrote (`seq`, `connection`,
//! `direction`, `api_key`, `api_name`, `api_version`, `correlation_id`,
//! `client_id`, `hex`), flushed line by line so that a failing test can
//! show the last frames exchanged.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Which way a frame went.
#[derive(Debug, Clone, Copy)]
pub enum Direction {
    /// From the client.
    Request,
    /// To the client.
    Response,
}

/// What is known about a frame besides its bytes.
#[derive(Debug, Clone, Copy)]
pub struct FrameInfo<'a> {
    /// The connection (numbered from 1 across the cluster).
    pub connection: u64,
    /// The api key of the request, or of the request a response answers.
    pub api_key: i16,
    /// The api version (of the body as encoded, for responses).
    pub api_version: i16,
    /// The correlation id.
    pub correlation_id: i32,
    /// The request's client id.
    pub client_id: Option<&'a str>,
}

/// The capture file.
#[derive(Debug)]
pub struct Capture {
    file: Mutex<File>,
    sequence: AtomicU64,
}

impl Capture {
    /// Creates (or truncates) the file.
    pub fn create(path: &Path) -> io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Capture {
            file: Mutex::new(File::create(path)?),
            sequence: AtomicU64::new(0),
        })
    }

    /// Appends one frame (without its size prefix).
    pub fn record(&self, direction: Direction, info: &FrameInfo<'_>, frame: &[u8]) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let line = serde_json::json!({
            "seq": self.sequence.fetch_add(1, Ordering::Relaxed),
            "connection": info.connection,
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
        // A failed write loses one line of a debugging aid, not the
        // exchange: the frame is still answered.
        let _ = writeln!(file, "{line}");
    }
}

fn to_hex(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}
