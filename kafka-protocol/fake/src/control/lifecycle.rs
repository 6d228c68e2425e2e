//! Brokers' accept loops over the cluster's life: a broker started (at
//! start, or later by a control), and every broker stopped with the
//! cluster, waited for or aborted.

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;

use super::lock;
use super::run::BrokerRun;
use crate::listener;
use crate::state::Shared;

/// Starts serving `listener` as broker `node_id`, until the broker or the
/// cluster is stopped.
pub(crate) fn spawn_broker(shared: &Arc<Shared>, node_id: i32, listener: TcpListener) {
    let (stop, stopped) = watch::channel(false);
    let stop = Arc::new(stop);
    let cluster_stop = lock(&shared.control.cluster_stop).clone();
    let forward = Arc::clone(&stop);
    let serve = listener::serve(Arc::clone(shared), node_id, listener, stopped);
    let task = tokio::spawn(async move {
        tokio::pin!(serve);
        let Some(mut cluster_stop) = cluster_stop else {
            serve.await;
            return;
        };
        loop {
            tokio::select! {
                () = &mut serve => return,
                changed = cluster_stop.changed() => {
                    if changed.is_err() || *cluster_stop.borrow() {
                        let _ = forward.send(true);
                        serve.await;
                        return;
                    }
                }
            }
        }
    });
    if let Some(old) = lock(&shared.control.runs).insert(node_id, BrokerRun::new(stop, task)) {
        old.abort();
    }
}

/// Notes the cluster's stop switch, which brokers started later obey too.
pub(crate) fn started(shared: &Shared, stop: watch::Receiver<bool>) {
    *lock(&shared.control.cluster_stop) = Some(stop);
}

/// Stops the background faults, then every broker, waiting for them.
pub(crate) async fn shutdown(shared: &Shared) {
    for task in std::mem::take(&mut *lock(&shared.control.background)) {
        task.abort();
    }
    let runs = std::mem::take(&mut *lock(&shared.control.runs));
    for run in runs.into_values() {
        run.stop().await;
    }
}

/// Aborts the background faults and every broker (the handle was dropped).
pub(crate) fn abort(shared: &Shared) {
    for task in lock(&shared.control.background).iter() {
        task.abort();
    }
    for run in lock(&shared.control.runs).values() {
        run.abort();
    }
}
