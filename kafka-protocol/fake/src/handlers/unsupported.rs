//! APIs kafka-wire knows but the fake does not implement (and does not
//! advertise): every `errorCode` of the default response set to
//! UNSUPPORTED_VERSION (35), the connection kept open.

use kafka_wire::api_versions::UNSUPPORTED_VERSION;
use kafka_wire::runtime::json::Value;
use kafka_wire::{ApiKey, ResponseBody};

/// The default response for `api` with every error code 35, built through
/// the JSON form so that one function covers every api.
pub fn unsupported(api: ApiKey, version: i16) -> ResponseBody<'static> {
    let default = ResponseBody::default_for(api);
    let mut json = default.to_json(version);
    set_error_codes(&mut json);
    ResponseBody::from_json(&json, api, version).unwrap_or(default)
}

fn set_error_codes(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key == "errorCode" {
                    *field = Value::from(UNSUPPORTED_VERSION);
                } else {
                    set_error_codes(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(set_error_codes),
        _ => {}
    }
}
