//! The sans-IO core: TCP segments in, exchanges and events out.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;

use bytes::Bytes;
use kafka_wire::frame::{
    FrameError, FrameSplitter, RequestParts, ResponseParts, DEFAULT_MAX_FRAME_SIZE,
};
use kafka_wire_proxy::sasl::{handshake_refused, legacy_mechanism, Legacy};

use crate::boundary::{request_at, response_at, Candidate, RESYNC_WINDOW};
use crate::link::{segment, LinkType, NotTcp, Packet, Segment};
use crate::output::{Event, EventKind, Exchange, Output, Response, SaslTokenExchange};
use crate::roles::Finding;
use crate::tcp::{Delivery, Reassembly};
use crate::time::Timestamp;

/// The ports taken as Kafka's when none are given: plaintext and TLS.
pub const DEFAULT_KAFKA_PORTS: [u16; 2] = [9092, 9093];

/// Bytes counted for a connection besides its buffers: its entry in the
/// table of connections (twice over, for the table's slack) and its place
/// in the idle order (likewise).
pub const CONNECTION_OVERHEAD: usize =
    2 * std::mem::size_of::<(Key, Conn)>() + 2 * std::mem::size_of::<(u64, Key)>();

/// What the reader follows, and its memory bounds.
#[derive(Debug, Clone)]
pub struct Config {
    /// The brokers' ports: the side on one is the broker. Empty: every TCP
    /// stream whose bytes read as Kafka requests, [`DEFAULT_KAFKA_PORTS`]
    /// standing for Kafka's ports (TLS is reported there, and a stream that
    /// does not decode); off them, without a SYN, the client is found from
    /// what both sides' bytes show (an [`EventKind::Direction`] event when
    /// the rule that decided is not sure).
    ///
    /// [`EventKind::Direction`]: crate::EventKind::Direction
    pub ports: Vec<u16>,
    /// The largest frame, as Kafka's `socket.request.max.bytes`.
    pub max_frame_size: usize,
    /// The most bytes one connection may hold: a partial frame, segments
    /// out of order, requests awaiting answers.
    pub max_connection_bytes: usize,
    /// The most requests one connection may have awaiting answers.
    pub max_pending: usize,
    /// The most bytes all connections together may hold (each counts
    /// [`CONNECTION_OVERHEAD`] and its requests awaiting answers besides its
    /// buffers); past it the connections idle longest are evicted. The
    /// heap the reader takes stays within about twice this (measured: 9 MB
    /// for 4 MiB through a million connections), as its tables grow by
    /// doubling.
    pub max_total_bytes: usize,
    /// The most bytes held out of order per direction before the hole
    /// before them is taken as lost.
    pub max_out_of_order: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ports: Vec::new(),
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            max_connection_bytes: 3 * DEFAULT_MAX_FRAME_SIZE,
            max_pending: 1000,
            max_total_bytes: 1 << 30,
            max_out_of_order: 4 << 20,
        }
    }
}

/// Counts of what was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets given.
    pub packets: u64,
    /// TCP segments among them.
    pub segments: u64,
    /// Packets of a link type this reader does not read.
    pub unsupported_link: u64,
    /// Connections evicted to stay within the memory cap.
    pub evicted: u64,
    /// The most bytes held at once (see [`Tracker::memory`]).
    pub peak_memory: usize,
}

/// A connection, keyed by its two endpoints, lower first.
type Key = (SocketAddr, SocketAddr);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Splitting frames.
    Sync,
    /// Looking for a frame boundary.
    Resync,
    /// The first frame must read as a request at once, or the stream is
    /// not Kafka (automatic mode, off Kafka's ports).
    First,
}

#[derive(Debug)]
struct Dir {
    tcp: Reassembly,
    /// Started by a SYN: the stream begins on a frame boundary.
    from_syn: bool,
    mode: Mode,
    scan: Vec<u8>,
    skipped: u64,
    splitter: FrameSplitter,
    /// Bytes delivered so far.
    seen: u64,
}

