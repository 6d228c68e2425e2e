//! The tokio driver: runs an [`Engine`] against two clusters over TCP.
//!
//! It keeps one connection per side, broker and [`ConnectionTag`], opened
//! when first needed (and authenticated when the run uses SASL), and
//! performs each [`Exchange`] the engine asks for on a task of its own,
//! the two sides at once. A request and its answer are bounded by the
//! exchange's deadline (connecting included), and an answer by the largest
//! frame allowed: a size prefix above it is refused as soon as it arrives,
//! and the frame's bytes are held only as they come. Whatever goes wrong
//! (a refused connection, a close, a stall, a frame too large, an answer
//! to another correlation id) becomes that exchange's [`Failure`]; the
//! connection is dropped and opened again for the next request. A broker
//! that has answered before and now refuses connections (one restarting)
//! is tried again every [`RECONNECT_BACKOFF`] within the deadline, as a
//! client's reconnect backoff does; a broker never reached fails at once.
//! A kept connection that the broker closed while it was idle is opened
//! again before it carries a request.

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_wire::frame::{FrameError, FrameSplitter, RequestFrame, ResponseFrame};
use kafka_wire::messages::{RequestHeader, SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::engine::{Action, ConnectionTag, Engine, Exchange, Failure, Outcome, Progress, Target};
use crate::error::Unreachable;
use crate::report::Report;
use crate::sasl::{Credentials, SaslClient};
use crate::side::Side;

/// The largest answer accepted by default: 64 MiB. A sweep's answers are
/// a few KiB; a hostile side's claim of 2 GiB is refused at its prefix.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 64 * 1024 * 1024;

/// How long the driver waits before connecting again to a broker that
/// answered earlier in the run and now refuses connections.
pub const RECONNECT_BACKOFF: Duration = Duration::from_millis(50);

/// How the driver talks to brokers.
#[derive(Debug, Clone)]
pub struct DriverConfig {
    /// SASL credentials for both sides, if they need them.
    pub sasl: Option<Credentials>,
    /// The client id of every request header.
    pub client_id: String,
    /// The largest answer accepted, without its size prefix.
    pub max_frame_size: usize,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            sasl: None,
            client_id: "kafka-wire-compat".into(),
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
        }
    }
}

/// Runs `engine` to the end. `progress` is called after each answer.
pub async fn run(
    mut engine: Engine,
    config: &DriverConfig,
    mut progress: impl FnMut(Progress),
) -> Result<Report, Unreachable> {
    let config = Arc::new(config.clone());
    let addresses = [
        engine.config().reference.clone(),
        engine.config().candidate.clone(),
    ];
    let mut connections: HashMap<Key, Connection> = HashMap::new();
    // The brokers each side has been connected to in this run.
    let mut reached: HashSet<(Side, String)> = HashSet::new();
    let mut tasks: JoinSet<Done> = JoinSet::new();
    loop {
        match engine.poll(Instant::now()) {
            Action::Send(exchange) => {
                let address = match &exchange.target {
                    Target::Bootstrap => addresses[exchange.side.index()].clone(),
                    Target::Broker { address, .. } => address.clone(),
                };
                let key = Key {
                    side: exchange.side,
                    address,
                    tag: exchange.connection.clone(),
                };
                let connection = connections.remove(&key);
                let known = reached.contains(&(key.side, key.address.clone()));
                tasks.spawn(perform(
                    key,
                    connection,
                    known,
                    *exchange,
                    Arc::clone(&config),
                ));
            }
            Action::Release { case } => connections.retain(
                |key, _| !matches!(&key.tag, ConnectionTag::Own { case: c, .. } if *c == case),
            ),
            Action::Wait(at) => {
                tokio::select! {
                    done = tasks.join_next(), if !tasks.is_empty() => {
                        if let Some(done) = done {
                            deliver(&mut engine, &mut connections, &mut reached, done, &mut progress);
                        }
                    }
                    () = tokio::time::sleep_until(at.into()) => {}
                }
            }
            Action::Idle => match tasks.join_next().await {
                Some(done) => deliver(
                    &mut engine,
                    &mut connections,
                    &mut reached,
                    done,
                    &mut progress,
                ),
                // Nothing in flight and nothing to send cannot happen; end
                // rather than spin.
                None => break,
            },
            Action::Done => break,
        }
    }
    tasks.abort_all();
    engine.finish(Instant::now())
}

