//! One broker's accept loop, with the connection limit: a connection past
//! `max_connections` is closed as soon as it is accepted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

use crate::connection;
use crate::state::Shared;

/// Numbers connections across the cluster, for logs and the capture.
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

/// Accepts connections for broker `node_id` until `stop` turns true, then
/// ends every connection it started.
pub async fn serve(
    shared: Arc<Shared>,
    node_id: i32,
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(shared.config.max_connections));
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let id = CONNECTIONS.fetch_add(1, Ordering::Relaxed) + 1;
                    let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
                        eprintln!(
                            "broker {node_id}: connection {id} ({peer}): closing: {} connections already",
                            shared.config.max_connections
                        );
                        drop(stream);
                        continue;
                    };
                    let shared = Arc::clone(&shared);
                    connections.spawn(async move {
                        connection::serve(shared, node_id, stream, peer, id).await;
                        drop(permit);
                    });
                }
                Err(e) => eprintln!("broker {node_id}: accept failed: {e}"),
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    break;
                }
            }
        }
    }
    // The port refuses new connections before the open ones close: a
    // client that reconnects at once, seeing its connection closed, must
    // not land in the backlog of a listener about to go, and be cut again.
    drop(listener);
    connections.shutdown().await;
}
