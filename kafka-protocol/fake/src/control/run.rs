//! A running broker: its accept loop and its stop switch, as the controls
//! keep it to stop it later.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A running broker's accept loop and its stop switch.
#[derive(Debug)]
pub(crate) struct BrokerRun {
    stop: Arc<watch::Sender<bool>>,
    task: JoinHandle<()>,
}

impl BrokerRun {
    /// The accept loop `task`, which ends once `stop` sends true.
    pub(crate) fn new(stop: Arc<watch::Sender<bool>>, task: JoinHandle<()>) -> Self {
        BrokerRun { stop, task }
    }

    /// Stops the accept loop without waiting for it.
    pub(crate) fn abort(&self) {
        let _ = self.stop.send(true);
        self.task.abort();
    }

    /// Stops the accept loop and waits for it to end its connections.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}
