//! `mini_broker`: a single-node Kafka broker, small enough to read, built on
//! the `kafka-wire` crate.
//!
//! It keeps everything in memory, answers the apis that producers and
//! consumers need (see [`handlers`]), and can record every frame it handles
//! (`--capture DIR`). It is an example of serving the protocol with the
//! crate, not a real broker: one node, no replication, no persistence, no
//! transactions, no authentication.
//!
//! ```sh
//! cargo run -p kafka-wire-examples --example mini_broker -- --listen 127.0.0.1:9092
//! kcat -b 127.0.0.1:9092 -t demo -P <<< 'hello'
//! kcat -b 127.0.0.1:9092 -t demo -C -e
//! ```

mod broker;
mod capture;
mod connection;
mod errors;
mod groups;
mod handlers;
mod log;
mod validate;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::broker::{Broker, Config};
use crate::capture::Capture;

const USAGE: &str = "\
usage: mini_broker [--listen ADDR] [--partitions N] [--capture DIR] [--cluster-id ID]
                   [--max-connections N] [--idle-timeout SECONDS]
                   [--produce-budget BYTES]

  --listen ADDR            address to listen on (default 127.0.0.1:9092; port 0 picks one)
  --partitions N           partitions of auto-created topics (default 1)
  --capture DIR            record every request and response frame as JSON lines in DIR
  --cluster-id ID          the cluster id returned by Metadata (default mini-broker)
  --max-connections N      connections served at once; more are closed on accept
                           (default 1000)
  --idle-timeout SECONDS   close a connection that sends no complete frame for this
                           long, as Kafka's connections.max.idle.ms (default 600)
  --produce-budget BYTES   most bytes the batches of one Produce may decompress to,
                           all together (default 67108864, 64 MiB)";

/// The command line.
struct Args {
    listen: String,
    partitions: i32,
    capture: Option<PathBuf>,
    cluster_id: String,
    max_connections: usize,
    idle_timeout: Duration,
    produce_budget: usize,
}

/// A positive number given to `flag`.
fn positive<T: std::str::FromStr + PartialOrd + Default>(
    flag: &str,
    value: String,
) -> Result<T, String> {
    value
        .parse()
        .ok()
        .filter(|n| *n > T::default())
        .ok_or(format!("{flag} needs a positive number"))
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        listen: "127.0.0.1:9092".into(),
        partitions: 1,
        capture: None,
        cluster_id: "mini-broker".into(),
        max_connections: 1000,
        idle_timeout: Duration::from_secs(600),
        produce_budget: kafka_wire_records::DEFAULT_MAX_DECOMPRESSED_SIZE,
    };
    let mut iter = std::env::args().skip(1);
    while let Some(flag) = iter.next() {
        let mut value = || iter.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => args.listen = value()?,
            "--partitions" => {
                args.partitions = value()?
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or("--partitions needs a positive number")?
            }
            "--capture" => args.capture = Some(value()?.into()),
            "--cluster-id" => args.cluster_id = value()?,
            "--max-connections" => args.max_connections = positive(&flag, value()?)?,
            "--idle-timeout" => {
                args.idle_timeout = Duration::from_secs_f64(positive(&flag, value()?)?)
            }
            "--produce-budget" => args.produce_budget = positive(&flag, value()?)?,
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(args)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let listener = TcpListener::bind(&args.listen).await?;
    let address: SocketAddr = listener.local_addr()?;
    let capture = match args.capture {
        Some(dir) => Some(Capture::create(dir)?),
        None => None,
    };
    let broker = Arc::new(Broker::new(
        Config {
            address,
            default_partitions: args.partitions,
            cluster_id: args.cluster_id,
            produce_decompression_budget: args.produce_budget,
            idle_timeout: args.idle_timeout,
            max_response_size: kafka_wire::frame::DEFAULT_MAX_FRAME_SIZE,
        },
        capture,
    ));

    // Members that stop heartbeating are removed from their group.
    let ticker = Arc::clone(&broker);
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(Duration::from_secs(1));
        loop {
            interval.tick().await;
            ticker.expire_group_members();
        }
    });

    println!("listening on {address}");
    std::io::stdout().flush()?;

    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut next_connection = 0u64;
    // One permit per connection served; a connection beyond the cap is
    // closed as soon as it is accepted.
    let permits = Arc::new(Semaphore::new(args.max_connections));
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    next_connection += 1;
                    let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
                        eprintln!(
                            "connection {next_connection} ({peer}): closing: {} connections already",
                            args.max_connections
                        );
                        drop(stream);
                        continue;
                    };
                    let broker = Arc::clone(&broker);
                    tokio::spawn(async move {
                        connection::serve(broker, stream, peer, next_connection).await;
                        drop(permit);
                    });
                }
                Err(e) => eprintln!("accept failed: {e}"),
            },
            _ = terminate.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    eprintln!("mini_broker: shutting down");
    Ok(())
}