impl Dir {
    fn new(max_frame_size: usize) -> Self {
        Dir {
            tcp: Reassembly::default(),
            from_syn: false,
            mode: Mode::Resync,
            scan: Vec::new(),
            skipped: 0,
            splitter: FrameSplitter::new(max_frame_size),
            seen: 0,
        }
    }

    fn bytes(&self) -> usize {
        self.tcp.held_bytes() + self.scan.capacity() + self.splitter.capacity()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    /// Not Kafka: packets are dropped.
    Ignored,
    /// TLS, or a stream that cannot be followed: packets are dropped.
    Skipped,
}

#[derive(Debug)]
enum Pending {
    Request(Exchange),
    Token {
        round: u32,
        time: Timestamp,
        client_bytes: usize,
    },
}

#[derive(Debug)]
struct Conn {
    addrs: [SocketAddr; 2],
    /// Which of `addrs` is the client, once known.
    client: Option<usize>,
    /// While the client is not known and bytes have come: what they show.
    finding: Option<Box<Finding>>,
    /// Which sent first.
    first: usize,
    kafka_port: bool,
    dirs: [Dir; 2],
    state: State,
    pending: VecDeque<Pending>,
    pending_bytes: usize,
    sasl: Option<Legacy>,
    opaque: bool,
    tick: u64,
    accounted: usize,
}

/// The reader's core. Feed it packets ([`Tracker::packet`]) or TCP
/// segments ([`Tracker::segment`]) in capture order, take what it found
/// with [`Tracker::next_output`], and call [`Tracker::finish`] at the end
/// of the capture.
#[derive(Debug)]
pub struct Tracker {
    config: Config,
    connections: HashMap<Key, Conn>,
    idle: BTreeMap<u64, Key>,
    tick: u64,
    total: usize,
    out: VecDeque<Output>,
    last_time: Timestamp,
    stats: Stats,
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker::new(Config::default())
    }
}

