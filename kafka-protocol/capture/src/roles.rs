//! Which side of a connection is the client, when neither its SYN nor a
//! port says so: a connection captured mid-stream, off the ports given.
//!
//! Until it is known, each side's bytes are held and read for clues:
//! request headers (a size within bounds, a known api and version, a
//! correlation id of zero or more) and, once a frame is whole, whether its
//! body decodes as that request. A header alone proves little: a response
//! can read as one (an ApiVersions answer begins like a Produce v7
//! request whose body does not decode). The rules, surest first:
//!
//! 1. `answers`: one side sent a request whose body decodes, and the other
//!    answered it: a frame that echoes its correlation id and decodes as
//!    that api's response. Sure, as a response is what only a broker sends.
//! 2. `request`: when no answer settles it before the stream ends or more
//!    than [`RESYNC_WINDOW`] bytes are held, the side whose bytes read
//!    best as requests: a whole body that decodes, then one that decodes
//!    with bytes after it, then a frame not yet whole. Not sure.
//! 3. `first-request`: both sides read as well: the side that sent first.
//!    Not sure either.
//!
//! The tracker says so in a `direction` event when a rule that is not sure
//! decided.

use std::fmt;

use kafka_wire::frame::{frame_size, peek_request, RequestParts, ResponseParts};
use kafka_wire::ApiKey;

use crate::boundary::{request_at, Candidate, RESYNC_WINDOW};
use crate::time::Timestamp;

/// The most request headers read per side before the roles are known.
const MAX_CLUES: usize = 32;

/// How the client was told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// The other side answered its request.
    Answers,
    /// Its bytes read best as requests.
    Request,
    /// Both read as well; it sent first.
    FirstRequest,
}

impl Rule {
    /// The rule's name, as events and the guide give it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rule::Answers => "answers",
            Rule::Request => "request",
            Rule::FirstRequest => "first-request",
        }
    }

    /// Whether the rule leaves no doubt.
    pub(crate) fn sure(self) -> bool {
        self == Rule::Answers
    }
}

/// Which side is the client, by which rule, and why, for a person.
#[derive(Debug)]
pub(crate) struct Decision {
    /// The client's side (0 or 1, as the connection numbers its sides).
    pub(crate) client: usize,
    /// The rule that decided.
    pub(crate) rule: Rule,
    /// What the rule saw.
    pub(crate) why: String,
}

/// What a request header's frame shows, best last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    /// The frame is whole and its header or body does not decode.
    Refuted,
    /// The frame is not whole yet.
    Partial,
    /// The body decodes, with bytes after it.
    Trailing,
    /// The body decodes, every byte used.
    Whole,
}

/// A request header found in a side's bytes.
#[derive(Debug, Clone)]
struct Clue {
    /// Where its size prefix starts.
    at: usize,
    /// The frame's size, without the prefix.
    size: usize,
    api: ApiKey,
    version: i16,
    correlation_id: i32,
    verdict: Verdict,
    /// Where in the other side's bytes its answer is still looked for.
    answer_from: usize,
    answered: bool,
}

impl Clue {
    /// What the frame shows; at the `end` of the stream, one that will never
    /// be whole shows nothing.
    fn verdict(&self, end: bool) -> Verdict {
        match self.verdict {
            Verdict::Partial if end => Verdict::Refuted,
            verdict => verdict,
        }
    }

    /// The header that [`request_at`] found at `at`.
    fn at(scan: &[u8], at: usize, max: usize) -> Option<Clue> {
        let prefix = scan.get(at..)?.first_chunk::<4>()?;
        let size = frame_size(*prefix, max).ok()?;
        let frame = &scan[at + 4..];
        let peek = peek_request(&frame[..frame.len().min(size)]).ok()?;
        let mut clue = Clue {
            at,
            size,
            api: peek.api()?,
            version: peek.api_version,
            correlation_id: peek.correlation_id,
            verdict: Verdict::Partial,
            answer_from: 0,
            answered: false,
        };
        clue.judge(scan);
        Some(clue)
    }

