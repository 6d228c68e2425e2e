//! `proxy_load`: a small load generator for measuring `kafka-protocol
//! proxy` against going direct (see BENCHMARKS.md, "Proxy").
//!
//! ```sh
//! proxy_load <host:port> [--seconds S] [--connections C] [--depth D]
//! ```
//!
//! It writes about 1 MiB of records to topic `proxy-load` (64 KiB batches),
//! then measures:
//! - fetch throughput: C connections, each keeping D Fetch requests (v11,
//!   from offset 0, up to 1 MiB) in flight for S seconds; MiB/s of
//!   response frames received;
//! - round-trip latency: one connection sending ApiVersions v3 requests one
//!   at a time for S seconds; median and 99th percentile.

use std::borrow::Cow;
use std::error::Error;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use kafka_wire::frame::{read_frame, RequestFrame, DEFAULT_MAX_FRAME_SIZE};
use kafka_wire::messages::{
    fetch_request, metadata_request, produce_request, ApiVersionsRequest, FetchRequest,
    MetadataRequest, ProduceRequest, RequestHeader,
};
use kafka_wire::RequestBody;
use kafka_wire_records::RecordBatchBuilder;

type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

const TOPIC: &str = "proxy-load";

fn frame(body: RequestBody<'_>, version: i16, correlation_id: i32) -> Result<Vec<u8>> {
    let frame = RequestFrame {
        header: RequestHeader {
            request_api_key: body.api_key().key(),
            request_api_version: version,
            correlation_id,
            client_id: Some(Cow::Borrowed("proxy-load")),
            ..Default::default()
        },
        body,
    };
    let mut out = Vec::new();
    frame.encode_with_size(&mut out)?;
    Ok(out)
}

/// Reads one response frame; returns its size with the prefix.
fn read_response(stream: &mut TcpStream) -> Result<usize> {
    let frame = read_frame(stream, DEFAULT_MAX_FRAME_SIZE)?
        .ok_or("the connection closed before a response")?;
    Ok(frame.len() + 4)
}

fn setup(address: &str) -> Result<()> {
    let mut stream = TcpStream::connect(address)?;
    let metadata = MetadataRequest {
        topics: Some(
            vec![metadata_request::MetadataRequestTopic {
                name: Some(TOPIC.into()),
                ..Default::default()
            }]
            .into(),
        ),
        allow_auto_topic_creation: true,
        ..Default::default()
    };
    stream.write_all(&frame(metadata.into(), 12, 1)?)?;
    read_response(&mut stream)?;
    let value = vec![b'x'; 1024];
    for batch in 0..16 {
        let mut builder = RecordBatchBuilder::new(0);
        for i in 0..64 {
            builder.append(1_700_000_000_000 + i, None, Some(&value), &[])?;
        }
        let produce = ProduceRequest {
            acks: 1,
            timeout_ms: 10_000,
            topic_data: vec![produce_request::TopicProduceData {
                name: TOPIC.into(),
                partition_data: vec![produce_request::PartitionProduceData {
                    index: 0,
                    records: Some(Cow::Owned(builder.build()?)),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        };
        stream.write_all(&frame(produce.into(), 9, 2 + batch)?)?;
        read_response(&mut stream)?;
    }
    Ok(())
}

fn fetch_request(correlation_id: i32) -> Result<Vec<u8>> {
    let fetch = FetchRequest {
        replica_id: -1,
        max_wait_ms: 0,
        min_bytes: 1,
        max_bytes: 1 << 20,
        topics: vec![fetch_request::FetchTopic {
            topic: TOPIC.into(),
            partitions: vec![fetch_request::FetchPartition {
                partition: 0,
                fetch_offset: 0,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    frame(fetch.into(), 11, correlation_id)
}

/// One connection keeping `depth` fetches in flight until `deadline`;
/// returns (bytes received, responses).
fn fetch_load(address: &str, depth: usize, deadline: Instant) -> Result<(u64, u64)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_nodelay(true)?;
    let request = fetch_request(1)?;
    for _ in 0..depth {
        stream.write_all(&request)?;
    }
    let (mut bytes, mut responses) = (0u64, 0u64);
    while Instant::now() < deadline {
        bytes += read_response(&mut stream)? as u64;
        responses += 1;
        stream.write_all(&request)?;
    }
    for _ in 0..depth {
        read_response(&mut stream)?;
    }
    Ok((bytes, responses))
}

fn latency(address: &str, seconds: f64) -> Result<Vec<Duration>> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_nodelay(true)?;
    let request = frame(ApiVersionsRequest::default().into(), 3, 1)?;
    let mut times = Vec::new();
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < end {
        let start = Instant::now();
        stream.write_all(&request)?;
        read_response(&mut stream)?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times)
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let address = args
        .next()
        .ok_or("usage: proxy_load <host:port> [--seconds S] [--connections C] [--depth D]")?;
    let (mut seconds, mut connections, mut depth) = (3.0f64, 4usize, 4usize);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--seconds" => seconds = value.parse()?,
            "--connections" => connections = value.parse()?,
            "--depth" => depth = value.parse()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    setup(&address)?;

    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let workers: Vec<_> = (0..connections)
        .map(|_| {
            let address = address.clone();
            std::thread::spawn(move || fetch_load(&address, depth, deadline))
        })
        .collect();
    let (mut bytes, mut responses) = (0u64, 0u64);
    for worker in workers {
        let (b, r) = worker.join().map_err(|_| "a load thread panicked")??;
        bytes += b;
        responses += r;
    }
    let elapsed = start.elapsed().as_secs_f64();
    println!(
        "fetch: {:.0} MiB/s, {:.0} responses/s ({connections} connections x {depth} in flight, {:.0} KiB each)",
        bytes as f64 / elapsed / (1 << 20) as f64,
        responses as f64 / elapsed,
        bytes as f64 / responses.max(1) as f64 / 1024.0,
    );

    let times = latency(&address, seconds)?;
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    println!(
        "latency: p50 {:.0} us, p99 {:.0} us ({} ApiVersions round trips)",
        at(0.5),
        at(0.99),
        times.len()
    );
    Ok(())
}
