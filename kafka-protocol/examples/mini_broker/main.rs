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
//! cargo run -p kafka-wire --example mini_broker --features tokio -- --listen 127.0.0.1:9092
//! kcat -b 127.0.0.1:9092 -t demo -P <<< 'hello'
//! kcat -b 127.0.0.1:9092 -t demo -C -e
//! ```

mod broker;
mod capture;
mod connection;
mod groups;
mod handlers;
mod log;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::broker::{Broker, Config};
use crate::capture::Capture;

const USAGE: &str = "\
usage: mini_broker [--listen ADDR] [--partitions N] [--capture DIR] [--cluster-id ID]

  --listen ADDR      address to listen on (default 127.0.0.1:9092; port 0 picks one)
  --partitions N     partitions of auto-created topics (default 1)
  --capture DIR      record every request and response frame as JSON lines in DIR
  --cluster-id ID    the cluster id returned by Metadata (default mini-broker)";

/// The command line.
struct Args {
    listen: String,
    partitions: i32,
    capture: Option<PathBuf>,
    cluster_id: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        listen: "127.0.0.1:9092".into(),
        partitions: 1,
        capture: None,
        cluster_id: "mini-broker".into(),
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
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    next_connection += 1;
                    let broker = Arc::clone(&broker);
                    tokio::spawn(connection::serve(broker, stream, peer, next_connection));
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
