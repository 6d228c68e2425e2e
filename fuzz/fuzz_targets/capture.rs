//! The capture reader (kafka-wire-capture), over `[mode, rest...]`:
//!
//! - `mode & 1` clear: `rest` is a capture file, read by `read_capture`.
//!   With `mode & 2` clear it follows a pcap file header whose link type
//!   `mode >> 2` picks (so that most inputs get past the magic number and
//!   reach the link, IP and TCP layers); set, `rest` is the whole file.
//! - `mode & 1` set: `rest` is TCP traffic between a client and a broker
//!   fed to the sans-IO `Tracker` as segments: each is a control byte
//!   (bit 0: from the broker; bit 1: SYN; bit 2: FIN; bit 3: RST; bit 4:
//!   skip ahead, a lost segment; bit 5: resend from earlier, an overlap;
//!   bit 6: cut by the snap length), a length byte, and that many payload
//!   bytes.
//!
//! Every mode: nothing may panic, every output has a JSON form (records
//! decoded when `mode & 128`), the memory held stays within the cap, and
//! nothing is held once the capture is finished.
#![no_main]

use std::net::SocketAddr;

use kafka_wire_capture::{
    read_capture, Config, JsonOptions, Output, Segment, TcpFlags, Timestamp, Tracker,
};
use libfuzzer_sys::fuzz_target;

/// Link types the reader reads, and one it does not.
const LINK_TYPES: [u32; 9] = [1, 113, 276, 0, 108, 101, 228, 229, 147];

/// Small caps, so that eviction and the per-connection cap are reached.
fn config() -> Config {
    Config {
        ports: Vec::new(),
        max_frame_size: 64 << 10,
        max_connection_bytes: 256 << 10,
        max_pending: 16,
        max_total_bytes: 1 << 20,
        max_out_of_order: 64 << 10,
    }
}

fn check(output: &Output, options: &JsonOptions) {
    let json = output.to_json(options);
    assert!(json.is_object(), "not an object: {json}");
}

fn read_file(mode: u8, rest: &[u8], options: &JsonOptions) {
    let mut file = Vec::with_capacity(24 + rest.len());
    if mode & 2 == 0 {
        let link = LINK_TYPES[usize::from(mode >> 2) % LINK_TYPES.len()];
        file.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        file.extend_from_slice(&2u16.to_le_bytes());
        file.extend_from_slice(&4u16.to_le_bytes());
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&65_535u32.to_le_bytes());
        file.extend_from_slice(&link.to_le_bytes());
    }
    file.extend_from_slice(rest);
    let mut tracker = Tracker::new(config());
    let _ = read_capture(&file[..], &mut tracker, |output| check(&output, options));
    finished(&tracker);
}

fn feed_segments(mut rest: &[u8], options: &JsonOptions) {
    let client: SocketAddr = "10.0.0.1:50000".parse().expect("an address");
    let broker: SocketAddr = "10.0.0.2:9092".parse().expect("an address");
    let mut tracker = Tracker::new(config());
    // The next sequence number of each side: the client's, the broker's.
    let mut seq = [1000u32, 0xffff_ff00];
    let mut time = 1_796_605_323_000_000_000i64;
    while let [control, len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (payload, tail) = tail.split_at(len);
        rest = tail;
        let side = usize::from(control & 1);
        let (source, destination) = if side == 0 {
            (client, broker)
        } else {
            (broker, client)
        };
        let flags = TcpFlags {
            syn: control & 2 != 0,
            ack: true,
            fin: control & 4 != 0,
            rst: control & 8 != 0,
        };
        if control & 16 != 0 {
            seq[side] = seq[side].wrapping_add(len as u32);
        }
        if control & 32 != 0 {
            seq[side] = seq[side].wrapping_sub(len as u32 / 2);
        }
        let (payload, missing) = if control & 64 != 0 {
            (&payload[..len / 2], len - len / 2)
        } else {
            (payload, 0)
        };
        tracker.segment(&Segment {
            time: Timestamp::from_nanos(time),
            source,
            destination,
            seq: seq[side],
            ack: seq[1 - side],
            flags,
            payload,
            missing,
        });
        seq[side] = seq[side]
            .wrapping_add((payload.len() + missing) as u32)
            .wrapping_add(u32::from(flags.syn || flags.fin));
        time += 1_000;
        while let Some(output) = tracker.next_output() {
            check(&output, options);
        }
        assert!(tracker.memory() <= config().max_total_bytes, "over the cap");
    }
    tracker.finish();
    while let Some(output) = tracker.next_output() {
        check(&output, options);
    }
    finished(&tracker);
}

/// A finished tracker holds nothing.
fn finished(tracker: &Tracker) {
    assert_eq!(tracker.connections(), 0, "connections left after finish");
    assert_eq!(tracker.memory(), 0, "bytes held after finish");
    assert!(
        tracker.stats().peak_memory <= config().max_total_bytes,
        "over the cap"
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let options = JsonOptions {
        records: mode & 128 != 0,
    };
    if mode & 1 == 0 {
        read_file(mode, rest, &options);
    } else {
        feed_segments(rest, &options);
    }
});
