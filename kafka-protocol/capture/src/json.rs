//! The JSON form of what the reader finds: one object per exchange, token
//! exchange or event, with the key names of the proxy's log where they
//! mean the same thing.

use std::io;
use std::net::SocketAddr;

use base64::Engine;
use kafka_wire::frame::Lenient;
use kafka_wire::runtime::json::{BytesForm, JsonWriter};
use kafka_wire_proxy::redact::{redact_exchange, redacts};
use kafka_wire_records::{records_to_json, write_records_json_to, DecodeOptions, WriteJsonError};
use serde_json::{Map, Value};

use crate::output::{Event, Exchange, Output, SaslTokenExchange};

/// Choices for the JSON form.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonOptions {
    /// Decode the record batches in `records` fields (Produce, Fetch and
    /// others) into their JSON form instead of base64. A blob that does not
    /// decode stays base64.
    pub records: bool,
}

/// `HOST:PORT`, `[HOST]:PORT` for IPv6.
fn address(address: SocketAddr) -> Value {
    Value::from(address.to_string())
}

impl Output {
    /// The JSON form: [`Exchange::to_json`], [`SaslTokenExchange::to_json`]
    /// or [`Event::to_json`].
    pub fn to_json(&self, options: &JsonOptions) -> Value {
        match self {
            Output::Exchange(exchange) => exchange.to_json(options),
            Output::SaslToken(token) => token.to_json(),
            Output::Event(event) => event.to_json(),
        }
    }
}

impl Output {
    /// Writes the text of [`to_json`](Self::to_json) to `out`: an
    /// exchange straight from its bodies (see [`Exchange::write_json`]).
    pub fn write_json(&self, out: &mut JsonWriter<'_>, options: &JsonOptions) -> io::Result<()> {
        match self {
            Output::Exchange(exchange) => exchange.write_json(out, options),
            _ => out.value(&self.to_json(options)),
        }
    }
}

impl Exchange {
    /// Writes the text of [`to_json`](Self::to_json) to `out`. For an api
    /// with nothing to redact (see [`redacts`]), straight from the bodies,
    /// without building the [`Value`]: what a capture of megabytes of
    /// records needs. With `records`, each records blob is decoded as it
    /// is written (see [`write_records_json_to`]).
    pub fn write_json(&self, out: &mut JsonWriter<'_>, options: &JsonOptions) -> io::Result<()> {
        if redacts(self.api) {
            return out.value(&self.to_json(options));
        }
        let form = options.records.then_some(RECORDS_FORM);
        let before = out.set_bytes_form(form);
        let written = self.write_fields(out);
        out.set_bytes_form(before);
        written
    }

    /// The members of [`write_json`](Self::write_json), with the bodies in
    /// whatever bytes form `out` has.
    fn write_fields(&self, out: &mut JsonWriter<'_>) -> io::Result<()> {
        out.begin_object()?;
        out.key("time")?;
        out.str(&self.time.to_string())?;
        out.key("client")?;
        out.str(&self.client.to_string())?;
        out.key("broker")?;
        out.str(&self.broker.to_string())?;
        out.key("api")?;
        out.str(self.api.name())?;
        out.key("version")?;
        out.i64(self.version.into())?;
        out.key("correlationId")?;
        out.i64(self.correlation_id.into())?;
        out.key("clientId")?;
        match &self.client_id {
            Some(id) => out.str(id)?,
            None => out.null()?,
        }
        out.key("request")?;
        let request = self.request_body();
        match &request {
            Ok(body) => body.value.write_json(out, self.version)?,
            Err(_) => out.null()?,
        }
        if let Ok(Lenient {
            trailing_bytes: trailing @ 1..,
            ..
        }) = request
        {
            out.key("trailingBytes")?;
            out.i64(i64::try_from(trailing).unwrap_or(i64::MAX))?;
        }
        out.key("response")?;
        match self.response_parts() {
            Some(Ok(parts)) => match parts.decode_body_without_heap() {
                Ok(body) => body.write_json(out, parts.version)?,
                Err(_) => out.null()?,
            },
            _ => out.null()?,
        }
        out.key("latencyUs")?;
        match self.latency_us() {
            Some(latency) => out.i64(latency)?,
            None => out.null()?,
        }
        out.end_object()
    }

