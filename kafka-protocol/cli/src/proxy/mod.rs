//! `kafka-protocol proxy`: forwards every client connection to one upstream
//! broker through [`kafka_wire_proxy::Connection`], rewriting the broker
//! addresses clients learn and optionally logging every exchange.

mod filter;
mod log;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use kafka_wire_proxy::tokio::proxy_connection;
use kafka_wire_proxy::{Config, Connection};
use tokio::net::{TcpListener, TcpStream};

use crate::args::ProxyArgs;
use crate::error::CliError;
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
        Some(path) => Some(Arc::new(ExchangeLog::open(path)?)),
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
    let upstream: Arc<str> = args.upstream.as_str().into();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((client, peer)) => {
                    let filter = ProxyFilter::new(advertised.clone(), log.clone());
                    tokio::spawn(forward(client, peer, Arc::clone(&upstream), filter, log.clone()));
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

/// Connects one client to the upstream and proxies until either side
/// closes. An unreachable upstream closes the client's connection, with a
/// line on stderr and one in the log.
async fn forward(
    client: TcpStream,
    peer: SocketAddr,
    upstream: Arc<str>,
    filter: ProxyFilter,
    log: Option<Arc<ExchangeLog>>,
) {
    let upstream_stream = match TcpStream::connect(&*upstream).await {
        Ok(stream) => stream,
        Err(e) => {
            let message = format!("upstream {upstream} unreachable: {e}");
            eprintln!("proxy: {message}; closing the connection from {peer}");
            if let Some(log) = &log {
                log.error(&peer.to_string(), &message);
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
    if let Err(e) = proxy_connection(client, upstream_stream, Connection::new(config), filter).await
    {
        eprintln!("proxy: connection from {peer} closed: {e}");
        if let Some(log) = &log {
            log.error(&peer.to_string(), &e.to_string());
        }
    }
}
