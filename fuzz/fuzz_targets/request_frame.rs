//! Request frames (header plus body, no size prefix) of any api and version:
//! decoding must never panic, and a decoded frame must re-encode to exactly
//! its computed size and decode again to the same value.
#![no_main]

use kafka_wire::frame::{peek_request, RequestFrame};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let peek = peek_request(data);
    let Ok(frame) = RequestFrame::decode(data) else {
        return;
    };
    assert!(peek.is_ok(), "peek failed on a frame that decodes");
    let len = frame.encoded_len();
    let mut bytes = Vec::with_capacity(len);
    frame
        .encode(&mut bytes)
        .unwrap_or_else(|e| panic!("encoding a decoded frame failed: {e}"));
    assert_eq!(bytes.len(), len, "encoded_len disagrees with the encoding");
    let again = RequestFrame::decode(&bytes)
        .unwrap_or_else(|e| panic!("re-decoding an encoded frame failed: {e}"));
    if again != frame {
        // NaN never equals itself; the bytes must still be stable.
        assert!(
            format!("{frame:?}").contains("NaN"),
            "frame changed in a round trip"
        );
        let mut twice = Vec::new();
        assert!(again.encode(&mut twice).is_ok());
        assert_eq!(twice, bytes, "re-encoding is not stable");
    }
});
