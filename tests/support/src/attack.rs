//! The size-prefix flood: many connections that each send only a 4-byte
//! size prefix claiming a huge frame, and never the frame. A server that
//! reserves room for each claimed frame runs out of memory; one that
//! reserves only for the bytes it received keeps serving everyone else.

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;

/// 1 GiB: the address-space limit the flood tests run servers under.
pub const ADDRESS_SPACE_LIMIT: u64 = 1 << 30;

/// A size prefix claiming a frame of 100 MiB, the default maximum, which a
/// server accepts and waits for.
pub const CLAIM_100_MIB: [u8; 4] = (100 * 1024 * 1024i32).to_be_bytes();

/// A command that runs `program` with its address space limited to
/// `limit` bytes (`ulimit -v`, through `sh`), so that a server that
/// reserves what peers only claim fails to allocate and aborts.
pub fn with_address_space_limit(program: &std::path::Path, limit: u64) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", limit / 1024))
        .arg(program);
    command
}

/// Opens `connections` connections to `address`, makes one complete
/// exchange on each with `exchange` (so that the server is reading each
/// one), then sends each [`CLAIM_100_MIB`] and nothing more, and gives the
/// server a moment to read the prefixes. Keep the streams alive for as long
/// as the claims should stand.
///
/// The pause only makes a faulty server fail sooner: a server that holds
/// only what it received passes however long it takes.
pub fn flood_with_size_prefixes(
    address: &str,
    connections: usize,
    mut exchange: impl FnMut(&mut TcpStream),
) -> Vec<TcpStream> {
    let streams: Vec<TcpStream> = (0..connections)
        .map(|i| {
            let mut stream = TcpStream::connect(address)
                .unwrap_or_else(|e| panic!("connection {i} to {address}: {e}"));
            exchange(&mut stream);
            stream
                .write_all(&CLAIM_100_MIB)
                .unwrap_or_else(|e| panic!("prefix {i} to {address}: {e}"));
            stream
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(500));
    streams
}
