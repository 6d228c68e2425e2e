//! `tenant_proxy`: a proxy that gives a tenant its own topic namespace,
//! built on [`kafka_wire_proxy`].
//!
//! Topic names in requests get the tenant's prefix on the way to the
//! broker, and lose it on the way back; a Metadata answer lists only the
//! tenant's topics, and names the proxy as the broker, so that clients stay
//! on it. Requests are changed by decode, change, re-encode: only the topic
//! arrays are decoded into values, and their partition arrays (the records
//! included) are copied as bytes. Everything else passes through untouched.
//!
//! It handles what a producer and a plain consumer use (Metadata, Produce,
//! ListOffsets, Fetch by topic name); a full tenant proxy would also cover
//! groups, offsets, topic ids and admin apis.
//!
//! ```sh
//! cargo run -p kafka-wire-examples --example tenant_proxy -- \
//!     --listen 127.0.0.1:19092 --upstream 127.0.0.1:9092 --prefix tenant-a.
//! kcat -b 127.0.0.1:19092 -t orders -P <<< 'hello'   # the broker has tenant-a.orders
//! ```

use std::borrow::Cow;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use kafka_wire::runtime::DecodeError;
use kafka_wire::{RequestBody, ResponseBody};
use kafka_wire_proxy::serve::proxy_connection;
use kafka_wire_proxy::{
    Config, Connection, Filter, ProxiedRequest, ProxiedResponse, RequestAction, ResponseAction,
};
use tokio::net::{TcpListener, TcpStream};

const USAGE: &str = "usage: tenant_proxy --listen ADDR --upstream HOST:PORT --prefix PREFIX";

/// Prefixes topic names for one tenant.
#[derive(Clone)]
struct TenantFilter {
    prefix: Arc<str>,
    advertised: SocketAddr,
}

impl TenantFilter {
    fn add(&self, name: &mut Cow<'_, str>) {
        *name = Cow::Owned(format!("{}{name}", self.prefix));
    }

    /// Strips the prefix; `false` when the name is not the tenant's.
    fn strip(&self, name: &mut Cow<'_, str>) -> bool {
        match name.strip_prefix(&*self.prefix) {
            Some(own) => {
                *name = Cow::Owned(own.to_string());
                true
            }
            None => false,
        }
    }
}

impl Filter for TenantFilter {
    fn on_request<'a>(
        &mut self,
        request: &'a ProxiedRequest,
    ) -> Result<RequestAction<'a>, DecodeError> {
        let body = match request.decode_body()? {
            RequestBody::Metadata(mut metadata) => {
                for topic in metadata.topics.iter_mut().flat_map(|t| t.to_mut()) {
                    if let Some(name) = &mut topic.name {
                        self.add(name);
                    }
                }
                metadata.into()
            }
            RequestBody::Produce(mut produce) => {
                for topic in produce.topic_data.to_mut() {
                    self.add(&mut topic.name);
                }
                produce.into()
            }
            RequestBody::ListOffsets(mut list) => {
                for topic in list.topics.to_mut() {
                    self.add(&mut topic.name);
                }
                list.into()
            }
            RequestBody::Fetch(mut fetch) => {
                for topic in fetch.topics.to_mut() {
                    self.add(&mut topic.topic);
                }
                for topic in fetch.forgotten_topics_data.to_mut() {
                    self.add(&mut topic.topic);
                }
                fetch.into()
            }
            _ => return Ok(RequestAction::Forward),
        };
        Ok(RequestAction::Replace(body))
    }

    fn on_response<'a>(
        &mut self,
        _request: &ProxiedRequest,
        response: &'a ProxiedResponse,
    ) -> Result<ResponseAction<'a>, DecodeError> {
        let body: ResponseBody = match response.decode_body()? {
            ResponseBody::Metadata(mut metadata) => {
                for broker in metadata.brokers.to_mut() {
                    broker.host = self.advertised.ip().to_string().into();
                    broker.port = self.advertised.port().into();
                }
                // Other tenants' topics are not listed.
                metadata
                    .topics
                    .to_mut()
                    .retain_mut(|topic| match &mut topic.name {
                        Some(name) => self.strip(name),
                        None => false,
                    });
                metadata.into()
            }
            ResponseBody::Produce(mut produce) => {
                for topic in produce.responses.to_mut() {
                    self.strip(&mut topic.name);
                }
                produce.into()
            }
            ResponseBody::ListOffsets(mut list) => {
                for topic in list.topics.to_mut() {
                    self.strip(&mut topic.name);
                }
                list.into()
            }
            ResponseBody::Fetch(mut fetch) => {
                for topic in fetch.responses.to_mut() {
                    self.strip(&mut topic.topic);
                }
                fetch.into()
            }
            _ => return Ok(ResponseAction::Forward),
        };
        Ok(ResponseAction::Replace(Box::new(body)))
    }
}

fn parse_args() -> Result<(String, String, String), String> {
    let (mut listen, mut upstream, mut prefix) = (None, None, None);
    let mut iter = std::env::args().skip(1);
    while let Some(flag) = iter.next() {
        let value = iter
            .next()
            .ok_or(format!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--listen" => listen = Some(value),
            "--upstream" => upstream = Some(value),
            "--prefix" => prefix = Some(value),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    match (listen, upstream, prefix) {
        (Some(l), Some(u), Some(p)) => Ok((l, u, p)),
        _ => Err(USAGE.into()),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (listen, upstream, prefix) = parse_args().unwrap_or_else(|usage| {
        eprintln!("{usage}");
        std::process::exit(2)
    });
    let listener = TcpListener::bind(&listen).await?;
    let address = listener.local_addr()?;
    let filter = TenantFilter {
        prefix: prefix.into(),
        advertised: address,
    };
    println!("listening on {address}");
    std::io::stdout().flush()?;
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (client, peer) = accepted?;
                let filter = filter.clone();
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    let result = match TcpStream::connect(&upstream).await {
                        Ok(broker) => proxy_connection(
                            client, broker, Connection::new(Config::default()), filter,
                        ).await.map_err(|e| e.to_string()),
                        Err(e) => Err(format!("upstream {upstream}: {e}")),
                    };
                    if let Err(e) = result {
                        eprintln!("tenant_proxy: {peer}: {e}");
                    }
                });
            }
            _ = terminate.recv() => return Ok(()),
        }
    }
}
