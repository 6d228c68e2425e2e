//! The JSON form, for requests and responses of every api and version
//! (`[kind, api_key, version, rest...]`).
//!
//! With `kind & 2` clear, `rest` is a wire body: a decoded value's JSON form,
//! read back directly and after printing and parsing it as text, must encode
//! to the canonical bytes (the decoded value re-encoded). NaN payloads are
//! the one thing the JSON form cannot keep; values holding a NaN must give
//! the same JSON form instead.
//!
//! With `kind & 2` set, `rest` is JSON text: reading it must not panic, and
//! a value read from it that encodes must encode to its computed size and
//! decode again.
#![no_main]

use kafka_wire::runtime::json::Value;
use kafka_wire_fuzz::{encode_checked, split_selector, Body};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((kind_byte, kind, api, version, rest)) = split_selector(data) else {
        return;
    };
    if kind_byte & 2 != 0 {
        let Ok(json) = serde_json::from_slice::<Value>(rest) else {
            return;
        };
        let Ok(body) = Body::from_json(kind, api, version, &json) else {
            return;
        };
        if body.to_bytes(version).is_err() {
            return;
        }
        let bytes = encode_checked(&body, version, "value read from JSON");
        let decoded = Body::decode(kind, api, version, &bytes)
            .unwrap_or_else(|e| panic!("decoding a value read from JSON failed: {e}"));
        assert_eq!(
            decoded.to_json(version),
            body.to_json(version),
            "JSON form changed in a round trip"
        );
        return;
    }
    let Ok(decoded) = Body::decode(kind, api, version, rest) else {
        return;
    };
    let canonical = encode_checked(&decoded, version, "decoded value");
    let json = decoded.to_json(version);
    let text = json.to_string();
    let reparsed: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the JSON form does not parse as JSON: {e}\n{text}"));
    for (how, json) in [("direct", &json), ("as text", &reparsed)] {
        let back = Body::from_json(kind, api, version, json)
            .unwrap_or_else(|e| panic!("reading the JSON form back ({how}) failed: {e}\n{text}"));
        let bytes = encode_checked(&back, version, how);
        if decoded.has_nan() {
            assert_eq!(
                back.to_json(version),
                json.clone(),
                "JSON form changed ({how})"
            );
        } else {
            assert_eq!(
                bytes, canonical,
                "JSON round trip ({how}) changed the bytes\n{text}"
            );
        }
    }
});
