//! TCP reassembly of one direction of a connection: bytes in stream order,
//! whatever order the segments were captured in.
//!
//! Positions are counted in a 64-bit stream offset, so sequence numbers
//! wrap freely. A segment before the next expected byte is a
//! retransmission: only its new bytes count (the first bytes captured win
//! where two copies disagree). A segment after it is held, up to a bound;
//! the hole before it becomes a gap when the bound is passed, when the
//! receiver acknowledges bytes past the hole (it got what the capture
//! lost), or when the direction ends.

use std::collections::BTreeMap;

/// What the stream delivers, in order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Bytes, in stream order.
    Data(Vec<u8>),
    /// This many bytes were not captured.
    Gap(u64),
}

/// A held piece of the stream.
#[derive(Debug)]
enum Piece {
    Data(Vec<u8>),
    /// Bytes the snap length cut off.
    Lost(u64),
}

impl Piece {
    fn len(&self) -> u64 {
        match self {
            Piece::Data(data) => data.len() as u64,
            Piece::Lost(len) => *len,
        }
    }
}

/// One direction's reassembly.
#[derive(Debug, Default)]
pub(crate) struct Reassembly {
    /// The sequence number at stream offset 0, once known.
    base: Option<u32>,
    /// The stream offset of the next byte to deliver.
    next: u64,
    held: BTreeMap<u64, Piece>,
    held_bytes: usize,
    /// The direction ended (FIN or RST).
    pub(crate) closed: bool,
}

/// A segment further ahead than this is not believed.
const WINDOW: i64 = 1 << 30;

impl Reassembly {
    /// Whether the first sequence number is known.
    pub(crate) fn started(&self) -> bool {
        self.base.is_some()
    }

    /// Starts the stream at `seq` (the byte after a SYN, or the first
    /// segment of a connection captured mid-way).
    pub(crate) fn start(&mut self, seq: u32) {
        self.base = Some(seq);
        self.next = 0;
    }

    /// Bytes held out of order.
    pub(crate) fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// The offset of `seq` from the next expected byte.
    fn relative(&self, seq: u32) -> Option<i64> {
        let base = self.base?;
        let next = base.wrapping_add(self.next as u32);
        Some(i64::from(seq.wrapping_sub(next) as i32))
    }

    /// Takes a segment: `payload` at `seq`, then `missing` bytes cut off.
    /// `max_held` bounds the bytes held out of order.
    pub(crate) fn segment(
        &mut self,
        seq: u32,
        payload: &[u8],
        missing: usize,
        max_held: usize,
        out: &mut Vec<Delivery>,
    ) {
        if self.base.is_none() {
            self.start(seq);
        }
        let Some(offset) = self.relative(seq) else {
            return;
        };
        if offset > WINDOW {
            return;
        }
        let at = self.next as i64 + offset;
        if offset > 0 {
            let at = at as u64;
            if !payload.is_empty() {
                self.hold(at, Piece::Data(payload.to_vec()));
            }
            if missing > 0 {
                self.hold(at + payload.len() as u64, Piece::Lost(missing as u64));
            }
            if self.held_bytes > max_held || self.held.len() > 4096 {
                self.skip_to_held(out);
            }
            return;
        }
        // At or before the next byte: deliver what is new.
        let skip = offset.unsigned_abs();
        let len = payload.len() as u64;
        if skip < len {
            let start = skip as usize;
            self.deliver(Piece::Data(payload[start..].to_vec()), out);
        }
        let lost = (missing as u64).saturating_sub(skip.saturating_sub(len));
        if lost > 0 {
            self.deliver(Piece::Lost(lost), out);
        }
        self.drain(out);
    }

    fn hold(&mut self, at: u64, piece: Piece) {
        // The first copy of a position wins; a longer later copy adds only
        // its tail.
        let len = piece.len();
        match self.held.get(&at).map(Piece::len) {
            Some(existing) if existing >= len => {}
            Some(existing) => {
                let tail = match piece {
                    Piece::Data(data) => Piece::Data(data[existing as usize..].to_vec()),
                    Piece::Lost(n) => Piece::Lost(n - existing),
                };
                self.hold(at + existing, tail);
            }
            None => {
                if let Piece::Data(data) = &piece {
                    self.held_bytes += data.len();
                }
                self.held.insert(at, piece);
            }
        }
    }

