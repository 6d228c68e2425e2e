//! Redacting secrets from the JSON form of requests and responses, for
//! every tool that logs Kafka traffic (the `kafka-protocol proxy` log, the
//! `kafka-protocol pcap` reader): the one list of secret fields and the one
//! marker, `<redacted: N bytes>`.
//!
//! ```
//! use kafka_wire::ApiKey;
//! use kafka_wire_proxy::redact::{redact, secret_fields};
//!
//! let mut body = serde_json::json!({"authBytes": "AGFsaWNlAGh1bnRlcjI="});
//! redact(&mut body, secret_fields(ApiKey::SaslAuthenticate).0);
//! assert_eq!(body["authBytes"], "<redacted: 14 bytes>");
//! ```

use kafka_wire::ApiKey;
use serde_json::Value;

/// The fields that hold secrets, by api: request fields, then response
/// fields (JSON names, at any depth). SASL tokens carry a PLAIN password or
/// a SCRAM proof, SCRAM credentials a salted password, delegation tokens
/// their HMAC.
pub fn secret_fields(api: ApiKey) -> (&'static [&'static str], &'static [&'static str]) {
    match api {
        ApiKey::SaslAuthenticate => (&["authBytes"], &["authBytes"]),
        ApiKey::AlterUserScramCredentials => (&["salt", "saltedPassword"], &[]),
        ApiKey::CreateDelegationToken => (&[], &["hmac"]),
        ApiKey::RenewDelegationToken | ApiKey::ExpireDelegationToken => (&["hmac"], &[]),
        ApiKey::DescribeDelegationToken => (&[], &["hmac"]),
        _ => (&[], &[]),
    }
}

/// The text that stands for a secret of `bytes` bytes.
pub fn marker(bytes: usize) -> String {
    format!("<redacted: {bytes} bytes>")
}

/// Replaces every field named in `fields`, at any depth, by
/// [`marker`], which gives only the size of the secret (base64 text: its
/// decoded size).
pub fn redact(value: &mut Value, fields: &[&str]) {
    if fields.is_empty() {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if fields.contains(&key.as_str()) {
                    if let Value::String(text) = field {
                        let bytes = text.trim_end_matches('=').len() * 3 / 4;
                        *field = Value::from(marker(bytes));
                    }
                } else {
                    redact(field, fields);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| redact(item, fields)),
        _ => {}
    }
}

/// Redacts the secret fields of `api` in a request's JSON body and its
/// response's.
pub fn redact_exchange(api: ApiKey, request: &mut Value, response: &mut Value) {
    let (in_request, in_response) = secret_fields(api);
    redact(request, in_request);
    redact(response, in_response);
}