/// Runs `engine` on a tokio runtime of its own (current thread), for
/// callers that are not async.
pub fn run_blocking(
    engine: Engine,
    config: &DriverConfig,
    progress: impl FnMut(Progress),
) -> io::Result<Result<Report, Unreachable>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(runtime.block_on(run(engine, config, progress)))
}

/// Milliseconds since the Unix epoch, now: what [`Engine::new`] takes.
pub fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn deliver(
    engine: &mut Engine,
    connections: &mut HashMap<Key, Connection>,
    reached: &mut HashSet<(Side, String)>,
    done: Result<Done, tokio::task::JoinError>,
    progress: &mut impl FnMut(Progress),
) {
    // A task only ends by returning: it never panics, and is aborted only
    // once the run is over.
    let Ok(done) = done else {
        return;
    };
    if let Some(connection) = done.connection {
        reached.insert((done.key.side, done.key.address.clone()));
        connections.insert(done.key, connection);
    }
    engine.deliver(done.id, done.outcome, done.at);
    progress(engine.progress());
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    side: Side,
    address: String,
    tag: ConnectionTag,
}

struct Done {
    id: u64,
    key: Key,
    connection: Option<Connection>,
    outcome: Outcome,
    at: Instant,
}

/// One open connection.
struct Connection {
    stream: TcpStream,
    splitter: FrameSplitter,
    correlation_id: i32,
}

async fn perform(
    key: Key,
    connection: Option<Connection>,
    reached_before: bool,
    exchange: Exchange,
    config: Arc<DriverConfig>,
) -> Done {
    let deadline = tokio::time::Instant::from_std(exchange.deadline);
    let id = exchange.id;
    let work = async {
        let authenticate = match &key.tag {
            ConnectionTag::Shared => true,
            ConnectionTag::Own { authenticate, .. } => *authenticate,
        };
        // A kept connection the broker has closed since (a restart) is
        // opened again rather than failing the next request on it.
        let mut connection = match connection.filter(Connection::is_open) {
            Some(c) => c,
            None => open(&key.address, authenticate, reached_before, &config).await?,
        };
        let answer = connection
            .call(
                exchange.api,
                exchange.version,
                exchange.body,
                exchange.expects_response,
                &config,
            )
            .await?;
        Ok::<_, Failure>((connection, answer))
    };
    let (connection, outcome) = match tokio::time::timeout_at(deadline, work).await {
        Ok(Ok((connection, Some(frame)))) => (Some(connection), Outcome::Answer(frame)),
        Ok(Ok((connection, None))) => (Some(connection), Outcome::NoAnswer),
        Ok(Err(failure)) => (None, Outcome::Failed(failure)),
        Err(_) => (None, Outcome::Failed(Failure::TimedOut)),
    };
    Done {
        id,
        key,
        connection,
        outcome,
        at: Instant::now(),
    }
}

/// Connects to `address`, and authenticates when `authenticate` and the
/// run uses SASL. A refused connection is tried again while
/// `reached_before` (the caller's deadline bounds it).
async fn open(
    address: &str,
    authenticate: bool,
    reached_before: bool,
    config: &DriverConfig,
) -> Result<Connection, Failure> {
    let stream = loop {
        match TcpStream::connect(address).await {
            Ok(stream) => break stream,
            Err(e) if reached_before && e.kind() == io::ErrorKind::ConnectionRefused => {
                tokio::time::sleep(RECONNECT_BACKOFF).await;
            }
            Err(e) => return Err(Failure::Connect(e.to_string())),
        }
    };
    let _ = stream.set_nodelay(true);
    let mut connection = Connection {
        stream,
        splitter: FrameSplitter::new(config.max_frame_size),
        correlation_id: 0,
    };
    if let (true, Some(credentials)) = (authenticate, &config.sasl) {
        connection
            .authenticate(credentials, config)
            .await
            .map_err(|why| Failure::Connect(format!("SASL {}: {why}", credentials.mechanism)))?;
    }
    Ok(connection)
}

