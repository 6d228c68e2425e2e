//! Writing packet captures in tests: pcap (microsecond or nanosecond) and
//! pcapng files, and TCP connections packet by packet (IPv4 or IPv6,
//! under any link type the capture reader reads), built with etherparse.

use std::net::{IpAddr, SocketAddr};

use etherparse::PacketBuilder;

/// 2026-12-07T01:02:03Z, in nanoseconds: when every test capture starts.
pub const START: i64 = 1_796_605_323_000_000_000;

/// The keys of an exchange's JSON object, in the order the capture reader
/// writes them (`Output::to_json`, and so `kafka-protocol pcap`).
pub const EXCHANGE_JSON_KEYS: [&str; 10] = [
    "time",
    "client",
    "broker",
    "api",
    "version",
    "correlationId",
    "clientId",
    "request",
    "response",
    "latencyUs",
];

/// A link layer to wrap IP packets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// Ethernet II.
    Ethernet,
    /// Ethernet II with one 802.1Q tag.
    Vlan(u16),
    /// Linux cooked v1.
    Sll,
    /// Linux cooked v2.
    Sll2,
    /// BSD loopback, little-endian family.
    Null,
    /// OpenBSD loopback, big-endian family.
    Loop,
    /// Raw IP (101).
    Raw,
    /// Raw IPv4 (228) or IPv6 (229), by the address.
    RawFamily,
}

impl Link {
    /// The pcap link type, for IPv4 (`v6` false) or IPv6.
    pub fn linktype(self, v6: bool) -> u32 {
        match self {
            Link::Ethernet | Link::Vlan(_) => 1,
            Link::Sll => 113,
            Link::Sll2 => 276,
            Link::Null => 0,
            Link::Loop => 108,
            Link::Raw => 101,
            Link::RawFamily if v6 => 229,
            Link::RawFamily => 228,
        }
    }

    fn wrap(self, ip: Vec<u8>, v6: bool) -> Vec<u8> {
        let ether_type: u16 = if v6 { 0x86dd } else { 0x0800 };
        let mut out = Vec::new();
        match self {
            Link::Ethernet | Link::Vlan(_) => {
                out.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
                if let Link::Vlan(id) = self {
                    out.extend_from_slice(&0x8100u16.to_be_bytes());
                    out.extend_from_slice(&id.to_be_bytes());
                }
                out.extend_from_slice(&ether_type.to_be_bytes());
            }
            Link::Sll => {
                out.extend_from_slice(&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
                out.extend_from_slice(&ether_type.to_be_bytes());
            }
            Link::Sll2 => {
                out.extend_from_slice(&ether_type.to_be_bytes());
                out.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 1, 0, 6]);
                out.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0, 0]);
            }
            Link::Null => out.extend_from_slice(&(if v6 { 30u32 } else { 2 }).to_le_bytes()),
            Link::Loop => out.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes()),
            Link::Raw | Link::RawFamily => {}
        }
        out.extend_from_slice(&ip);
        out
    }
}

/// One packet as written to a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Nanoseconds since the epoch.
    pub time: i64,
    /// The bytes captured.
    pub data: Vec<u8>,
    /// The length on the wire.
    pub original_len: u32,
}

impl Frame {
    /// Cuts the packet to `snaplen` bytes, as a capture's snap length does.
    pub fn snap(mut self, snaplen: usize) -> Frame {
        self.data.truncate(snaplen);
        self
    }
}

/// TCP flags of a built segment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags {
    /// SYN.
    pub syn: bool,
    /// ACK.
    pub ack: bool,
    /// FIN.
    pub fin: bool,
    /// RST.
    pub rst: bool,
}

/// One TCP connection, packet by packet, with sequence and acknowledgement
/// numbers as a real stack writes them.
#[derive(Debug, Clone)]
pub struct Flow {
    /// The client.
    pub client: SocketAddr,
    /// The broker.
    pub broker: SocketAddr,
    /// The link layer.
    pub link: Link,
    /// The next client sequence number.
    pub client_seq: u32,
    /// The next broker sequence number.
    pub broker_seq: u32,
    /// The next packet's time, in nanoseconds; each packet adds 1 ms.
    pub time: i64,
}

impl Flow {
    /// A connection from `client` to `broker`.
    pub fn new(client: &str, broker: &str, link: Link) -> Flow {
        Flow {
            client: client.parse().expect("client address"),
            broker: broker.parse().expect("broker address"),
            link,
            client_seq: 1000,
            broker_seq: 0xffff_ff00,
            time: START,
        }
    }

    /// A segment from the client (`from_client`) or the broker.
    pub fn segment(&mut self, from_client: bool, seq: u32, flags: Flags, payload: &[u8]) -> Frame {
        let (source, destination, ack) = if from_client {
            (self.client, self.broker, self.broker_seq)
        } else {
            (self.broker, self.client, self.client_seq)
        };
        let v6 = source.is_ipv6();
        let ip = match (source.ip(), destination.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => PacketBuilder::ipv4(s.octets(), d.octets(), 64),
            (IpAddr::V6(s), IpAddr::V6(d)) => PacketBuilder::ipv6(s.octets(), d.octets(), 64),
            _ => panic!("mixed address families"),
        };
        let mut tcp = ip.tcp(source.port(), destination.port(), seq, 65535);
        if flags.syn {
            tcp = tcp.syn();
        }
        if flags.ack {
            tcp = tcp.ack(ack);
        }
        if flags.fin {
            tcp = tcp.fin();
        }
        if flags.rst {
            tcp = tcp.rst();
        }
        let mut bytes = Vec::new();
        tcp.write(&mut bytes, payload).expect("a packet");
        let data = self.link.wrap(bytes, v6);
        let frame = Frame {
            time: self.time,
            original_len: data.len() as u32,
            data,
        };
        self.time += 1_000_000;
        frame
    }

