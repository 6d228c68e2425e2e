//! The UTF-8 check of strings read from the wire, with a fast path for
//! ASCII.
//!
//! Nearly every string Kafka sends (topic names, client ids, hosts, group
//! and transactional ids) is ASCII, and most are shorter than 64 bytes, where
//! `std::str::from_utf8` costs 3-10 instructions per byte: a third of the
//! work of decoding a Vote request. `<[u8]>::is_ascii` tests a word at a
//! time that no byte has its high bit set; such bytes are valid UTF-8 as they
//! are. Anything else goes through `std::str::from_utf8`, whose error, with
//! its `valid_up_to`, is what the reader reports.
//!
//! # Why this module is unsafe
//!
//! Safe Rust has no way to make a `&str` of bytes already known to be ASCII
//! without checking them again. The one `unsafe` block below calls
//! `std::str::from_utf8_unchecked` only on bytes that `is_ascii` found
//! below 0x80, each of which is a complete one-byte UTF-8 sequence. The
//! module's tests check [`str_from_utf8`] against `std::str::from_utf8` on
//! every length up to 64 with a non-ASCII byte at each position, and on
//! arbitrary bytes (proptest); CI runs them under Miri as well.
#![allow(unsafe_code)]

use std::str::Utf8Error;

/// `bytes` as a `&str`, or the error of `std::str::from_utf8` when they are
/// not UTF-8. Same result as `std::str::from_utf8`, faster on ASCII.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn str_from_utf8(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if bytes.is_ascii() {
        // SAFETY: every byte is below 0x80 (`is_ascii`), and a run of such
        // bytes is valid UTF-8: each byte is a sequence of its own.
        Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        std::str::from_utf8(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ascii_of_every_length_is_taken_as_it_is() {
        let text: Vec<u8> = (0..64u8).map(|i| b' ' + (i % 90)).collect();
        for len in 0..=text.len() {
            let bytes = &text[..len];
            assert_eq!(str_from_utf8(bytes), std::str::from_utf8(bytes));
        }
    }

    #[test]
    fn a_high_byte_anywhere_goes_to_the_full_check() {
        // Miri runs this too; every length up to three words is enough there.
        let longest = if cfg!(miri) { 24 } else { 64 };
        for len in 1..=longest {
            for at in 0..len {
                for high in [0x80u8, 0xc3, 0xff] {
                    let mut bytes = vec![b'k'; len];
                    bytes[at] = high;
                    assert_eq!(
                        str_from_utf8(&bytes),
                        std::str::from_utf8(&bytes),
                        "len {len}, byte {high:#x} at {at}"
                    );
                }
            }
        }
        // Valid multi-byte text keeps working.
        let text = "tópico-ünïcode-名前";
        assert_eq!(str_from_utf8(text.as_bytes()), Ok(text));
    }

    proptest! {
        // Miri runs these too, about a thousand times slower: fewer cases
        // there.
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 12 } else { 256 }))]

        #[test]
        fn agrees_with_std_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(str_from_utf8(&bytes), std::str::from_utf8(&bytes));
        }

        #[test]
        fn agrees_with_std_on_mostly_ascii(
            mut bytes in proptest::collection::vec(0u8..0x80, 0..100),
            high in proptest::option::of((any::<prop::sample::Index>(), 0x80u8..=0xff)),
        ) {
            if let (Some((at, byte)), false) = (high, bytes.is_empty()) {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
            prop_assert_eq!(str_from_utf8(&bytes), std::str::from_utf8(&bytes));
        }
    }
}