impl Tracker {
    /// A tracker with these bounds.
    pub fn new(config: Config) -> Self {
        Tracker {
            config,
            connections: HashMap::new(),
            idle: BTreeMap::new(),
            tick: 0,
            total: 0,
            out: VecDeque::new(),
            last_time: Timestamp::default(),
            stats: Stats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Counts of what was read.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The bytes the connections hold, as counted against
    /// [`Config::max_total_bytes`].
    pub fn memory(&self) -> usize {
        self.total
    }

    /// Connections followed now.
    pub fn connections(&self) -> usize {
        self.connections.len()
    }

    /// The next thing found, in order.
    pub fn next_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Reports that the capture file ends inside a block, at `time` (what
    /// the cut block's header says, [`CaptureReader::truncated_time`]), or
    /// with `None` the last packet's time.
    ///
    /// [`CaptureReader::truncated_time`]: crate::CaptureReader::truncated_time
    pub fn truncated_file(&mut self, detail: &str, time: Option<Timestamp>) {
        self.out.push_back(Output::Event(Event {
            kind: EventKind::TruncatedFile,
            time: time.unwrap_or(self.last_time),
            client: None,
            broker: None,
            detail: detail.to_owned(),
        }));
    }

    /// Takes one captured packet.
    pub fn packet(&mut self, packet: &Packet<'_>) {
        self.stats.packets += 1;
        self.last_time = self.last_time.max(packet.time);
        match segment(packet) {
            Ok(segment) => self.segment(&segment),
            Err(NotTcp::UnsupportedLink(LinkType(_))) => self.stats.unsupported_link += 1,
            Err(NotTcp::Other) => {}
        }
    }

    /// Takes one TCP segment.
    pub fn segment(&mut self, s: &Segment<'_>) {
        self.stats.segments += 1;
        self.last_time = self.last_time.max(s.time);
        let ports = self.config.ports.clone();
        let kafka_port = |port| {
            if ports.is_empty() {
                DEFAULT_KAFKA_PORTS.contains(&port)
            } else {
                ports.contains(&port)
            }
        };
        let source_kafka = kafka_port(s.source.port());
        let destination_kafka = kafka_port(s.destination.port());
        let auto = ports.is_empty();
        if !auto && !source_kafka && !destination_kafka {
            return;
        }
        let (key, d) = if s.source <= s.destination {
            ((s.source, s.destination), 0)
        } else {
            ((s.destination, s.source), 1)
        };
        let opening = s.flags.syn && !s.flags.ack;
        if opening
            && self
                .connections
                .get(&key)
                .is_some_and(|c| c.dirs.iter().any(|dir| dir.seen > 0))
        {
            // The same addresses again: the old connection is over.
            self.close(key);
        }
        if !self.connections.contains_key(&key) {
            if !s.flags.syn && s.payload.is_empty() && s.missing == 0 {
                return;
            }
            let max = self.config.max_frame_size;
            let mut conn = Conn {
                addrs: [key.0, key.1],
                client: None,
                finding: None,
                first: d,
                kafka_port: source_kafka || destination_kafka,
                dirs: [Dir::new(max), Dir::new(max)],
                state: State::Open,
                pending: VecDeque::new(),
                pending_bytes: 0,
                sasl: None,
                opaque: false,
                tick: 0,
                accounted: 0,
            };
            // The broker is the side on a Kafka port.
            let on_port = [key.0, key.1].map(|a| kafka_port(a.port()));
            if on_port[0] != on_port[1] {
                conn.client = Some(if on_port[0] { 1 } else { 0 });
            }
            self.connections.insert(key, conn);
        }
        self.tick += 1;
        let tick = self.tick;
        let Some(conn) = self.connections.get_mut(&key) else {
            return;
        };
        self.idle.remove(&conn.tick);
        conn.tick = tick;
        self.idle.insert(tick, key);
        let mut work = Work {
            config: &self.config,
            out: &mut self.out,
            time: s.time,
        };
        if s.flags.syn {
            if !s.flags.ack {
                conn.client = Some(d);
            } else if conn.client.is_none() {
                conn.client = Some(1 - d);
            }
            let dir = &mut conn.dirs[d];
            if !dir.tcp.started() {
                dir.tcp.start(s.seq.wrapping_add(1));
                dir.from_syn = true;
            }
        }
        let mut deliveries = Vec::new();
        if s.flags.ack && conn.dirs[1 - d].tcp.started() {
            conn.dirs[1 - d].tcp.acknowledged(s.ack, &mut deliveries);
            work.deliver(conn, 1 - d, &mut deliveries);
        }
        if !s.payload.is_empty() || s.missing > 0 {
            let seq = if s.flags.syn {
                s.seq.wrapping_add(1)
            } else {
                s.seq
            };
            let max_held = self.config.max_out_of_order;
            conn.dirs[d]
                .tcp
                .segment(seq, s.payload, s.missing, max_held, &mut deliveries);
            work.deliver(conn, d, &mut deliveries);
        }
        if s.flags.fin || s.flags.rst {
            conn.dirs[d].tcp.close(&mut deliveries);
            work.deliver(conn, d, &mut deliveries);
            if s.flags.rst {
                conn.dirs[1 - d].tcp.close(&mut deliveries);
                work.deliver(conn, 1 - d, &mut deliveries);
            }
        }
        work.enforce_connection_cap(conn);
        let closed = conn.dirs.iter().all(|dir| dir.tcp.closed);
        let bytes = conn.bytes();
        self.total = self.total + bytes - conn.accounted;
        conn.accounted = bytes;
        if closed {
            self.close(key);
        }
        self.enforce_total_cap(key);
        self.stats.peak_memory = self.stats.peak_memory.max(self.total);
    }

    /// Ends the capture: every connection still open is flushed (holes as
    /// gaps, requests awaiting answers as `unanswered`).
    pub fn finish(&mut self) {
        let keys: Vec<Key> = self.idle.values().copied().collect();
        for key in keys {
            if let Some(conn) = self.connections.get_mut(&key) {
                let mut deliveries = Vec::new();
                let mut work = Work {
                    config: &self.config,
                    out: &mut self.out,
                    time: self.last_time,
                };
                for d in 0..2 {
                    conn.dirs[d].tcp.close(&mut deliveries);
                    work.deliver(conn, d, &mut deliveries);
                }
                work.end(conn, true);
            }
            self.remove(key);
        }
    }

    /// A connection that ended: what it leaves is reported, and it goes.
    fn close(&mut self, key: Key) {
        if let Some(conn) = self.connections.get_mut(&key) {
            let mut work = Work {
                config: &self.config,
                out: &mut self.out,
                time: self.last_time,
            };
            work.end(conn, false);
        }
        self.remove(key);
    }

    fn remove(&mut self, key: Key) {
        if let Some(conn) = self.connections.remove(&key) {
            self.idle.remove(&conn.tick);
            self.total -= conn.accounted;
        }
    }

    /// Evicts the connections idle longest until all fit, sparing `current`.
    fn enforce_total_cap(&mut self, current: Key) {
        while self.total > self.config.max_total_bytes {
            let Some(key) = self.idle.values().copied().find(|key| *key != current) else {
                return;
            };
            if let Some(conn) = self.connections.get(&key) {
                let pending = conn
                    .pending
                    .iter()
                    .filter(|p| matches!(p, Pending::Request(_)))
                    .count();
                let event = conn.event(
                    EventKind::Evicted,
                    self.last_time,
                    format!(
                        "idle longest when the capture's connections held more than {} bytes \
                         ({} bytes held, {pending} requests awaiting answers)",
                        self.config.max_total_bytes, conn.accounted
                    ),
                );
                self.out.push_back(Output::Event(event));
                self.stats.evicted += 1;
            }
            self.remove(key);
        }
    }
}

impl Conn {
    fn bytes(&self) -> usize {
        CONNECTION_OVERHEAD
            + self.dirs[0].bytes()
            + self.dirs[1].bytes()
            + self.pending.capacity() * std::mem::size_of::<Pending>()
            + self.pending_bytes
            + self.finding.as_ref().map_or(0, |finding| {
                std::mem::size_of::<Finding>() + finding.heap_bytes()
            })
    }

    fn roles(&self) -> (Option<SocketAddr>, Option<SocketAddr>) {
        let client = self.client.unwrap_or(self.first);
        (Some(self.addrs[client]), Some(self.addrs[1 - client]))
    }

    fn event(&self, kind: EventKind, time: Timestamp, detail: String) -> Event {
        let (client, broker) = self.roles();
        Event {
            kind,
            time,
            client,
            broker,
            detail,
        }
    }
}

/// What handling one segment needs besides the connection.
struct Work<'a> {
    config: &'a Config,
    out: &'a mut VecDeque<Output>,
    time: Timestamp,
}

impl Work<'_> {
    fn event(&mut self, conn: &Conn, kind: EventKind, detail: String) {
        let event = conn.event(kind, self.time, detail);
        self.out.push_back(Output::Event(event));
    }

    fn deliver(&mut self, conn: &mut Conn, d: usize, deliveries: &mut Vec<Delivery>) {
        for delivery in deliveries.drain(..) {
            if conn.state != State::Open {
                continue;
            }
            match delivery {
                Delivery::Data(bytes) => self.data(conn, d, &bytes),
                Delivery::Gap(n) => self.gap(conn, d, n),
            }
        }
    }

    fn gap(&mut self, conn: &mut Conn, d: usize, n: u64) {
        // The clues point into bytes that go now.
        conn.finding = None;
        let dir = &mut conn.dirs[d];
        dir.seen += n;
        let partial = match dir.mode {
            Mode::Sync => dir.splitter.buffered(),
            Mode::Resync | Mode::First => 0,
        };
        dir.skipped += dir.scan.len() as u64;
        dir.scan = Vec::new();
        dir.splitter = FrameSplitter::new(self.config.max_frame_size);
        dir.mode = Mode::Resync;
        let side = if conn.client == Some(d) {
            "client"
        } else if conn.client.is_some() {
            "broker"
        } else {
            "stream"
        };
        let detail = if partial > 0 {
            format!("{n} bytes from the {side} not captured; the frame in progress ({partial} bytes) is dropped")
        } else {
            format!("{n} bytes from the {side} not captured")
        };
        self.event(conn, EventKind::Gap, detail);
    }

    fn data(&mut self, conn: &mut Conn, d: usize, bytes: &[u8]) {
        let dir = &mut conn.dirs[d];
        let first = dir.seen == 0;
        dir.seen += bytes.len() as u64;
        if first && dir.from_syn && bytes.starts_with(&[0x16, 0x03]) {
            if conn.kafka_port {
                self.event(
                    conn,
                    EventKind::Tls,
                    "the stream starts with a TLS handshake; it is skipped".to_owned(),
                );
                conn.state = State::Skipped;
            } else {
                conn.state = State::Ignored;
            }
            return;
        }
        if first && dir.from_syn {
            dir.mode = if conn.client == Some(d) && !conn.kafka_port {
                Mode::First
            } else {
                Mode::Sync
            };
        }
        let Some(client) = conn.client else {
            conn.dirs[d].scan.extend_from_slice(bytes);
            let finding = conn.finding.get_or_insert_with(Box::default);
            finding.arrived(d, bytes.len(), self.time);
            self.find_roles(conn, false);
            return;
        };
        self.follow(conn, d, client, bytes);
    }

    /// Takes bytes of side `d` of a connection whose client is known.
    fn follow(&mut self, conn: &mut Conn, d: usize, client: usize, bytes: &[u8]) {
        let dir = &mut conn.dirs[d];
        match dir.mode {
            Mode::Sync => dir.splitter.push(bytes),
            Mode::Resync | Mode::First => {
                dir.scan.extend_from_slice(bytes);
                self.resync(conn, d, client == d);
                if conn.state != State::Open {
                    return;
                }
            }
        }
        self.frames(conn, d, client == d);
    }

    /// Without a SYN or a Kafka port: which side is the client, from what
    /// their bytes show ([`crate::roles`]); `end` when no more bytes will
    /// come. Once decided (by a rule that is not sure: with a `direction`
    /// event first), the bytes held are taken again as they arrived, each
    /// at its capture time, as the client's and the broker's: what a port
    /// would have shown. A connection whose bytes show no request is not
    /// Kafka.
    fn find_roles(&mut self, conn: &mut Conn, end: bool) {
        let max = self.config.max_frame_size;
        let finding = conn.finding.get_or_insert_with(Box::default);
        let scans = [&conn.dirs[0].scan[..], &conn.dirs[1].scan[..]];
        let held = scans[0].len() + scans[1].len();
        let mut decision = finding.read(scans, conn.first, max);
        if decision.is_none() && (end || held > RESYNC_WINDOW) {
            decision = finding.guess(conn.first, end);
        }
        let Some(decision) = decision else {
            if held > RESYNC_WINDOW || end {
                conn.state = State::Ignored;
                conn.finding = None;
                conn.dirs[0].scan = Vec::new();
                conn.dirs[1].scan = Vec::new();
            }
            return;
        };
        let arrivals = conn
            .finding
            .take()
            .map(|finding| finding.into_arrivals())
            .unwrap_or_default();
        let d = decision.client;
        conn.client = Some(d);
        if !decision.rule.sure() {
            self.event(
                conn,
                EventKind::Direction,
                format!(
                    "the client is not known for sure: by rule `{}`: {}",
                    decision.rule.name(),
                    decision.why
                ),
            );
        }
        let scans = [0, 1].map(|side| std::mem::take(&mut conn.dirs[side].scan));
        let mut taken = [0, 0];
        let now = self.time;
        for arrival in arrivals {
            let (side, from) = (arrival.side, taken[arrival.side]);
            let Some(bytes) = scans[side].get(from..from + arrival.len) else {
                break;
            };
            taken[side] += arrival.len;
            self.time = arrival.time;
            if conn.state == State::Open {
                self.follow(conn, side, d, bytes);
            }
        }
        self.time = now;
    }

    /// Looks for a frame boundary in the bytes held; once found, the
    /// bytes from it on go to the splitter.
    fn resync(&mut self, conn: &mut Conn, d: usize, client: bool) {
        let max = self.config.max_frame_size;
        let dir = &conn.dirs[d];
        let scan = &dir.scan;
        let pending = &conn.pending;
        let candidate = |buf: &[u8]| {
            if client {
                request_at(buf, max)
            } else {
                response_at(buf, max, |id| {
                    pending
                        .iter()
                        .any(|p| matches!(p, Pending::Request(r) if r.correlation_id == id))
                })
            }
        };
        if dir.mode == Mode::First {
            match candidate(scan) {
                Candidate::Yes => {
                    let dir = &mut conn.dirs[d];
                    dir.splitter.push(&dir.scan);
                    dir.scan = Vec::new();
                    dir.mode = Mode::Sync;
                }
                Candidate::NeedMore if scan.len() <= RESYNC_WINDOW => {}
                // Not a Kafka request: not a Kafka stream.
                Candidate::No | Candidate::NeedMore => {
                    conn.state = State::Ignored;
                    conn.dirs[d].scan = Vec::new();
                }
            }
            return;
        }
        let mut found = None;
        let mut keep_from = scan.len().saturating_sub(11);
        for i in 0..scan.len() {
            match candidate(&scan[i..]) {
                Candidate::Yes => {
                    found = Some(i);
                    break;
                }
                Candidate::NeedMore if scan.len() - i <= RESYNC_WINDOW => {
                    keep_from = i;
                    break;
                }
                Candidate::No | Candidate::NeedMore => {}
            }
        }
        let dir = &mut conn.dirs[d];
        match found {
            Some(i) => {
                let skipped = dir.skipped + i as u64;
                dir.splitter.push(&dir.scan[i..]);
                dir.scan = Vec::new();
                dir.skipped = 0;
                dir.mode = Mode::Sync;
                if skipped > 0 {
                    self.event(
                        conn,
                        EventKind::Resync,
                        format!("{skipped} bytes skipped to the next frame boundary"),
                    );
                }
            }
            None => {
                dir.skipped += keep_from as u64;
                dir.scan.drain(..keep_from);
            }
        }
    }

    fn frames(&mut self, conn: &mut Conn, d: usize, client: bool) {
        loop {
            if conn.state != State::Open || conn.dirs[d].mode != Mode::Sync {
                return;
            }
            let frame = match conn.dirs[d].splitter.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return,
                Err(error) => {
                    let detail = match error {
                        FrameError::NegativeSize(size) => {
                            format!("a size prefix of {size}: not a frame")
                        }
                        FrameError::TooLarge { size, max } => {
                            format!("a size prefix of {size} bytes, above the maximum of {max}")
                        }
                    };
                    self.event(conn, EventKind::Undecodable, detail);
                    let dir = &mut conn.dirs[d];
                    dir.skipped += dir.splitter.buffered() as u64;
                    dir.splitter = FrameSplitter::new(self.config.max_frame_size);
                    dir.mode = Mode::Resync;
                    return;
                }
            };
            if client {
                self.request(conn, frame);
            } else {
                self.response(conn, frame);
            }
        }
    }