impl Connection {
    /// Whether the broker has kept this idle connection open: nothing to
    /// read yet. End of stream, an error, or bytes nobody asked for say it
    /// is not fit to carry the next request.
    fn is_open(&self) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.stream.try_read(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    /// Sends `body` and reads its answer's frame (`None` when none is
    /// expected).
    async fn call(
        &mut self,
        api: ApiKey,
        version: i16,
        body: RequestBody<'_>,
        expects_response: bool,
        config: &DriverConfig,
    ) -> Result<Option<Vec<u8>>, Failure> {
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let sent = self.correlation_id;
        let request = RequestFrame {
            header: RequestHeader {
                request_api_key: api.key(),
                request_api_version: version,
                correlation_id: sent,
                client_id: Some(config.client_id.as_str().into()),
                ..Default::default()
            },
            body,
        };
        let mut bytes = Vec::new();
        request
            .encode_with_size(&mut bytes)
            .map_err(|e| Failure::Io(format!("encoding the request: {e}")))?;
        self.stream.write_all(&bytes).await.map_err(io_failure)?;
        if !expects_response {
            return Ok(None);
        }
        let frame = self.read_frame().await?;
        let answered = frame
            .get(..4)
            .map(|id| i32::from_be_bytes([id[0], id[1], id[2], id[3]]));
        if answered != Some(sent) {
            return Err(Failure::WrongCorrelation { sent, answered });
        }
        Ok(Some(frame))
    }

    async fn read_frame(&mut self) -> Result<Vec<u8>, Failure> {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match self.splitter.next_frame() {
                Ok(Some(frame)) => return Ok(frame.to_vec()),
                Ok(None) => {}
                Err(FrameError::NegativeSize(size)) => {
                    return Err(Failure::BadSize(format!("a negative frame size, {size}")))
                }
                Err(FrameError::TooLarge { size, max }) => {
                    return Err(Failure::BadSize(format!(
                        "a frame of {size} bytes, more than the {max} allowed"
                    )))
                }
            }
            let read = self.stream.read(&mut buffer).await.map_err(io_failure)?;
            if read == 0 {
                return Err(Failure::Closed);
            }
            self.splitter.push(&buffer[..read]);
        }
    }

    /// SaslHandshake, then SaslAuthenticate until the exchange is over.
    async fn authenticate(
        &mut self,
        credentials: &Credentials,
        config: &DriverConfig,
    ) -> Result<(), String> {
        let handshake = SaslHandshakeRequest {
            mechanism: credentials.mechanism.name().into(),
        };
        let answer = self
            .answer(ApiKey::SaslHandshake, 1, handshake.into(), config)
            .await?;
        if let ResponseBody::SaslHandshake(h) = &answer {
            if h.error_code != 0 {
                let offered: Vec<String> = h.mechanisms.iter().map(|m| m.to_string()).collect();
                return Err(format!(
                    "the handshake answers error code {} (mechanisms offered: {})",
                    h.error_code,
                    offered.join(", ")
                ));
            }
        }
        let mut client = SaslClient::new(credentials.clone());
        let mut token = client.first();
        loop {
            let request = SaslAuthenticateRequest {
                auth_bytes: token.into(),
                ..Default::default()
            };
            let answer = self
                .answer(ApiKey::SaslAuthenticate, 1, request.into(), config)
                .await?;
            let ResponseBody::SaslAuthenticate(auth) = answer else {
                return Err("not a SaslAuthenticate answer".into());
            };
            if auth.error_code != 0 {
                return Err(format!(
                    "error code {}: {}",
                    auth.error_code,
                    auth.error_message.as_deref().unwrap_or("")
                ));
            }
            if client.done() {
                return Ok(());
            }
            match client.next(&auth.auth_bytes).map_err(|e| e.to_string())? {
                Some(next) => token = next,
                None => return Ok(()),
            }
        }
    }

    async fn answer(
        &mut self,
        api: ApiKey,
        version: i16,
        body: RequestBody<'_>,
        config: &DriverConfig,
    ) -> Result<ResponseBody<'static>, String> {
        let frame = self
            .call(api, version, body, true, config)
            .await
            .map_err(|f| f.describe())?
            .ok_or("no answer")?;
        ResponseFrame::decode(&frame, api, version)
            .map(|r| kafka_wire::IntoOwned::into_owned(r.body))
            .map_err(|e| format!("the {} answer does not decode: {e}", api.name()))
    }
}

fn io_failure(error: io::Error) -> Failure {
    match error.kind() {
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::UnexpectedEof => Failure::Closed,
        _ => Failure::Io(error.to_string()),
    }
}