    fn deliver(&mut self, piece: Piece, out: &mut Vec<Delivery>) {
        self.next += piece.len();
        match piece {
            Piece::Data(data) => match out.last_mut() {
                Some(Delivery::Data(last)) => last.extend_from_slice(&data),
                _ => out.push(Delivery::Data(data)),
            },
            Piece::Lost(n) => match out.last_mut() {
                Some(Delivery::Gap(last)) => *last += n,
                _ => out.push(Delivery::Gap(n)),
            },
        }
    }

    /// Delivers the held pieces that now follow on.
    fn drain(&mut self, out: &mut Vec<Delivery>) {
        while let Some(entry) = self.held.first_entry() {
            let at = *entry.key();
            if at > self.next {
                break;
            }
            let piece = entry.remove();
            if let Piece::Data(data) = &piece {
                self.held_bytes -= data.len();
            }
            let skip = self.next - at;
            if skip >= piece.len() {
                continue;
            }
            let rest = match piece {
                Piece::Data(mut data) => Piece::Data(data.split_off(skip as usize)),
                Piece::Lost(n) => Piece::Lost(n - skip),
            };
            self.deliver(rest, out);
        }
    }

    /// Gives up on the hole before the first held piece.
    fn skip_to_held(&mut self, out: &mut Vec<Delivery>) {
        if let Some((&at, _)) = self.held.first_key_value() {
            if at > self.next {
                let hole = at - self.next;
                self.deliver(Piece::Lost(hole), out);
            }
            self.drain(out);
        }
    }

    /// The receiver acknowledged everything before `ack`: bytes before it
    /// that the capture lacks were lost by the capture.
    pub(crate) fn acknowledged(&mut self, ack: u32, out: &mut Vec<Delivery>) {
        if self.closed {
            return;
        }
        let Some(offset) = self.relative(ack) else {
            return;
        };
        if offset <= 0 || offset > WINDOW {
            return;
        }
        let ack_at = self.next + offset as u64;
        while self.next < ack_at {
            match self.held.first_key_value() {
                Some((&at, _)) if at <= ack_at => {
                    if at > self.next {
                        let hole = at - self.next;
                        self.deliver(Piece::Lost(hole), out);
                    }
                    self.drain(out);
                }
                _ => {
                    let hole = ack_at - self.next;
                    self.deliver(Piece::Lost(hole), out);
                    self.drain(out);
                }
            }
        }
    }

    /// Ends the direction: whatever is held comes out, holes as gaps.
    pub(crate) fn close(&mut self, out: &mut Vec<Delivery>) {
        while !self.held.is_empty() {
            self.skip_to_held(out);
        }
        self.closed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(segments: &[(u32, &[u8], usize)]) -> Vec<Delivery> {
        let mut r = Reassembly::default();
        r.start(1000);
        let mut out = Vec::new();
        for (seq, data, missing) in segments {
            r.segment(*seq, data, *missing, 1 << 20, &mut out);
        }
        r.close(&mut out);
        out
    }

    #[test]
    fn order_duplicates_overlaps_and_holes() {
        assert_eq!(
            run(&[(1003, b"def", 0), (1000, b"abc", 0), (1000, b"xyz", 0)]),
            [Delivery::Data(b"abcdef".to_vec())]
        );
        assert_eq!(
            run(&[(1000, b"abc", 0), (1001, b"XYZW", 0)]),
            [Delivery::Data(b"abcZW".to_vec())]
        );
        assert_eq!(
            run(&[(1000, b"ab", 0), (1005, b"fg", 0)]),
            [
                Delivery::Data(b"ab".to_vec()),
                Delivery::Gap(3),
                Delivery::Data(b"fg".to_vec())
            ]
        );
        assert_eq!(
            run(&[(1000, b"ab", 4), (1006, b"gh", 0)]),
            [
                Delivery::Data(b"ab".to_vec()),
                Delivery::Gap(4),
                Delivery::Data(b"gh".to_vec())
            ]
        );
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut r = Reassembly::default();
        r.start(u32::MAX - 1);
        let mut out = Vec::new();
        r.segment(u32::MAX - 1, b"ab", 0, 1 << 20, &mut out);
        r.segment(0, b"cd", 0, 1 << 20, &mut out);
        assert_eq!(out, [Delivery::Data(b"abcd".to_vec())]);
    }

    #[test]
    fn an_acknowledgement_past_a_hole_makes_it_a_gap() {
        let mut r = Reassembly::default();
        r.start(0);
        let mut out = Vec::new();
        r.segment(5, b"fg", 0, 1 << 20, &mut out);
        assert!(out.is_empty());
        r.acknowledged(7, &mut out);
        assert_eq!(out, [Delivery::Gap(5), Delivery::Data(b"fg".to_vec())]);
    }
}