    /// Reads the frame once it is whole: does it decode as the request its
    /// header names, with a client id of no control characters?
    fn judge(&mut self, scan: &[u8]) {
        let Some(frame) = scan.get(self.at + 4..self.at + 4 + self.size) else {
            return;
        };
        let Ok(parts) = RequestParts::split(frame) else {
            self.verdict = Verdict::Refuted;
            return;
        };
        let client_id = parts.header.client_id.as_deref().unwrap_or_default();
        if client_id.chars().any(char::is_control) {
            self.verdict = Verdict::Refuted;
            return;
        }
        self.verdict = match parts.decode_body_lenient_without_heap() {
            Ok(body) if body.trailing_bytes == 0 => Verdict::Whole,
            Ok(_) => Verdict::Trailing,
            Err(_) => Verdict::Refuted,
        };
    }

    /// Whether the other side's bytes, `other`, answer this request: a
    /// frame that echoes its correlation id and decodes as its api's
    /// response. Remembers how far it looked.
    fn answered_in(&mut self, other: &[u8], max: usize) -> bool {
        if self.answered || self.verdict < Verdict::Trailing {
            return self.answered;
        }
        let id = self.correlation_id.to_be_bytes();
        let mut j = self.answer_from;
        while let Some(window) = other.get(j..j + 8) {
            if window[4..] == id {
                let prefix = [window[0], window[1], window[2], window[3]];
                if let Ok(size @ 4..) = frame_size(prefix, max) {
                    let Some(frame) = other.get(j + 4..j + 4 + size) else {
                        // Not whole yet: looked at again with more bytes.
                        break;
                    };
                    let decodes = ResponseParts::split(frame, self.api, self.version)
                        .and_then(|parts| parts.decode_body_without_heap())
                        .is_ok();
                    if decodes {
                        self.answered = true;
                        break;
                    }
                }
            }
            j += 1;
        }
        self.answer_from = j;
        self.answered
    }
}

impl fmt::Display for Clue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, version, id) = (self.api.name(), self.version, self.correlation_id);
        match self.verdict {
            Verdict::Whole => write!(f, "a whole {name} v{version} request (correlation id {id})"),
            Verdict::Trailing => write!(
                f,
                "a {name} v{version} request (correlation id {id}) with bytes after its body"
            ),
            Verdict::Partial => write!(
                f,
                "the start of a {name} v{version} request (correlation id {id})"
            ),
            Verdict::Refuted => write!(
                f,
                "a {name} v{version} request header (correlation id {id}) whose body does not decode"
            ),
        }
    }
}

/// One side's clues.
#[derive(Debug, Default)]
struct Side {
    /// Offsets before this have been read for request headers.
    read_to: usize,
    clues: Vec<Clue>,
}

impl Side {
    /// Reads the bytes that came since the last time, and judges the
    /// frames that are whole now.
    fn read(&mut self, scan: &[u8], max: usize) {
        for clue in &mut self.clues {
            if clue.verdict == Verdict::Partial {
                clue.judge(scan);
            }
        }
        let mut i = self.read_to;
        while i < scan.len() && self.clues.len() < MAX_CLUES {
            match request_at(&scan[i..], max) {
                Candidate::NeedMore if scan.len() - i <= RESYNC_WINDOW => break,
                Candidate::No | Candidate::NeedMore => i += 1,
                Candidate::Yes => match Clue::at(scan, i, max) {
                    Some(clue) => {
                        // After a request that decodes, the next frame
                        // follows it; elsewhere, any offset may start one.
                        i = if clue.verdict >= Verdict::Trailing {
                            i + 4 + clue.size
                        } else {
                            i + 1
                        };
                        self.clues.push(clue);
                    }
                    None => i += 1,
                },
            }
        }
        self.read_to = i;
    }

