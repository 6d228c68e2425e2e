//! APIs kafka-wire knows but the fake does not implement (and does not
//! advertise): every `errorCode` of the default response set to
//! UNSUPPORTED_VERSION (35), the connection kept open.

use kafka_wire::api_versions::UNSUPPORTED_VERSION;
use kafka_wire::{ApiKey, ResponseBody};

use super::answers::every_error_code;

/// The default response for `api` with every error code 35.
pub fn unsupported(api: ApiKey, version: i16) -> ResponseBody<'static> {
    every_error_code(api, version, UNSUPPORTED_VERSION)
}
