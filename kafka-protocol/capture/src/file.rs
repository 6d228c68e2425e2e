//! Reading capture files, pcap (microsecond and nanosecond) and pcapng,
//! through pcap-parser, streaming from any `std::io::Read`.

use std::io::{self, Read};

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{LegacyPcapReader, PcapBlockOwned, PcapError, PcapNGReader};

use crate::error::CaptureError;
use crate::link::{LinkType, Packet};
use crate::time::Timestamp;

/// The reader's first buffer, and the largest section header read before
/// the format is decided.
const HEAD: usize = 64 * 1024;
/// The largest block the reader makes room for: a packet of 256 KiB (the
/// largest snap length tcpdump writes) fits many times over.
const MAX_BLOCK: usize = 16 * 1024 * 1024;

/// Reads from `input` until `head` holds `len` bytes or the input ends.
fn fill<R: Read>(input: &mut R, head: &mut Vec<u8>, len: usize) -> Result<(), CaptureError> {
    let mut chunk = [0u8; 512];
    while head.len() < len {
        let want = (len - head.len()).min(chunk.len());
        match input.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(CaptureError::Read(e)),
        }
    }
    Ok(())
}

/// The input: the bytes read to find the format, then the rest.
struct Prefixed<R> {
    head: Vec<u8>,
    position: usize,
    rest: R,
}

impl<R: Read> Read for Prefixed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(head) = self.head.get(self.position..).filter(|h| !h.is_empty()) {
            let n = head.len().min(buf.len());
            buf[..n].copy_from_slice(&head[..n]);
            self.position += n;
            return Ok(n);
        }
        self.rest.read(buf)
    }
}

enum Format<R: Read> {
    Pcap(LegacyPcapReader<Prefixed<R>>),
    PcapNg(PcapNGReader<Prefixed<R>>),
}

/// One interface of a pcapng section.
#[derive(Debug, Clone, Copy)]
struct Interface {
    link: LinkType,
    /// Timestamp units per second.
    resolution: u64,
    /// Seconds added to every timestamp.
    offset: i64,
}

impl Interface {
    /// The time of `ticks` timestamp units.
    fn time(&self, ticks: u64) -> Timestamp {
        let resolution = u128::from(self.resolution);
        let seconds = u128::from(ticks) / resolution;
        let nanos = u128::from(ticks) % resolution * 1_000_000_000 / resolution;
        Timestamp::from_parts(
            i64::try_from(seconds)
                .unwrap_or(i64::MAX)
                .saturating_add(self.offset),
            i64::try_from(nanos).unwrap_or(0),
        )
    }
}

/// A streaming reader of a pcap or pcapng file: packets one at a time,
/// holding one block of the file (plus a read buffer) whatever its size.
pub struct CaptureReader<R: Read> {
    format: Format<R>,
    /// Bytes of the block returned last, to consume before the next.
    consumed: usize,
    /// pcap: the file's link type, and whether timestamps are nanoseconds.
    link: LinkType,
    nanoseconds: bool,
    /// The byte order of the pcap file, or of the current pcapng section.
    big_endian: bool,
    /// pcapng: the interfaces of the current section.
    interfaces: Vec<Interface>,
    /// The last timestamp, for pcapng's simple packets, which have none.
    last_time: Timestamp,
    /// A copy of the packet returned last.
    data: Vec<u8>,
    truncated: Option<String>,
    /// The time in the header of the block the file ends inside, when the
    /// header is whole.
    truncated_time: Option<Timestamp>,
    done: bool,
}

