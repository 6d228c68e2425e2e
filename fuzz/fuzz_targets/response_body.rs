//! Response bodies of every api and version: `[api_key, version, body...]`
//! (see the crate docs for how the bytes select them). Decoding the body,
//! and the same bytes as a whole response frame, must never panic, and the
//! validate-only pass must agree with decode, error for error.
#![no_main]

use kafka_wire::frame::ResponseFrame;
use kafka_wire::ResponseBody;
use kafka_wire_fuzz::{select_api, select_version};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[api_byte, version_byte], body)) = data.split_first_chunk::<2>() else {
        return;
    };
    let api = select_api(api_byte);
    let version = select_version(api, version_byte);
    let decoded = ResponseBody::decode(body, api, version);
    assert_eq!(
        ResponseBody::validate(body, api, version),
        decoded.as_ref().map(drop).map_err(Clone::clone),
        "validate disagrees with decode"
    );
    if let Ok(decoded) = decoded {
        assert_eq!(decoded.api_key(), api);
    }
    let _ = ResponseFrame::decode(body, api, version);
});