    fn request(&mut self, conn: &mut Conn, frame: Bytes) {
        if conn.opaque {
            return;
        }
        if let Some(round) = conn.sasl.as_mut().and_then(Legacy::take_client_token) {
            conn.pending.push_back(Pending::Token {
                round,
                time: self.time,
                client_bytes: frame.len(),
            });
            return;
        }
        let parts = match RequestParts::split(&frame) {
            Ok(parts) => parts,
            Err(error) => {
                self.event(
                    conn,
                    EventKind::Undecodable,
                    format!("a request header that does not decode: {error}"),
                );
                return;
            }
        };
        let (api, version) = (parts.api, parts.version());
        let correlation_id = parts.header.correlation_id;
        if let Err(error) = parts.decode_body_lenient_without_heap() {
            self.event(
                conn,
                EventKind::Undecodable,
                format!(
                    "{} v{version} request (correlation id {correlation_id}): {error}",
                    api.name()
                ),
            );
        }
        let client_id = parts.header.client_id.as_deref().map(str::to_owned);
        let expects_response = parts.expects_response();
        if let Some((mechanism, rounds)) = legacy_mechanism(api, version, parts.body) {
            match rounds {
                Some(rounds) => {
                    conn.sasl = Some(Legacy::new(
                        &mechanism,
                        client_id.as_deref(),
                        rounds,
                        correlation_id,
                    ));
                }
                None => {
                    conn.opaque = true;
                    self.event(
                        conn,
                        EventKind::Undecodable,
                        format!(
                            "legacy SASL with mechanism {mechanism:?}, whose tokens cannot be \
                             counted: the rest of the connection is not decoded"
                        ),
                    );
                }
            }
        }
        let (client, broker) = conn.roles();
        let (Some(client), Some(broker)) = (client, broker) else {
            return;
        };
        let exchange = Exchange {
            time: self.time,
            client,
            broker,
            api,
            version,
            correlation_id,
            client_id,
            request: frame,
            response: None,
        };
        if !expects_response {
            self.out.push_back(Output::Exchange(exchange));
            return;
        }
        if conn.pending.len() >= self.config.max_pending {
            if let Some(Pending::Request(old)) = conn.pending.pop_front() {
                conn.pending_bytes -= old.request.len();
                self.unanswered(
                    conn,
                    &old,
                    &format!(
                        "more than {} requests awaiting answers",
                        self.config.max_pending
                    ),
                );
            }
        }
        conn.pending_bytes += exchange.request.len();
        conn.pending.push_back(Pending::Request(exchange));
    }

