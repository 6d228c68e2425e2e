//! A broker's address: as clients are told it, and as `host:port`.

/// A broker's address as clients are told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerAddress {
    /// Its node id.
    pub node_id: i32,
    /// Its host.
    pub host: String,
    /// Its port.
    pub port: u16,
}

/// `host:port`, or `[host]:port` for an IPv6 host.
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}
