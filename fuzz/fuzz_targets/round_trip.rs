//! Decode, encode, decode: for requests and responses of every api and
//! version (`[kind, api_key, version, body...]`), a body that decodes must
//! encode, to exactly its computed size, and decode again to an equal value
//! whose encoding is the same bytes.
#![no_main]

use kafka_wire_fuzz::{encode_checked, split_selector, Body};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((_, kind, api, version, input)) = split_selector(data) else {
        return;
    };
    let Ok(first) = Body::decode(kind, api, version, input) else {
        return;
    };
    let bytes = encode_checked(&first, version, "first encoding");
    let second = Body::decode(kind, api, version, &bytes)
        .unwrap_or_else(|e| panic!("decoding the encoding failed: {e}"));
    assert!(
        second == first || first.has_nan(),
        "value changed in a round trip:\n{first:?}\n{second:?}"
    );
    let again = encode_checked(&second, version, "second encoding");
    assert_eq!(again, bytes, "encoding is not stable");
});