    /// `time`, `client`, `broker`, `api`, `version`, `correlationId`,
    /// `clientId`, `request`, `response` (`null` when none is expected or
    /// it does not decode) and `latencyUs` (`null` without a response).
    /// Bodies are in kafka-wire's JSON form, secrets redacted as in the
    /// proxy's log. A request is read as Kafka's broker reads it: when
    /// bytes follow its body, they are ignored and counted in
    /// `trailingBytes`, after `request` (and only then).
    pub fn to_json(&self, options: &JsonOptions) -> Value {
        let request_body = self.request_body();
        let trailing = request_body.as_ref().map_or(0, |body| body.trailing_bytes);
        let mut request = request_body.map_or(Value::Null, |body| body.value.to_json(self.version));
        let mut response = match self.response_parts() {
            Some(Ok(parts)) => parts
                .decode_body_without_heap()
                .map_or(Value::Null, |body| body.to_json(parts.version)),
            _ => Value::Null,
        };
        redact_exchange(self.api, &mut request, &mut response);
        if options.records {
            decode_records(&mut request);
            decode_records(&mut response);
        }
        let mut object = Map::new();
        object.insert("time".into(), self.time.to_string().into());
        object.insert("client".into(), address(self.client));
        object.insert("broker".into(), address(self.broker));
        object.insert("api".into(), self.api.name().into());
        object.insert("version".into(), self.version.into());
        object.insert("correlationId".into(), self.correlation_id.into());
        object.insert(
            "clientId".into(),
            self.client_id.as_deref().map_or(Value::Null, Value::from),
        );
        object.insert("request".into(), request);
        if trailing > 0 {
            object.insert("trailingBytes".into(), trailing.into());
        }
        object.insert("response".into(), response);
        object.insert(
            "latencyUs".into(),
            self.latency_us().map_or(Value::Null, Value::from),
        );
        Value::Object(object)
    }
}

/// The `records` members' form with `--records`: the JSON form of their
/// record batches, or base64 when they do not decode.
const RECORDS_FORM: BytesForm = BytesForm {
    key: "records",
    write: write_records,
};

/// Writes the JSON form of the record batches in `blob`, or nothing when
/// they do not decode: what [`decode_records`] puts in their place.
fn write_records(blob: &[u8], out: &mut JsonWriter<'_>) -> io::Result<bool> {
    out.value_if(
        |out| match write_records_json_to(blob, &DecodeOptions::default(), out) {
            Ok(()) => Ok(true),
            Err(WriteJsonError::Records(_)) => Ok(false),
            Err(WriteJsonError::Io(error)) => Err(error),
        },
    )
}

/// Replaces each base64 `records` string, at any depth, by the JSON form
/// of its record batches.
fn decode_records(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if let (true, Value::String(text)) = (key == "records", &*field) {
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(text)
                        .ok()
                        .and_then(|blob| records_to_json(&blob, &DecodeOptions::default()).ok());
                    if let Some(json) = decoded {
                        *field = json;
                    }
                } else {
                    decode_records(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(decode_records),
        _ => {}
    }
}

impl SaslTokenExchange {
    /// The proxy log's `saslToken` line, with `time`, `client` and
    /// `broker`: `saslToken` (the mechanism), `round`, `clientId`,
    /// `clientBytes`, `brokerBytes`. Never the tokens.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("time".into(), self.time.to_string().into());
        object.insert("client".into(), address(self.client));
        object.insert("broker".into(), address(self.broker));
        object.insert("saslToken".into(), self.mechanism.clone().into());
        object.insert("round".into(), self.round.into());
        object.insert(
            "clientId".into(),
            self.client_id.as_deref().map_or(Value::Null, Value::from),
        );
        object.insert("clientBytes".into(), self.client_bytes.into());
        object.insert("brokerBytes".into(), self.broker_bytes.into());
        Value::Object(object)
    }
}

impl Event {
    /// `event` (the kind's name), `client`, `broker` (`null` for a file
    /// event), `time` and `detail`.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("event".into(), self.kind.name().into());
        object.insert("client".into(), self.client.map_or(Value::Null, address));
        object.insert("broker".into(), self.broker.map_or(Value::Null, address));
        object.insert("time".into(), self.time.to_string().into());
        object.insert("detail".into(), self.detail.clone().into());
        Value::Object(object)
    }
}