    fn unanswered(&mut self, conn: &Conn, request: &Exchange, why: &str) {
        self.event(
            conn,
            EventKind::Unanswered,
            format!(
                "{} v{} request (correlation id {}) never answered: {why}",
                request.api.name(),
                request.version,
                request.correlation_id
            ),
        );
    }

    fn response(&mut self, conn: &mut Conn, frame: Bytes) {
        if let Some(Pending::Token { .. }) = conn.pending.front() {
            if let Some(Pending::Token {
                round,
                time,
                client_bytes,
            }) = conn.pending.pop_front()
            {
                let (client, broker) = conn.roles();
                if let (Some(client), Some(broker), Some(sasl)) = (client, broker, &mut conn.sasl) {
                    self.out.push_back(Output::SaslToken(SaslTokenExchange {
                        time,
                        client,
                        broker,
                        mechanism: sasl.mechanism().to_owned(),
                        round,
                        client_id: sasl.client_id().map(str::to_owned),
                        client_bytes,
                        broker_bytes: frame.len(),
                    }));
                    sasl.answered(round, &frame);
                }
                end_sasl_if_done(conn);
            }
            return;
        }
        let Some(correlation_id) = frame.first_chunk::<4>().map(|c| i32::from_be_bytes(*c)) else {
            self.event(
                conn,
                EventKind::Undecodable,
                format!(
                    "a response of {} bytes, too short for a header",
                    frame.len()
                ),
            );
            return;
        };
        let found = conn
            .pending
            .iter()
            .position(|p| matches!(p, Pending::Request(r) if r.correlation_id == correlation_id));
        let Some(index) = found else {
            if !conn.opaque {
                self.event(
                    conn,
                    EventKind::UnpairedResponse,
                    format!(
                        "a response with correlation id {correlation_id}, whose request was not captured"
                    ),
                );
            }
            return;
        };
        // Kafka answers a connection's requests in order: those before it
        // will not be.
        for _ in 0..index {
            if let Some(Pending::Request(old)) = conn.pending.pop_front() {
                conn.pending_bytes -= old.request.len();
                self.unanswered(conn, &old, "a later request was answered first");
            }
        }
        let Some(Pending::Request(mut exchange)) = conn.pending.pop_front() else {
            return;
        };
        conn.pending_bytes -= exchange.request.len();
        let parts = ResponseParts::split(&frame, exchange.api, exchange.version);
        if let Some(sasl) = &mut conn.sasl {
            if sasl.handshake() == Some(correlation_id) {
                let refused = parts.as_ref().map_or(true, |p| handshake_refused(p.body));
                sasl.handshake_answered(refused);
            }
        }
        end_sasl_if_done(conn);
        if let Err(error) = parts.and_then(|p| p.decode_body_without_heap()) {
            self.event(
                conn,
                EventKind::Undecodable,
                format!(
                    "{} v{} response (correlation id {correlation_id}): {error}",
                    exchange.api.name(),
                    exchange.version
                ),
            );
        }
        exchange.response = Some(Response {
            time: self.time,
            frame,
        });
        self.out.push_back(Output::Exchange(exchange));
    }

