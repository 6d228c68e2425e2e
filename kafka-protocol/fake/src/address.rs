//! A broker's addresses: where it listens, and where clients are told it
//! is (Kafka's `advertised.listeners`), as `host:port`.

/// A broker as clients are told of it: in Metadata, FindCoordinator,
/// DescribeCluster and KIP-951's node endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerAddress {
    /// Its node id.
    pub node_id: i32,
    /// Its advertised host.
    pub host: String,
    /// Its advertised port.
    pub port: u16,
    /// Its rack (Kafka's `broker.rack`), if it has one.
    pub rack: Option<String>,
}

/// `host:port`, or `[host]:port` for an IPv6 host.
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Splits `host:port` (or `[host]:port` for an IPv6 host) into its host
/// and a port other than 0.
pub fn parse_host_port(text: &str) -> Option<(String, u16)> {
    let (host, port) = text.rsplit_once(':')?;
    let host = match host.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']')?,
        None if host.contains(':') => return None,
        None => host,
    };
    let port: u16 = port.parse().ok()?;
    (!host.is_empty() && port != 0).then(|| (host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_ports_read_back() {
        assert_eq!(
            parse_host_port("127.0.0.1:29091"),
            Some(("127.0.0.1".into(), 29091))
        );
        assert_eq!(parse_host_port("[::1]:9092"), Some(("::1".into(), 9092)));
        assert_eq!(
            parse_host_port(&host_port("::1", 9092)),
            Some(("::1".into(), 9092))
        );
        for bad in [
            "",
            "host",
            "host:",
            ":9092",
            "host:0",
            "host:70000",
            "::1:9092",
            "[::1]9092",
        ] {
            assert_eq!(parse_host_port(bad), None, "{bad}");
        }
    }
}