impl<R: Read> std::fmt::Debug for CaptureReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureReader")
            .field("link", &self.link)
            .field("interfaces", &self.interfaces)
            .field("truncated", &self.truncated)
            .finish_non_exhaustive()
    }
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header. Fails when the input is not a pcap or pcapng
    /// file, or cannot be read.
    pub fn new(mut input: R) -> Result<Self, CaptureError> {
        // Only the file header is read before the format is known, so that
        // a live capture (`tcpdump -U -w - | ...`) is read as it comes.
        let mut head = Vec::with_capacity(64);
        fill(&mut input, &mut head, 8)?;
        let header_len = match head.first_chunk::<8>() {
            // pcapng: the section header block's own length.
            Some([0x0a, 0x0d, 0x0d, 0x0a, rest @ ..]) => {
                let raw = [rest[0], rest[1], rest[2], rest[3]];
                let len = u32::from_le_bytes(raw).min(u32::from_be_bytes(raw));
                usize::try_from(len).unwrap_or(HEAD).clamp(8, HEAD)
            }
            // pcap: a fixed header.
            _ => 24,
        };
        fill(&mut input, &mut head, header_len)?;
        let magic = head.first_chunk::<4>().copied();
        let format = match magic {
            Some([0x0a, 0x0d, 0x0d, 0x0a]) => Some("pcapng"),
            Some(
                [0xd4, 0xc3, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0xc3, 0xd4]
                | [0x4d, 0x3c, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0x3c, 0x4d],
            ) => Some("pcap"),
            _ => None,
        };
        // A section header is at least 28 bytes; its length is unknown
        // until 8 are there.
        let header_len = match format {
            Some("pcapng") if head.len() < 8 => 28,
            Some("pcapng") => header_len.max(28),
            _ => header_len,
        };
        if let Some(format) = format.filter(|_| head.len() < header_len) {
            return Err(CaptureError::CutShort {
                format,
                expected: header_len,
                got: head.len(),
            });
        }
        let prefixed = Prefixed {
            head,
            position: 0,
            rest: input,
        };
        let not_a_capture = |why: &str| CaptureError::NotACapture(why.to_owned());
        let format = match (magic, format) {
            (None, _) => return Err(not_a_capture("shorter than a file header")),
            (Some(_), Some("pcapng")) => PcapNGReader::new(HEAD, prefixed)
                .map(Format::PcapNg)
                .map_err(|e| not_a_capture(&format!("pcapng section header: {e}")))?,
            (Some(_), Some(_)) => LegacyPcapReader::new(HEAD, prefixed)
                .map(Format::Pcap)
                .map_err(|e| not_a_capture(&format!("pcap file header: {e}")))?,
            (Some(_), None) => return Err(not_a_capture("no pcap or pcapng magic number")),
        };
        Ok(CaptureReader {
            format,
            consumed: 0,
            link: LinkType::ETHERNET,
            nanoseconds: false,
            big_endian: false,
            interfaces: Vec::new(),
            last_time: Timestamp::default(),
            data: Vec::new(),
            truncated: None,
            truncated_time: None,
            done: false,
        })
    }

    /// When the file ended inside a block, or a block did not parse: what
    /// happened. Reading stops there; the packets before it were returned.
    pub fn truncated(&self) -> Option<&str> {
        self.truncated.as_deref()
    }

    /// When the file ends inside a packet's block whose header is whole:
    /// the capture time that header gives the packet cut short.
    pub fn truncated_time(&self) -> Option<Timestamp> {
        self.truncated_time
    }

    /// The next packet, `None` at the end of the file (or where it is
    /// truncated, see [`CaptureReader::truncated`]). Fails only when the
    /// input cannot be read.
    pub fn next_packet(&mut self) -> Result<Option<Packet<'_>>, CaptureError> {
        loop {
            if self.done {
                return Ok(None);
            }
            let reader: &mut dyn PcapReaderIterator = match &mut self.format {
                Format::Pcap(r) => r,
                Format::PcapNg(r) => r,
            };
            if self.consumed > 0 {
                reader.consume(self.consumed);
                self.consumed = 0;
            }
            let step = match reader.next() {
                Ok((size, block)) => {
                    self.consumed = size;
                    Step::Block(read_block(
                        block,
                        &mut Layout {
                            link: &mut self.link,
                            nanoseconds: &mut self.nanoseconds,
                            big_endian: &mut self.big_endian,
                            interfaces: &mut self.interfaces,
                        },
                        &mut self.data,
                    ))
                }
                Err(PcapError::Eof) => Step::End(None),
                Err(PcapError::Incomplete(_)) => Step::Refill,
                Err(PcapError::BufferTooSmall) => Step::Grow,
                Err(PcapError::UnexpectedEof) => Step::Cut,
                Err(PcapError::ReadError) => Step::ReadError,
                Err(e) => Step::End(Some(format!("a block does not parse: {e}"))),
            };
            match step {
                Step::Block(None) => continue,
                Step::Block(Some((time, link, original_len))) => {
                    let time = time.unwrap_or(self.last_time);
                    self.last_time = time;
                    return Ok(Some(Packet {
                        time,
                        link,
                        data: &self.data,
                        original_len,
                    }));
                }
                Step::End(why) => {
                    self.truncated = why;
                    self.done = true;
                }
                Step::Cut => {
                    let head = BlockHead::of(reader.data());
                    self.cut(&head);
                }
                Step::Refill => {
                    let before = reader.data().len();
                    if reader.refill().is_err() {
                        return Err(read_failed());
                    }
                    if reader.data().len() == before && reader.reader_exhausted() {
                        if before > 0 {
                            let head = BlockHead::of(reader.data());
                            self.cut(&head);
                        }
                        self.done = true;
                    }
                }
                Step::Grow => {
                    let size = (reader.data().len() * 2).max(2 * HEAD);
                    if size > MAX_BLOCK || !reader.grow(size) {
                        self.truncated = Some(format!("a block larger than {MAX_BLOCK} bytes"));
                        self.done = true;
                    } else if reader.refill().is_err() {
                        return Err(read_failed());
                    }
                }
                Step::ReadError => return Err(read_failed()),
            }
        }
    }
}

/// The first bytes of a block: its header, when whole.
struct BlockHead {
    bytes: [u8; 28],
    len: usize,
}