    /// The three-way handshake.
    pub fn handshake(&mut self) -> Vec<Frame> {
        let syn = Flags {
            syn: true,
            ..Flags::default()
        };
        let a = self.segment(true, self.client_seq, syn, &[]);
        self.client_seq = self.client_seq.wrapping_add(1);
        let synack = Flags {
            syn: true,
            ack: true,
            ..Flags::default()
        };
        let b = self.segment(false, self.broker_seq, synack, &[]);
        self.broker_seq = self.broker_seq.wrapping_add(1);
        let c = self.segment(true, self.client_seq, ack(), &[]);
        vec![a, b, c]
    }

    /// Data from one side, in segments of at most `mss` bytes.
    pub fn send(&mut self, from_client: bool, bytes: &[u8], mss: usize) -> Vec<Frame> {
        let mut frames = Vec::new();
        for chunk in bytes.chunks(mss.max(1)) {
            let seq = if from_client {
                self.client_seq
            } else {
                self.broker_seq
            };
            frames.push(self.segment(from_client, seq, ack(), chunk));
            if from_client {
                self.client_seq = self.client_seq.wrapping_add(chunk.len() as u32);
            } else {
                self.broker_seq = self.broker_seq.wrapping_add(chunk.len() as u32);
            }
        }
        frames
    }

    /// FIN from both sides, each acknowledged.
    pub fn close(&mut self) -> Vec<Frame> {
        let fin = Flags {
            fin: true,
            ack: true,
            ..Flags::default()
        };
        let a = self.segment(true, self.client_seq, fin, &[]);
        self.client_seq = self.client_seq.wrapping_add(1);
        let b = self.segment(false, self.broker_seq, fin, &[]);
        self.broker_seq = self.broker_seq.wrapping_add(1);
        let c = self.segment(true, self.client_seq, ack(), &[]);
        vec![a, b, c]
    }
}

fn ack() -> Flags {
    Flags {
        ack: true,
        ..Flags::default()
    }
}

/// A pcap file: `linktype`, microsecond or (`nanos`) nanosecond times.
pub fn pcap(linktype: u32, nanos: bool, frames: &[Frame]) -> Vec<u8> {
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    let mut out = Vec::new();
    out.extend_from_slice(&magic.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&262_144u32.to_le_bytes());
    out.extend_from_slice(&linktype.to_le_bytes());
    for frame in frames {
        let seconds = frame.time.div_euclid(1_000_000_000) as u32;
        let nanos_part = frame.time.rem_euclid(1_000_000_000) as u32;
        let fraction = if nanos { nanos_part } else { nanos_part / 1000 };
        out.extend_from_slice(&seconds.to_le_bytes());
        out.extend_from_slice(&fraction.to_le_bytes());
        out.extend_from_slice(&(frame.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&frame.original_len.to_le_bytes());
        out.extend_from_slice(&frame.data);
    }
    out
}

fn block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let padded = body.len().div_ceil(4) * 4;
    let len = (12 + padded) as u32;
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(body);
    out.resize(out.len() + padded - body.len(), 0);
    out.extend_from_slice(&len.to_le_bytes());
}

/// A pcapng file with one interface per `(linktype, if_tsresol)` (6 for
/// microseconds, 9 for nanoseconds), and each packet on the interface its
/// index names.
pub fn pcapng(interfaces: &[(u32, u8)], frames: &[(u32, Frame)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(&mut out, 0x0a0d_0d0a, &shb);
    for &(linktype, resolution) in interfaces {
        let mut idb = Vec::new();
        idb.extend_from_slice(&(linktype as u16).to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&262_144u32.to_le_bytes());
        // if_tsresol (option 9, one byte, padded), then the end of options.
        idb.extend_from_slice(&9u16.to_le_bytes());
        idb.extend_from_slice(&1u16.to_le_bytes());
        idb.extend_from_slice(&[resolution, 0, 0, 0]);
        idb.extend_from_slice(&[0, 0, 0, 0]);
        block(&mut out, 1, &idb);
    }
    for (interface, frame) in frames {
        let resolution = interfaces[*interface as usize].1;
        let ticks = (frame.time as u128 * 10u128.pow(u32::from(resolution)) / 1_000_000_000) as u64;
        let mut epb = Vec::new();
        epb.extend_from_slice(&interface.to_le_bytes());
        epb.extend_from_slice(&((ticks >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ticks as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&frame.original_len.to_le_bytes());
        epb.extend_from_slice(&frame.data);
        epb.resize(epb.len().div_ceil(4) * 4, 0);
        block(&mut out, 6, &epb);
    }
    out
}
