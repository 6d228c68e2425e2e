//! Runs a [`Connection`] between a client socket and an upstream socket
//! (feature `tokio`): one task copies client to upstream, one upstream to
//! client, both through the state machine, and a watchdog ends a connection
//! that stays idle past its timeout.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex as AsyncMutex;

use super::{BudgetExceeded, BufferBudget, Connection, Filter, Outgoing, ProxyError, Side};

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
    /// No whole frame crossed the connection, either way, for the idle
    /// timeout.
    #[error("idle: no whole frame from either side for {0:?}")]
    Idle(Duration),
    /// The connection would have taken the shared buffer budget past its
    /// limit.
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
}

/// The default idle timeout: 600 s, as Kafka's `connections.max.idle.ms`.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// Limits of a proxied connection that take a clock or are shared with
/// other connections.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// A connection across which no whole frame passes, from either side,
    /// for this long is closed (`None`: never). Partial frames do not
    /// count, so a peer that trickles bytes cannot keep it open.
    pub idle_timeout: Option<Duration>,
    /// The budget this connection shares with others for the bytes it
    /// holds (`None`: only the per-connection limits of its
    /// [`Config`](super::Config)).
    pub budget: Option<Arc<BufferBudget>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            budget: None,
        }
    }
}

/// The state both tasks share: the connection, the filter, and what the
/// connection has charged to the shared budget; locked only while bytes
/// are fed or output is taken, never across an await.
struct Shared<F> {
    connection: Connection,
    filter: F,
    budget: Option<Arc<BufferBudget>>,
    charged: usize,
}

impl<F> Shared<F> {
    /// Charges the budget with what the connection holds now.
    fn recharge(&mut self) -> Result<(), BudgetExceeded> {
        let Some(budget) = &self.budget else {
            return Ok(());
        };
        let held = self.connection.held_bytes();
        budget.recharge(self.charged, held)?;
        self.charged = held;
        Ok(())
    }
}

impl<F> Drop for Shared<F> {
    fn drop(&mut self) {
        if let Some(budget) = &self.budget {
            let _ = budget.recharge(self.charged, 0);
        }
    }
}

/// Proxies one client connection to its upstream until either side closes
/// (`Ok`) or fails, with the default [`ServeOptions`] (an idle timeout of
/// [`DEFAULT_IDLE_TIMEOUT`], no shared budget).
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
    proxy_connection_with(
        client,
        upstream,
        connection,
        filter,
        ServeOptions::default(),
    )
    .await
}

/// Proxies one client connection to its upstream until either side closes
/// (`Ok`), fails, stays idle past `options.idle_timeout`, or would spend
/// more than its share of `options.budget`. Writes to each side keep the
/// order in which the state machine produced the bytes.
pub async fn proxy_connection_with<C, U, F>(
    client: C,
    upstream: U,
    connection: Connection,
    filter: F,
    options: ServeOptions,
) -> Result<(), ServeError>
where
    C: AsyncRead + AsyncWrite + Send + 'static,
    U: AsyncRead + AsyncWrite + Send + 'static,
    F: Filter + Send + 'static,
{
    let (client_read, client_write) = tokio::io::split(client);
    let (upstream_read, upstream_write) = tokio::io::split(upstream);
    let shared = Arc::new(Mutex::new(Shared {
        connection,
        filter,
        budget: options.budget,
        charged: 0,
    }));
    let client_write = Arc::new(AsyncMutex::new(client_write));
    let upstream_write = Arc::new(AsyncMutex::new(upstream_write));
    let written = Arc::new(AtomicU64::new(0));

    let mut requests = tokio::spawn(pump(
        Side::Client,
        client_read,
        Arc::clone(&shared),
        Writers {
            client: Arc::clone(&client_write),
            upstream: Arc::clone(&upstream_write),
            written: Arc::clone(&written),
        },
    ));
    let mut responses = tokio::spawn(pump(
        Side::Broker,
        upstream_read,
        Arc::clone(&shared),
        Writers {
            client: Arc::clone(&client_write),
            upstream: Arc::clone(&upstream_write),
            written: Arc::clone(&written),
        },
    ));
    let first = tokio::select! {
        done = &mut requests => { responses.abort(); done }
        done = &mut responses => { requests.abort(); done }
        idle = idle(&shared, &written, options.idle_timeout) => {
            requests.abort();
            responses.abort();
            Ok(Err(ServeError::Idle(idle)))
        }
    };
    let _ = client_write.lock().await.shutdown().await;
    let _ = upstream_write.lock().await.shutdown().await;
    match first {
        Ok(result) => result,
        // A task panicked or was cancelled: nothing to report but the end.
        Err(_) => Ok(()),
    }
}

/// The write halves of both sockets, and a count of the writes that made
/// progress, which the idle watchdog reads.
struct Writers<CW, UW> {
    client: Arc<AsyncMutex<CW>>,
    upstream: Arc<AsyncMutex<UW>>,
    written: Arc<AtomicU64>,
}

/// Reads one side until it closes, feeding the state machine and writing
/// what it produces to both sides.
async fn pump<R, CW, UW, F>(
    side: Side,
    mut read: R,
    shared: Arc<Mutex<Shared<F>>>,
    writers: Writers<CW, UW>,
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
            let Shared {
                connection, filter, ..
            } = &mut *guard;
            match side {
                Side::Client => connection.feed_client(&buf[..n], filter)?,
                Side::Broker => connection.feed_broker(&buf[..n], filter)?,
            }
            guard.recharge()?;
        }
        // Take output while holding the writer, so that two tasks cannot
        // swap the order of what they took.
        {
            let mut writer = writers.upstream.lock().await;
            let out = take(&shared, Side::Broker)?;
            write(&mut *writer, out, Side::Broker, &writers.written).await?;
        }
        {
            let mut writer = writers.client.lock().await;
            let out = take(&shared, Side::Client)?;
            write(&mut *writer, out, Side::Client, &writers.written).await?;
        }
    }
}

