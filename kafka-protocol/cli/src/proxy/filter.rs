//! The tool's filter: rewrites broker addresses to the advertised one and
//! hands each exchange to the log.

use std::borrow::Cow;
use std::sync::Arc;

use kafka_wire::runtime::DecodeError;
use kafka_wire::IntoOwned;
use kafka_wire::ResponseBody;
use kafka_wire_proxy::{Filter, ProxiedRequest, ProxiedResponse, ResponseAction, SaslToken};

use super::entry::{Answer, Entry};
use super::log::ExchangeLog;
use crate::error::CliError;

/// The address clients are told to connect to.
#[derive(Debug, Clone)]
pub struct Advertised {
    host: Arc<str>,
    port: i32,
}

impl Advertised {
    /// Parses `HOST:PORT` (`[v6]:PORT` too).
    pub fn parse(text: &str) -> Result<Self, CliError> {
        let bad = || CliError::BadAddress(text.to_string());
        let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
        let port: u16 = port.parse().map_err(|_| bad())?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(bad());
        }
        Ok(Advertised {
            host: host.into(),
            port: port.into(),
        })
    }

    /// Rewrites a host and port, unless the host is empty: an error
    /// answer, or FindCoordinator's top-level fields, absent from v4.
    fn apply(&self, host: &mut Cow<'_, str>, port: &mut i32) {
        if host.is_empty() {
            return;
        }
        *host = Cow::Owned(self.host.to_string());
        *port = self.port;
    }

    /// Rewrites every broker address in Metadata, FindCoordinator and
    /// DescribeCluster bodies; `None` for other apis.
    pub fn rewrite<'a>(&self, body: ResponseBody<'a>) -> Option<ResponseBody<'a>> {
        Some(match body {
            ResponseBody::Metadata(mut metadata) => {
                for broker in metadata.brokers.to_mut() {
                    self.apply(&mut broker.host, &mut broker.port);
                }
                metadata.into()
            }
            ResponseBody::FindCoordinator(mut find) => {
                self.apply(&mut find.host, &mut find.port);
                for coordinator in find.coordinators.to_mut() {
                    self.apply(&mut coordinator.host, &mut coordinator.port);
                }
                find.into()
            }
            ResponseBody::DescribeCluster(mut cluster) => {
                for broker in cluster.brokers.to_mut() {
                    self.apply(&mut broker.host, &mut broker.port);
                }
                cluster.into()
            }
            _ => return None,
        })
    }
}

/// Whether a response of this api carries broker addresses.
fn carries_addresses(response: &ProxiedResponse) -> bool {
    use kafka_wire::ApiKey;
    matches!(
        response.api(),
        Some(ApiKey::Metadata | ApiKey::FindCoordinator | ApiKey::DescribeCluster)
    )
}

/// Rewrites addresses and, with a log, logs every exchange.
pub struct ProxyFilter {
    advertised: Advertised,
    log: Option<Arc<ExchangeLog>>,
}

impl ProxyFilter {
    /// A filter for one connection.
    pub fn new(advertised: Advertised, log: Option<Arc<ExchangeLog>>) -> Self {
        ProxyFilter { advertised, log }
    }
}

impl Filter for ProxyFilter {
    fn on_response<'a>(
        &mut self,
        request: &ProxiedRequest,
        response: &'a ProxiedResponse,
    ) -> Result<ResponseAction<'a>, DecodeError> {
        let rewritten = if carries_addresses(response) {
            self.advertised.rewrite(response.decode_body()?)
        } else {
            None
        };
        if let Some(log) = &self.log {
            // Shared frames and an owned copy of a rewritten body (a small
            // Metadata, FindCoordinator or DescribeCluster answer): the
            // log's writer decodes the rest on its own thread.
            let answer = match &rewritten {
                Some(body) => {
                    Answer::Rewritten(Box::new(body.clone().into_owned()), response.version())
                }
                None => Answer::Frame(response.clone()),
            };
            log.submit(Entry::Exchange {
                request: request.clone(),
                response: answer,
            });
        }
        Ok(match rewritten {
            Some(body) => ResponseAction::Replace(Box::new(body)),
            None => ResponseAction::Forward,
        })
    }

    fn on_sasl_token(&mut self, token: &SaslToken<'_>) {
        if let Some(log) = &self.log {
            log.submit(Entry::sasl_token(token));
        }
    }

    fn on_unanswered(&mut self, request: &ProxiedRequest) {
        if let Some(log) = &self.log {
            log.submit(Entry::Exchange {
                request: request.clone(),
                response: Answer::None,
            });
        }
    }
}
