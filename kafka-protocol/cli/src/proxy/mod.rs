//! `kafka-protocol proxy`: forwards every client connection to one upstream
//! broker through [`kafka_wire_proxy::Connection`], rewriting the broker
//! addresses clients learn and optionally logging every exchange.

mod entry;
mod filter;
mod log;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kafka_wire_proxy::serve::{proxy_connection_with, ServeOptions};
use kafka_wire_proxy::{BufferBudget, Config, Connection};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::args::ProxyArgs;
use crate::error::CliError;
use entry::Entry;
use filter::{Advertised, ProxyFilter};
use log::ExchangeLog;

/// Runs the proxy until SIGTERM (or Ctrl-C), then returns `Ok`.
pub fn run(args: &ProxyArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| CliError::ProxyStart {
            what: "cannot start the runtime".into(),
            source,
        })?;
    runtime.block_on(serve(args))
}

async fn serve(args: &ProxyArgs) -> Result<(), CliError> {
    let listener =
        TcpListener::bind(&args.listen)
            .await
            .map_err(|source| CliError::ProxyStart {
                what: format!("cannot listen on {}", args.listen),
                source,
            })?;
    let address: SocketAddr = listener
        .local_addr()
        .map_err(|source| CliError::ProxyStart {
            what: "cannot read the listen address".into(),
            source,
        })?;
    let advertised = match &args.advertise {
        Some(text) => Advertised::parse(text)?,
        None => Advertised::parse(&address.to_string())?,
    };
    let log = match &args.log {
        Some(path) => Some(Arc::new(ExchangeLog::open(path, args.log_max_line)?)),
        None => None,
    };
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|source| CliError::ProxyStart {
        what: "cannot handle SIGTERM".into(),
        source,
    })?;
    {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "listening on {address}");
        let _ = stdout.flush();
    }
    let upstream = Arc::new(Upstream {
        address: args.upstream.clone(),
        connect_timeout: Duration::from_millis(args.connect_timeout_ms),
        options: ServeOptions {
            idle_timeout: Some(Duration::from_secs(args.idle_timeout)),
            budget: Some(Arc::new(BufferBudget::new(args.max_buffered_bytes))),
        },
    });
    let slots = Arc::new(Semaphore::new(args.max_connections));
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((client, peer)) => {
                    // Past the cap, the connection is closed on accept.
                    let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                        eprintln!(
                            "proxy: {} connections already; closing the one from {peer}",
                            args.max_connections
                        );
                        drop(client);
                        continue;
                    };
                    let filter = ProxyFilter::new(advertised.clone(), log.clone());
                    tokio::spawn(forward(client, peer, Arc::clone(&upstream), filter, log.clone(), slot));
                }
                Err(e) => eprintln!("proxy: accept failed: {e}"),
            },
            _ = terminate.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    if let Some(log) = &log {
        log.flush();
    }
    Ok(())
}

/// Where connections go, and the limits each is served with.
struct Upstream {
    address: String,
    connect_timeout: Duration,
    options: ServeOptions,
}

/// Connects one client to the upstream and proxies until either side
/// closes. An unreachable upstream closes the client's connection, with a
/// line on stderr and one in the log. `_slot` holds the connection's place
/// under `--max-connections` until it ends.
async fn forward(
    client: TcpStream,
    peer: SocketAddr,
    upstream: Arc<Upstream>,
    filter: ProxyFilter,
    log: Option<Arc<ExchangeLog>>,
    _slot: OwnedSemaphorePermit,
) {
    let connect = tokio::time::timeout(
        upstream.connect_timeout,
        TcpStream::connect(upstream.address.as_str()),
    );
    let upstream_stream = match connect.await {
        Ok(Ok(stream)) => stream,
        failed => {
            let why = match failed {
                Ok(Err(e)) => e.to_string(),
                _ => format!("no answer within {:?}", upstream.connect_timeout),
            };
            let message = format!("upstream {} unreachable: {why}", upstream.address);
            eprintln!("proxy: {message}; closing the connection from {peer}");
            if let Some(log) = &log {
                log.submit(Entry::Error {
                    client: peer.to_string(),
                    message,
                });
            }
            return;
        }
    };
    let _ = client.set_nodelay(true);
    let _ = upstream_stream.set_nodelay(true);
    let config = Config {
        keep_request_bodies: log.is_some(),
        ..Config::default()
    };
    let connection = Connection::new(config);
    let options = upstream.options.clone();
    if let Err(e) =
        proxy_connection_with(client, upstream_stream, connection, filter, options).await
    {
        eprintln!("proxy: connection from {peer} closed: {e}");
        if let Some(log) = &log {
            log.submit(Entry::Error {
                client: peer.to_string(),
                message: e.to_string(),
            });
        }
    }
}
