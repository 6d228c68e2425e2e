//! From a captured packet to its TCP segment: the link layer, then IPv4 or
//! IPv6 (with VLAN tags) and TCP through etherparse.
//!
//! The link headers etherparse does not read are read here, and only here:
//! Linux cooked capture v1 (SLL, 16 bytes) and v2 (SLL2, 20 bytes), and
//! BSD loopback (`NULL`, a 4-byte address family in the capturing host's
//! byte order, and `LOOP`, the same in network byte order).

use std::net::{IpAddr, SocketAddr};

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket, TransportSlice};

use crate::time::Timestamp;

/// A pcap link type (`LINKTYPE_*`), as a capture file names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkType(pub u32);

impl LinkType {
    /// BSD loopback: a 4-byte address family in host byte order.
    pub const NULL: LinkType = LinkType(0);
    /// Ethernet II, with any VLAN tags.
    pub const ETHERNET: LinkType = LinkType(1);
    /// Raw IP: the packet starts with an IPv4 or IPv6 header.
    pub const RAW: LinkType = LinkType(101);
    /// OpenBSD loopback: a 4-byte address family in network byte order.
    pub const LOOP: LinkType = LinkType(108);
    /// Linux cooked capture v1 (`tcpdump -i any`).
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// Raw IPv4.
    pub const IPV4: LinkType = LinkType(228);
    /// Raw IPv6.
    pub const IPV6: LinkType = LinkType(229);
    /// Linux cooked capture v2.
    pub const LINUX_SLL2: LinkType = LinkType(276);

    /// Whether this reader reads packets of this link type.
    pub fn is_supported(self) -> bool {
        matches!(self.0, 0 | 1 | 101 | 108 | 113 | 228 | 229 | 276)
    }
}

/// One captured packet, as a capture file holds it.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    /// When it was captured.
    pub time: Timestamp,
    /// The link type of the interface it was captured on.
    pub link: LinkType,
    /// The bytes captured, at most the snap length.
    pub data: &'a [u8],
    /// The packet's length on the wire: more than `data.len()` when the
    /// snap length cut it.
    pub original_len: u32,
}

/// The TCP flags the reader acts on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpFlags {
    /// SYN: the sender opens the connection.
    pub syn: bool,
    /// ACK: `ack` is valid.
    pub ack: bool,
    /// FIN: the sender has no more to send.
    pub fin: bool,
    /// RST: the connection is gone.
    pub rst: bool,
}

/// One TCP segment: the input of [`crate::Tracker::segment`], for a tool
/// that has its own packet source.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    /// When it was captured.
    pub time: Timestamp,
    /// The sender.
    pub source: SocketAddr,
    /// The receiver.
    pub destination: SocketAddr,
    /// The sequence number of the first payload byte (of the SYN itself
    /// for a SYN).
    pub seq: u32,
    /// The acknowledgement number (meaningful with `flags.ack`).
    pub ack: u32,
    /// The flags.
    pub flags: TcpFlags,
    /// The payload bytes captured.
    pub payload: &'a [u8],
    /// Payload bytes the snap length cut off after `payload`.
    pub missing: usize,
}

/// Why a packet yields no segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotTcp {
    /// The link type is not one this reader reads.
    UnsupportedLink(LinkType),
    /// Not TCP over IPv4 or IPv6 (ARP, UDP, a fragment, a header cut short).
    Other,
}

/// The TCP segment a packet carries.
pub fn segment<'a>(packet: &Packet<'a>) -> Result<Segment<'a>, NotTcp> {
    let data = packet.data;
    let sliced = match packet.link {
        LinkType::ETHERNET => LaxSlicedPacket::from_ethernet(data).ok(),
        LinkType::RAW | LinkType::IPV4 | LinkType::IPV6 => LaxSlicedPacket::from_ip(data).ok(),
        LinkType::NULL | LinkType::LOOP => {
            let family = data.first_chunk::<4>().ok_or(NotTcp::Other)?;
            let family = if packet.link == LinkType::NULL {
                // Written in the capturing host's order: the family is small,
                // so whichever end holds it tells the order.
                u32::from_le_bytes(*family).min(u32::from_be_bytes(*family))
            } else {
                u32::from_be_bytes(*family)
            };
            match family {
                // AF_INET, and AF_INET6 as BSDs, Linux, macOS and Windows number it.
                2 | 10 | 23 | 24 | 28 | 30 => LaxSlicedPacket::from_ip(&data[4..]).ok(),
                _ => None,
            }
        }
        LinkType::LINUX_SLL => {
            // Packet type, ARPHRD type, address length, 8 address bytes,
            // then the protocol.
            let protocol = data.get(14..16).ok_or(NotTcp::Other)?;
            let protocol = u16::from_be_bytes([protocol[0], protocol[1]]);
            Some(LaxSlicedPacket::from_ether_type(
                EtherType(protocol),
                &data[16..],
            ))
        }
        LinkType::LINUX_SLL2 => {
            // The protocol first, then reserved, interface index, ARPHRD
            // type, packet type, address length and 8 address bytes.
            let protocol = data.first_chunk::<2>().ok_or(NotTcp::Other)?;
            let rest = data.get(20..).ok_or(NotTcp::Other)?;
            Some(LaxSlicedPacket::from_ether_type(
                EtherType(u16::from_be_bytes(*protocol)),
                rest,
            ))
        }
        other => return Err(NotTcp::UnsupportedLink(other)),
    };
    let sliced = sliced.ok_or(NotTcp::Other)?;
    let (source, destination, incomplete) = match &sliced.net {
        Some(LaxNetSlice::Ipv4(ip)) => {
            let header = ip.header();
            (
                IpAddr::V4(header.source_addr()),
                IpAddr::V4(header.destination_addr()),
                ip.payload().incomplete,
            )
        }
        Some(LaxNetSlice::Ipv6(ip)) => {
            let header = ip.header();
            (
                IpAddr::V6(header.source_addr()),
                IpAddr::V6(header.destination_addr()),
                ip.payload().incomplete,
            )
        }
        _ => return Err(NotTcp::Other),
    };
    let Some(TransportSlice::Tcp(tcp)) = &sliced.transport else {
        return Err(NotTcp::Other);
    };
    let cut = usize::try_from(packet.original_len)
        .unwrap_or(usize::MAX)
        .saturating_sub(data.len());
    Ok(Segment {
        time: packet.time,
        source: SocketAddr::new(source, tcp.source_port()),
        destination: SocketAddr::new(destination, tcp.destination_port()),
        seq: tcp.sequence_number(),
        ack: tcp.acknowledgment_number(),
        flags: TcpFlags {
            syn: tcp.syn(),
            ack: tcp.ack(),
            fin: tcp.fin(),
            rst: tcp.rst(),
        },
        payload: tcp.payload(),
        missing: if incomplete { cut } else { 0 },
    })
}