impl BlockHead {
    fn of(data: &[u8]) -> BlockHead {
        let mut bytes = [0; 28];
        let len = data.len().min(bytes.len());
        bytes[..len].copy_from_slice(&data[..len]);
        BlockHead { bytes, len }
    }
}

impl<R: Read> CaptureReader<R> {
    /// The file ends inside the block that `head` begins.
    fn cut(&mut self, head: &BlockHead) {
        self.truncated = Some(CUT.to_owned());
        self.truncated_time = self.time_in(&head.bytes[..head.len]);
        self.done = true;
    }

    /// The capture time in the header of the packet block that `head`
    /// begins: a pcap record's, or a pcapng enhanced packet's (of an
    /// interface already described). `None` when the header itself is
    /// cut, or the block is of another kind.
    fn time_in(&self, head: &[u8]) -> Option<Timestamp> {
        let word = |at: usize| {
            let bytes = *head.get(at..at + 4)?.first_chunk::<4>()?;
            Some(if self.big_endian {
                u32::from_be_bytes(bytes)
            } else {
                u32::from_le_bytes(bytes)
            })
        };
        if let Format::Pcap(_) = self.format {
            // ts_sec, ts_usec (or ts_nsec), incl_len, orig_len.
            word(12)?;
            let unit = if self.nanoseconds { 1 } else { 1000 };
            return Some(Timestamp::from_parts(
                word(0)?.into(),
                i64::from(word(4)?) * unit,
            ));
        }
        // Block type 6, total length, interface id, timestamp (high, low),
        // captured length, original length.
        if word(0)? != 6 {
            return None;
        }
        word(24)?;
        let interface = self.interfaces.get(usize::try_from(word(8)?).ok()?)?;
        Some(interface.time((u64::from(word(12)?) << 32) | u64::from(word(16)?)))
    }
}

/// What [`CaptureReader::truncated`] says of a file that ends inside a block.
const CUT: &str = "the file ends inside a block";

fn read_failed() -> CaptureError {
    CaptureError::Read(io::Error::other("the input could not be read"))
}

enum Step {
    /// A block read: a packet's time (`None` for none), link type and
    /// original length, its bytes copied; `None` for other blocks.
    Block(Option<(Option<Timestamp>, LinkType, u32)>),
    End(Option<String>),
    /// The file ends inside a block.
    Cut,
    Refill,
    Grow,
    ReadError,
}

/// What the blocks read so far say of the ones to come.
struct Layout<'a> {
    link: &'a mut LinkType,
    nanoseconds: &'a mut bool,
    big_endian: &'a mut bool,
    interfaces: &'a mut Vec<Interface>,
}

fn read_block(
    block: PcapBlockOwned<'_>,
    layout: &mut Layout<'_>,
    data: &mut Vec<u8>,
) -> Option<(Option<Timestamp>, LinkType, u32)> {
    let Layout {
        link,
        nanoseconds,
        big_endian,
        interfaces,
    } = layout;
    let mut copy = |bytes: &[u8]| {
        data.clear();
        data.extend_from_slice(bytes);
    };
    match block {
        PcapBlockOwned::LegacyHeader(header) => {
            **link = LinkType(header.network.0 as u32);
            **nanoseconds = header.is_nanosecond_precision();
            **big_endian = header.is_bigendian();
            None
        }
        PcapBlockOwned::Legacy(packet) => {
            let unit = if **nanoseconds { 1 } else { 1000 };
            let time =
                Timestamp::from_parts(packet.ts_sec.into(), i64::from(packet.ts_usec) * unit);
            copy(packet.data);
            Some((Some(time), **link, packet.origlen))
        }
        PcapBlockOwned::NG(Block::SectionHeader(section)) => {
            interfaces.clear();
            **big_endian = section.big_endian();
            None
        }
        PcapBlockOwned::NG(Block::InterfaceDescription(interface)) => {
            interfaces.push(Interface {
                link: LinkType(interface.linktype.0 as u32),
                resolution: interface.ts_resolution().unwrap_or(1_000_000).max(1),
                offset: interface.ts_offset(),
            });
            None
        }
        PcapBlockOwned::NG(Block::EnhancedPacket(packet)) => {
            let interface = usize::try_from(packet.if_id)
                .ok()
                .and_then(|i| interfaces.get(i))
                .copied()?;
            let time = interface.time((u64::from(packet.ts_high) << 32) | u64::from(packet.ts_low));
            // `data` holds the padding to 32 bits too.
            let captured = usize::try_from(packet.caplen).unwrap_or(usize::MAX);
            copy(packet.data.get(..captured).unwrap_or(packet.data));
            Some((Some(time), interface.link, packet.origlen))
        }
        PcapBlockOwned::NG(Block::SimplePacket(packet)) => {
            let interface = interfaces.first().copied()?;
            let captured = usize::try_from(packet.origlen).unwrap_or(usize::MAX);
            copy(packet.data.get(..captured).unwrap_or(packet.data));
            Some((None, interface.link, packet.origlen))
        }
        PcapBlockOwned::NG(_) => None,
    }
}
