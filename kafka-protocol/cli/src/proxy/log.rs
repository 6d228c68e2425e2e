//! The exchange log: one JSON object per line, in the order responses
//! arrive. The key names are pinned; outside tools read them.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::error::CliError;

/// Where exchange lines go: a file or standard output.
pub struct ExchangeLog {
    out: Mutex<Box<dyn Write + Send>>,
}

/// One exchange, as logged.
pub struct Exchange<'a> {
    /// The api's name (`Metadata`), or its key when this crate does not know it.
    pub api: String,
    /// The request's api version.
    pub version: i16,
    /// The correlation id.
    pub correlation_id: i32,
    /// The client id from the request header.
    pub client_id: Option<&'a str>,
    /// The request body in JSON form (`null` when it does not decode).
    pub request: Value,
    /// The response body as sent to the client, `null` when none comes.
    pub response: Value,
}

impl ExchangeLog {
    /// Opens `path` for writing (truncating it), or standard output for `-`.
    pub fn open(path: &Path) -> Result<Self, CliError> {
        let out: Box<dyn Write + Send> = if path == Path::new("-") {
            Box::new(std::io::stdout())
        } else {
            let file = File::create(path).map_err(|source| CliError::ProxyStart {
                what: format!("cannot create the log {}", path.display()),
                source,
            })?;
            Box::new(BufWriter::new(file))
        };
        Ok(ExchangeLog {
            out: Mutex::new(out),
        })
    }

    /// Writes one exchange line.
    pub fn exchange(&self, exchange: Exchange<'_>) {
        let mut object = Map::new();
        object.insert("api".into(), exchange.api.into());
        object.insert("version".into(), exchange.version.into());
        object.insert("correlationId".into(), exchange.correlation_id.into());
        object.insert(
            "clientId".into(),
            exchange.client_id.map_or(Value::Null, Value::from),
        );
        object.insert("request".into(), exchange.request);
        object.insert("response".into(), exchange.response);
        self.line(&Value::Object(object));
    }

    /// Writes a line about one bare SASL token exchange (after a
    /// SaslHandshake v0): the mechanism, the round, the client id and the
    /// sizes, never the tokens.
    pub fn sasl_token(&self, token: &kafka_wire_proxy::SaslToken<'_>) {
        let mut object = Map::new();
        object.insert("saslToken".into(), token.mechanism.into());
        object.insert("round".into(), token.round.into());
        object.insert(
            "clientId".into(),
            token.client_id.map_or(Value::Null, Value::from),
        );
        object.insert("clientBytes".into(), token.client_token_len.into());
        object.insert("brokerBytes".into(), token.broker_token.len().into());
        self.line(&Value::Object(object));
    }

    /// Writes a line about a connection that failed or could not be made.
    pub fn error(&self, client: &str, message: &str) {
        let mut object = Map::new();
        object.insert("error".into(), message.into());
        object.insert("client".into(), client.into());
        self.line(&Value::Object(object));
    }

    /// Flushes what is buffered.
    pub fn flush(&self) {
        if let Ok(mut out) = self.out.lock() {
            let _ = out.flush();
        }
    }

    fn line(&self, value: &Value) {
        let Ok(mut text) = serde_json::to_string(value) else {
            return;
        };
        text.push('\n');
        if let Ok(mut out) = self.out.lock() {
            // A full disk or closed pipe must not stop the traffic.
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }
}
