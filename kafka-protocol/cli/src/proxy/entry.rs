//! What the proxy hands its log, and how the log's writer turns it into a
//! line. The relaying path only clones frames (reference-counted) into an
//! [`Entry`]; decoding, redaction and JSON happen on the writer's thread.

use kafka_wire::ResponseBody;
use kafka_wire_proxy::redact::redact_exchange;
use kafka_wire_proxy::{ProxiedRequest, ProxiedResponse, SaslToken};
use serde_json::{Map, Value};

/// One thing to log.
pub enum Entry {
    /// A request and what answered it.
    Exchange {
        /// The request, with its body.
        request: ProxiedRequest,
        /// The answer the client got.
        response: Answer,
    },
    /// One bare SASL token exchange (after a SaslHandshake v0).
    SaslToken {
        /// The mechanism.
        mechanism: String,
        /// Which exchange of the authentication, from 1.
        round: u32,
        /// The client id of the handshake.
        client_id: Option<String>,
        /// The size of the client's token.
        client_bytes: usize,
        /// The size of the broker's token.
        broker_bytes: usize,
    },
    /// A connection that failed or could not be made.
    Error {
        /// The client's address.
        client: String,
        /// What happened.
        message: String,
    },
}

/// What answered a request, as the client got it.
pub enum Answer {
    /// Nothing: a Produce with `acks = 0`.
    None,
    /// The broker's response, passed on unchanged.
    Frame(ProxiedResponse),
    /// The broker's response with its addresses rewritten, at `version`.
    Rewritten(Box<ResponseBody<'static>>, i16),
}

impl Entry {
    /// A SASL token exchange, copied out of the connection's borrow.
    pub fn sasl_token(token: &SaslToken<'_>) -> Self {
        Entry::SaslToken {
            mechanism: token.mechanism.to_owned(),
            round: token.round,
            client_id: token.client_id.map(str::to_owned),
            client_bytes: token.client_token_len,
            broker_bytes: token.broker_token.len(),
        }
    }

    /// The bytes the entry keeps alive while it waits in the queue.
    pub fn held_bytes(&self) -> usize {
        match self {
            Entry::Exchange { request, response } => {
                request.frame().len()
                    + match response {
                        Answer::Frame(frame) => frame.frame().len(),
                        Answer::None | Answer::Rewritten(..) => 0,
                    }
            }
            Entry::SaslToken { .. } | Entry::Error { .. } => 0,
        }
    }