/// Resolves once nothing has moved across the connection for `timeout`
/// (never, without one), with the time it waited: no whole frame arrived
/// from either side, no write to either side made progress, and the client
/// awaited no answer. Partial frames arriving do not count, so that a peer
/// cannot keep a connection by trickling bytes; a request the broker is
/// still working on (behind thousands of pipelined ones, or a long poll)
/// does.
async fn idle<F>(
    shared: &Mutex<Shared<F>>,
    written: &AtomicU64,
    timeout: Option<Duration>,
) -> Duration {
    let Some(timeout) = timeout else {
        return std::future::pending().await;
    };
    // Checked a few times per timeout, so that a connection closes at most
    // a quarter of the timeout late.
    let tick = (timeout / 4).max(Duration::from_millis(10));
    // What moved, and whether the client awaits an answer.
    let activity = || {
        let (frames, awaiting) = shared.lock().map_or((0, false), |s| {
            (s.connection.frames(), s.connection.in_flight() > 0)
        });
        (
            frames.wrapping_add(written.load(Ordering::Relaxed)),
            awaiting,
        )
    };
    let (mut seen, _) = activity();
    let mut since = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(tick).await;
        let (now, awaiting) = activity();
        if now != seen || awaiting {
            seen = now;
            since = tokio::time::Instant::now();
        } else if since.elapsed() >= timeout {
            return timeout;
        }
    }
}

/// Writes every chunk, in order, counting in `written` each write that
/// made progress.
async fn write<W: AsyncWrite + Unpin>(
    writer: &mut W,
    out: Outgoing,
    side: Side,
    written: &AtomicU64,
) -> Result<(), ServeError> {
    let failed = |source| ServeError::Io { side, source };
    for chunk in out.into_chunks() {
        let mut rest = &chunk[..];
        while !rest.is_empty() {
            let n = writer.write(rest).await.map_err(failed)?;
            if n == 0 {
                return Err(failed(std::io::ErrorKind::WriteZero.into()));
            }
            written.fetch_add(1, Ordering::Relaxed);
            rest = &rest[n..];
        }
    }
    Ok(())
}

/// Takes the output for one side; the bytes taken leave the budget's charge
/// (shrinking a charge never fails).
fn take<F>(shared: &Mutex<Shared<F>>, to: Side) -> Result<Outgoing, ProxyError> {
    let mut guard = shared.lock().map_err(|_| ProxyError::Closed)?;
    let out = match to {
        Side::Client => guard.connection.take_for_client(),
        Side::Broker => guard.connection.take_for_broker(),
    };
    let _ = guard.recharge();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, PassThrough};
    use tokio::io::duplex;

    fn connection() -> Connection {
        Connection::new(Config::default())
    }

    #[tokio::test]
    async fn a_connection_that_only_trickles_bytes_is_closed_when_idle() {
        let (mut client, proxy_side) = duplex(1024);
        let (_upstream, proxy_upstream) = duplex(1024);
        let options = ServeOptions {
            idle_timeout: Some(Duration::from_millis(200)),
            budget: None,
        };
        let serve = tokio::spawn(proxy_connection_with(
            proxy_side,
            proxy_upstream,
            connection(),
            PassThrough,
            options,
        ));
        // A size prefix, then a byte every 50 ms: never a whole frame.
        client.write_all(&100i32.to_be_bytes()).await.unwrap();
        let trickle = async {
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                if client.write_all(&[0]).await.is_err() {
                    break;
                }
            }
        };
        let outcome = tokio::select! {
            outcome = serve => outcome.unwrap(),
            _ = trickle => panic!("the client's writes failed before the proxy ended"),
            _ = tokio::time::sleep(Duration::from_secs(5)) => panic!("not closed when idle"),
        };
        assert!(matches!(outcome, Err(ServeError::Idle(_))), "{outcome:?}");
    }

    #[tokio::test]
    async fn connections_that_would_pass_the_shared_budget_are_closed() {
        let budget = Arc::new(BufferBudget::new(1000));
        let options = ServeOptions {
            idle_timeout: None,
            budget: Some(Arc::clone(&budget)),
        };
        let mut clients = Vec::new();
        let mut serves = Vec::new();
        for _ in 0..2 {
            let (client, proxy_side) = duplex(4096);
            let (upstream, proxy_upstream) = duplex(4096);
            serves.push(tokio::spawn(proxy_connection_with(
                proxy_side,
                proxy_upstream,
                connection(),
                PassThrough,
                options.clone(),
            )));
            clients.push((client, upstream));
        }
        // Each parks 600 bytes of a 2,000-byte frame: the first fits, the
        // second would take the total to 1,200.
        for (client, _) in &mut clients {
            client.write_all(&2000i32.to_be_bytes()).await.unwrap();
            client.write_all(&[0; 596]).await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let second = serves.pop().unwrap();
        let outcome = tokio::time::timeout(Duration::from_secs(5), second)
            .await
            .expect("the second connection is closed")
            .unwrap();
        assert!(
            matches!(
                outcome,
                Err(ServeError::Budget(BudgetExceeded { limit: 1000 }))
            ),
            "{outcome:?}"
        );
        assert_eq!(budget.used(), 600);
        // The first closes, and gives its bytes back.
        drop(clients);
        let first = serves.pop().unwrap();
        let _ = tokio::time::timeout(Duration::from_secs(5), first).await;
        assert_eq!(budget.used(), 0);
    }
}