    /// Keeps one connection within its cap: first its partial frames go,
    /// then its oldest requests.
    fn enforce_connection_cap(&mut self, conn: &mut Conn) {
        let max = self.config.max_connection_bytes;
        for d in 0..2 {
            if conn.bytes() <= max {
                return;
            }
            let dir = &mut conn.dirs[d];
            let held = dir.splitter.buffered() + dir.scan.len();
            if held == 0 {
                continue;
            }
            dir.splitter = FrameSplitter::new(self.config.max_frame_size);
            dir.skipped += dir.scan.len() as u64;
            dir.scan = Vec::new();
            dir.mode = Mode::Resync;
            // What was found in the bytes dropped goes with them.
            conn.finding = None;
            self.event(
                conn,
                EventKind::Undecodable,
                format!(
                    "a frame in progress ({held} bytes) dropped: the connection held more than {max} bytes"
                ),
            );
        }
        while conn.bytes() > max {
            let Some(pending) = conn.pending.pop_front() else {
                return;
            };
            if let Pending::Request(old) = pending {
                conn.pending_bytes -= old.request.len();
                self.unanswered(
                    conn,
                    &old,
                    &format!("dropped: the connection held more than {max} bytes"),
                );
            }
        }
    }

    /// Reports what a connection leaves when it ends (`capture_end`: when
    /// the capture does).
    fn end(&mut self, conn: &mut Conn, capture_end: bool) {
        if conn.state == State::Open && conn.client.is_none() {
            self.find_roles(conn, true);
        }
        if conn.state == State::Open {
            for d in 0..2 {
                let dir = &conn.dirs[d];
                let partial = dir.splitter.buffered();
                let skipped = dir.skipped + dir.scan.len() as u64;
                let known = conn.client.is_some();
                if dir.mode == Mode::Sync && partial > 0 {
                    let detail = if capture_end {
                        format!("the capture ends {partial} bytes into a frame")
                    } else {
                        format!("the stream ends {partial} bytes into a frame")
                    };
                    let kind = if capture_end {
                        EventKind::Gap
                    } else {
                        EventKind::Undecodable
                    };
                    self.event(conn, kind, detail);
                } else if dir.mode == Mode::Resync && skipped > 0 && known {
                    self.event(
                        conn,
                        EventKind::Resync,
                        format!("{skipped} bytes skipped: no frame boundary found"),
                    );
                }
            }
        }
        let why = if capture_end {
            "the capture ends"
        } else {
            "the connection closed"
        };
        while let Some(pending) = conn.pending.pop_front() {
            if let Pending::Request(old) = pending {
                conn.pending_bytes -= old.request.len();
                self.unanswered(conn, &old, why);
            }
        }
    }
}

fn end_sasl_if_done(conn: &mut Conn) {
    let tokens_pending = conn
        .pending
        .iter()
        .any(|p| matches!(p, Pending::Token { .. }));
    if !tokens_pending
        && conn
            .sasl
            .as_ref()
            .is_some_and(|s| s.tokens_done() && s.handshake().is_none())
    {
        conn.sasl = None;
    }
}