    /// The line for this entry: a JSON object whose `request` and
    /// `response` are the bodies' JSON forms, with secrets redacted. A body
    /// larger on the wire than `max_line`, or whose JSON would take the
    /// line past `max_line`, becomes the string `<truncated: N bytes>`,
    /// where N is the body's size on the wire, so that the line stays
    /// valid JSON and short.
    pub fn to_line(&self, max_line: usize) -> String {
        let value = match self {
            Entry::Exchange { request, response } => {
                return exchange_line(request, response, max_line);
            }
            Entry::SaslToken {
                mechanism,
                round,
                client_id,
                client_bytes,
                broker_bytes,
            } => {
                let mut object = Map::new();
                object.insert("saslToken".into(), mechanism.as_str().into());
                object.insert("round".into(), (*round).into());
                object.insert(
                    "clientId".into(),
                    client_id.as_deref().map_or(Value::Null, Value::from),
                );
                object.insert("clientBytes".into(), (*client_bytes).into());
                object.insert("brokerBytes".into(), (*broker_bytes).into());
                object
            }
            Entry::Error { client, message } => {
                let mut object = Map::new();
                object.insert("error".into(), message.as_str().into());
                object.insert("client".into(), client.as_str().into());
                object
            }
        };
        Value::Object(value).to_string()
    }
}

/// A body's JSON form, or the truncation marker when its wire size alone
/// passes the cap (its JSON would too, or nearly: decoding it is not worth
/// the memory).
fn body_json(wire_len: usize, max_line: usize, decode: impl FnOnce() -> Value) -> Value {
    if wire_len > max_line {
        truncated(wire_len)
    } else {
        decode()
    }
}

fn truncated(wire_len: usize) -> Value {
    Value::from(format!("<truncated: {wire_len} bytes>"))
}

fn exchange_line(request: &ProxiedRequest, response: &Answer, max_line: usize) -> String {
    let request_len = request.body_bytes().len();
    // Read as Kafka's broker reads it: bytes after the body are ignored,
    // and counted in `trailingBytes`.
    let mut trailing = 0;
    let mut request_json = body_json(request_len, max_line, || {
        request
            .parts()
            .and_then(|parts| parts.decode_body_lenient_without_heap())
            .map_or(Value::Null, |body| {
                trailing = body.trailing_bytes;
                body.value.to_json(request.api_version())
            })
    });
    let (response_len, mut response_json) = match response {
        Answer::None => (0, Value::Null),
        Answer::Frame(frame) => {
            let len = frame.body_bytes().len();
            let json = body_json(len, max_line, || {
                frame
                    .parts()
                    .and_then(|parts| parts.decode_body_without_heap())
                    .map_or(Value::Null, |body| body.to_json(frame.version()))
            });
            (len, json)
        }
        Answer::Rewritten(body, version) => (body.encoded_len(*version), body.to_json(*version)),
    };
    if let Some(api) = request.api() {
        redact_exchange(api, &mut request_json, &mut response_json);
    }
    let header = request.header().ok();
    let client_id = header.as_ref().and_then(|h| h.client_id.as_deref());
    let mut object = Map::new();
    object.insert(
        "api".into(),
        Value::from(request.api().map_or_else(
            || request.api_key().to_string(),
            |api| api.name().to_string(),
        )),
    );
    object.insert("version".into(), request.api_version().into());
    object.insert("correlationId".into(), request.correlation_id().into());
    object.insert(
        "clientId".into(),
        client_id.map_or(Value::Null, Value::from),
    );
    object.insert("request".into(), request_json);
    if trailing > 0 {
        object.insert("trailingBytes".into(), trailing.into());
    }
    let answered = !response_json.is_null();
    object.insert("response".into(), response_json);
    let mut object = Value::Object(object);
    let mut text = object.to_string();
    // Over the cap: the larger body goes first, then the other.
    let mut order = [("request", request_len), ("response", response_len)];
    order.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
    for (key, len) in order {
        if text.len() <= max_line {
            break;
        }
        if key == "response" && !answered {
            continue;
        }
        object[key] = truncated(len);
        text = object.to_string();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use kafka_wire::frame::RequestFrame;
    use kafka_wire::messages::{metadata_request, MetadataRequest, RequestHeader};
    use kafka_wire::ApiKey;

    fn metadata_request(topics: usize) -> ProxiedRequest {
        let frame = RequestFrame {
            header: RequestHeader {
                request_api_key: ApiKey::Metadata.key(),
                request_api_version: 12,
                correlation_id: 7,
                client_id: Some("test".into()),
                ..Default::default()
            },
            body: MetadataRequest {
                topics: Some(
                    (0..topics)
                        .map(|n| metadata_request::MetadataRequestTopic {
                            name: Some(format!("topic-{n}").into()),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }
            .into(),
        };
        let mut bytes = Vec::new();
        frame.encode(&mut bytes).unwrap();
        ProxiedRequest::parse(Bytes::from(bytes)).unwrap()
    }

    fn parse(line: &str) -> Value {
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    #[test]
    fn a_line_within_the_cap_holds_the_bodies() {
        let request = metadata_request(3);
        let entry = Entry::Exchange {
            request,
            response: Answer::None,
        };
        let line = parse(&entry.to_line(1 << 20));
        assert_eq!(line["api"], "Metadata");
        assert_eq!(line["correlationId"], 7);
        assert_eq!(line["clientId"], "test");
        assert_eq!(line["request"]["topics"][2]["name"], "topic-2");
        assert_eq!(line["response"], Value::Null);
    }

    /// librdkafka 2.16's Metadata v13 has three bytes after its body:
    /// logged as Kafka's broker reads it, the bytes counted.
    #[test]
    fn bytes_after_a_request_body_are_ignored_and_counted() {
        let frame = kafka_wire_test_support::wire::librdkafka_metadata_with_trailing_bytes();
        let request = ProxiedRequest::parse(Bytes::from(frame)).unwrap();
        assert!(request.decode_body().is_err(), "the strict read refuses it");
        let entry = Entry::Exchange {
            request,
            response: Answer::None,
        };
        let line = parse(&entry.to_line(1 << 20));
        assert_eq!(line["api"], "Metadata");
        assert_eq!(line["clientId"], "chaos-admin");
        assert_eq!(line["request"]["topics"], Value::Null);
        assert_eq!(line["request"]["allowAutoTopicCreation"], false);
        assert_eq!(line["trailingBytes"], 3);
        // Without trailing bytes, no such key.
        let line = parse(
            &Entry::Exchange {
                request: metadata_request(1),
                response: Answer::None,
            }
            .to_line(1 << 20),
        );
        assert!(line.get("trailingBytes").is_none(), "{line}");
    }

    #[test]
    fn a_line_over_the_cap_truncates_its_body_and_stays_json() {
        let request = metadata_request(20);
        let body_len = request.body_bytes().len();
        let entry = Entry::Exchange {
            request,
            response: Answer::None,
        };
        // The body's JSON is longer than 1,000 bytes, its wire size shorter.
        assert!(body_len < 1000);
        let text = entry.to_line(1000);
        assert!(text.len() <= 1000, "{text}");
        let line = parse(&text);
        assert_eq!(line["request"], format!("<truncated: {body_len} bytes>"));
        assert_eq!(line["response"], Value::Null);
        // A body larger on the wire than the cap is not even decoded.
        let text = entry.to_line(100);
        assert_eq!(
            parse(&text)["request"],
            format!("<truncated: {body_len} bytes>")
        );
    }
}
