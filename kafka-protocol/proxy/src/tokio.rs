//! Runs a [`Connection`] between a client socket and an upstream socket
//! (feature `tokio`): one task copies client to upstream, one upstream to
//! client, both through the state machine.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex as AsyncMutex;

use super::{Connection, Filter, Outgoing, ProxyError, Side};

/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 256 * 1024;

/// Why a proxied connection ended with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Reading from or writing to one side failed.
    #[error("{side} connection failed: {source}")]
    Io {
        /// The side whose socket failed.
        side: Side,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A side broke the protocol.
    #[error(transparent)]
    Protocol(#[from] ProxyError),
}

/// The state both tasks share: the connection and the filter, locked only
/// while bytes are fed or output is taken, never across an await.
struct Shared<F> {
    connection: Connection,
    filter: F,
}

/// Proxies one client connection to its upstream until either side closes
/// (`Ok`) or fails. Writes to each side keep the order in which the state
/// machine produced the bytes.
pub async fn proxy_connection<C, U, F>(
    client: C,
    upstream: U,
    connection: Connection,
    filter: F,
) -> Result<(), ServeError>
where
    C: AsyncRead + AsyncWrite + Send + 'static,
    U: AsyncRead + AsyncWrite + Send + 'static,
    F: Filter + Send + 'static,
{
    let (client_read, client_write) = tokio::io::split(client);
    let (upstream_read, upstream_write) = tokio::io::split(upstream);
    let shared = Arc::new(Mutex::new(Shared { connection, filter }));
    let client_write = Arc::new(AsyncMutex::new(client_write));
    let upstream_write = Arc::new(AsyncMutex::new(upstream_write));

    let mut requests = tokio::spawn(pump(
        Side::Client,
        client_read,
        Arc::clone(&shared),
        Arc::clone(&client_write),
        Arc::clone(&upstream_write),
    ));
    let mut responses = tokio::spawn(pump(
        Side::Broker,
        upstream_read,
        shared,
        Arc::clone(&client_write),
        Arc::clone(&upstream_write),
    ));
    let first = tokio::select! {
        done = &mut requests => { responses.abort(); done }
        done = &mut responses => { requests.abort(); done }
    };
    let _ = client_write.lock().await.shutdown().await;
    let _ = upstream_write.lock().await.shutdown().await;
    match first {
        Ok(result) => result,
        // A task panicked or was cancelled: nothing to report but the end.
        Err(_) => Ok(()),
    }
}

/// Reads one side until it closes, feeding the state machine and writing
/// what it produces to both sides.
async fn pump<R, CW, UW, F>(
    side: Side,
    mut read: R,
    shared: Arc<Mutex<Shared<F>>>,
    client_write: Arc<AsyncMutex<CW>>,
    upstream_write: Arc<AsyncMutex<UW>>,
) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin,
    CW: AsyncWrite + Unpin,
    UW: AsyncWrite + Unpin,
    F: Filter,
{
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let n = read
            .read(&mut buf)
            .await
            .map_err(|source| ServeError::Io { side, source })?;
        if n == 0 {
            return Ok(());
        }
        {
            let mut guard = shared.lock().map_err(|_| ProxyError::Closed)?;
            let Shared { connection, filter } = &mut *guard;
            match side {
                Side::Client => connection.feed_client(&buf[..n], filter)?,
                Side::Broker => connection.feed_broker(&buf[..n], filter)?,
            }
        }
        // Take output while holding the writer, so that two tasks cannot
        // swap the order of what they took.
        {
            let mut writer = upstream_write.lock().await;
            let out = take(&shared, Side::Broker)?;
            write(&mut *writer, out, Side::Broker).await?;
        }
        {
            let mut writer = client_write.lock().await;
            let out = take(&shared, Side::Client)?;
            write(&mut *writer, out, Side::Client).await?;
        }
    }
}

/// Writes every chunk, in order.
async fn write<W: AsyncWrite + Unpin>(
    writer: &mut W,
    out: Outgoing,
    side: Side,
) -> Result<(), ServeError> {
    for chunk in out.into_chunks() {
        writer
            .write_all(&chunk)
            .await
            .map_err(|source| ServeError::Io { side, source })?;
    }
    Ok(())
}

fn take<F>(shared: &Mutex<Shared<F>>, to: Side) -> Result<Outgoing, ProxyError> {
    let mut guard = shared.lock().map_err(|_| ProxyError::Closed)?;
    Ok(match to {
        Side::Client => guard.connection.take_for_client(),
        Side::Broker => guard.connection.take_for_broker(),
    })
}