    /// The clue that reads best as a request (the first of the best);
    /// at the `end`, a frame that is not whole reads as none.
    fn best(&self, end: bool) -> Option<&Clue> {
        self.clues.iter().rev().max_by_key(|clue| clue.verdict(end))
    }
}

/// Bytes held while the client is not known: which side sent them, how
/// many, and when they were captured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival {
    /// The side (0 or 1).
    pub(crate) side: usize,
    /// How many bytes.
    pub(crate) len: usize,
    /// When.
    pub(crate) time: Timestamp,
}

/// The search for a connection's client, while it is not known.
#[derive(Debug, Default)]
pub(crate) struct Finding {
    sides: [Side; 2],
    /// The bytes held, in the order they arrived.
    arrivals: Vec<Arrival>,
}

impl Finding {
    /// Notes that `len` bytes from `side` were held at `time`.
    pub(crate) fn arrived(&mut self, side: usize, len: usize, time: Timestamp) {
        match self.arrivals.last_mut() {
            Some(last) if last.side == side && last.time == time => last.len += len,
            _ => self.arrivals.push(Arrival { side, len, time }),
        }
    }

    /// The bytes held, in the order they arrived.
    pub(crate) fn into_arrivals(self) -> Vec<Arrival> {
        self.arrivals
    }

    /// Reads what the two sides' held bytes (`scans`, by side) show now.
    /// Decides when one side's request was answered by the other (both:
    /// as [`Finding::guess`] does, `first` being the side that sent first).
    pub(crate) fn read(&mut self, scans: [&[u8]; 2], first: usize, max: usize) -> Option<Decision> {
        for (side, scan) in self.sides.iter_mut().zip(scans) {
            side.read(scan, max);
        }
        let answered = [0, 1].map(|c| {
            let other = scans[1 - c];
            self.sides[c]
                .clues
                .iter_mut()
                .any(|clue| clue.answered_in(other, max))
        });
        match answered {
            [true, true] => self.guess(first, false),
            [false, false] => None,
            [zero, _] => Some(Decision {
                client: if zero { 0 } else { 1 },
                rule: Rule::Answers,
                why: "the other side answered its request".to_owned(),
            }),
        }
    }

    /// Decides on what has been read, when no more can be held or (`end`)
    /// no more is to come: the side whose bytes read best as requests, or,
    /// when both read as well, the one that sent first. `None` when
    /// neither side's bytes read as a request whose body decodes or, before
    /// the end, may yet: not Kafka.
    pub(crate) fn guess(&self, first: usize, end: bool) -> Option<Decision> {
        let best = [0, 1].map(|side| self.sides[side].best(end));
        let rank = |side: usize| best[side].map(|clue| clue.verdict(end));
        let (top, top_rank) = if rank(first) >= rank(1 - first) {
            (first, rank(first))
        } else {
            (1 - first, rank(1 - first))
        };
        if top_rank.is_none_or(|verdict| verdict == Verdict::Refuted) {
            return None;
        }
        let (client, broker) = (best[top]?, best[1 - top]);
        let broker = broker.map_or_else(|| "no request".to_owned(), Clue::to_string);
        let (rule, why) = if rank(top) == rank(1 - top) {
            (
                Rule::FirstRequest,
                format!(
                    "both sides' bytes read as requests (the client's as {client}, the broker's \
                     as {broker}), and no response answered one: the side that sent first is \
                     taken for the client"
                ),
            )
        } else {
            (
                Rule::Request,
                format!(
                    "no response answered a request: the client's bytes read as {client}, the \
                     broker's as {broker}"
                ),
            )
        };
        Some(Decision {
            client: top,
            rule,
            why,
        })
    }

    /// The heap the clues and the arrivals take.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.sides
            .iter()
            .map(|side| side.clues.capacity() * std::mem::size_of::<Clue>())
            .sum::<usize>()
            + self.arrivals.capacity() * std::mem::size_of::<Arrival>()
    }
}
