//! Changes to a running cluster: leaders (each change bumps the
//! partition's leader epoch, as Kafka's controller does), coordinators,
//! brokers stopped (the port refuses connections), started again with
//! their data, added and removed.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::net::TcpListener;

use super::lifecycle::spawn_broker;
use super::{lock, ControlError, FaultKind, Member};
use crate::address::{host_port, BrokerAddress};
use crate::state::Shared;

/// The most keys whose coordinator was moved one by one.
pub const MAX_MOVED_COORDINATORS: usize = 100_000;

/// The most brokers a cluster may grow to.
pub const MAX_BROKERS: usize = 64;

fn set_up(shared: &Shared, node_id: i32, up: bool) -> Result<BrokerAddress, ControlError> {
    let mut members = shared
        .control
        .members
        .write()
        .unwrap_or_else(|p| p.into_inner());
    let member = members
        .iter_mut()
        .find(|m| m.address.node_id == node_id)
        .ok_or(ControlError::UnknownBroker(node_id))?;
    match (member.up, up) {
        (false, false) => return Err(ControlError::BrokerDown(node_id)),
        (true, true) => return Err(ControlError::BrokerUp(node_id)),
        _ => member.up = up,
    }
    Ok(member.address.clone())
}

/// Stops a broker: it leaves Metadata, its listener and connections close
/// (its port refuses connections), and the partitions it led get a
/// running leader with the next epoch.
pub(crate) async fn stop_broker(shared: &Arc<Shared>, node_id: i32) -> Result<(), ControlError> {
    stop_quietly(shared, node_id).await?;
    shared.control.count(FaultKind::StopBroker);
    Ok(())
}

async fn stop_quietly(shared: &Arc<Shared>, node_id: i32) -> Result<(), ControlError> {
    set_up(shared, node_id, false)?;
    let run = lock(&shared.control.runs).remove(&node_id);
    if let Some(run) = run {
        run.stop().await;
    }
    lead_elsewhere(shared, node_id);
    Ok(())
}

/// Moves every partition `node_id` leads to another running broker (a
/// replica when one runs), bumping its epoch.
fn lead_elsewhere(shared: &Shared, node_id: i32) {
    let live: Vec<i32> = shared.control.live().iter().map(|b| b.node_id).collect();
    if live.is_empty() {
        return;
    }
    let mut state = shared.state();
    for name in state.topics.names() {
        let Some(topic) = state.topics.get_mut(&name) else {
            continue;
        };
        for partition in &mut topic.partitions {
            if partition.leader != node_id {
                continue;
            }
            let to = partition
                .replicas
                .iter()
                .copied()
                .find(|r| live.contains(r))
                .or_else(|| live.first().copied());
            if let Some(to) = to {
                partition.elect(to);
            }
        }
    }
    drop(state);
    shared.appended.notify_waiters();
}

/// Starts a stopped broker again on its port, with the cluster's data.
pub(crate) async fn start_broker(
    shared: &Arc<Shared>,
    node_id: i32,
) -> Result<SocketAddr, ControlError> {
    let address = shared
        .control
        .members()
        .into_iter()
        .find(|m| m.address.node_id == node_id)
        .ok_or(ControlError::UnknownBroker(node_id))?;
    if address.up {
        return Err(ControlError::BrokerUp(node_id));
    }
    let listen = host_port(&address.listen_host, address.listen_port);
    let listener = bind(&listen).await?;
    let local = listener.local_addr().map_err(|source| ControlError::Bind {
        address: listen,
        source,
    })?;
    set_up(shared, node_id, true)?;
    spawn_broker(shared, node_id, listener);
    Ok(local)
}

async fn bind(address: &str) -> Result<TcpListener, ControlError> {
    TcpListener::bind(address)
        .await
        .map_err(|source| ControlError::Bind {
            address: address.to_owned(),
            source,
        })
}

/// Stops a broker and starts it again at once.
pub(crate) async fn restart_broker(shared: &Arc<Shared>, node_id: i32) -> Result<(), ControlError> {
    stop_quietly(shared, node_id).await?;
    start_broker(shared, node_id).await?;
    shared.control.count(FaultKind::RestartBroker);
    Ok(())
}

/// Adds a broker on a free port (node id one more than the greatest).
pub(crate) async fn add_broker(shared: &Arc<Shared>) -> Result<i32, ControlError> {
    let members = shared.control.members();
    if members.len() >= MAX_BROKERS {
        return Err(ControlError::TooManyBrokers(MAX_BROKERS));
    }
    let node_id = members
        .iter()
        .map(|m| m.address.node_id)
        .max()
        .map_or(0, |n| n + 1);
    let host = shared.config.host.clone();
    let listener = bind(&host_port(&host, 0)).await?;
    let port = listener
        .local_addr()
        .map_err(|source| ControlError::Bind {
            address: host_port(&host, 0),
            source,
        })?
        .port();
    shared
        .control
        .members
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .push(Member {
            address: BrokerAddress {
                node_id,
                host: host.clone(),
                port,
                rack: None,
            },
            listen_host: host,
            listen_port: port,
            up: true,
        });
    spawn_broker(shared, node_id, listener);
    Ok(node_id)
}

/// Removes a broker: stopped if running, then forgotten, and dropped from
/// every replica list (its partitions led elsewhere first).
pub(crate) async fn remove_broker(shared: &Arc<Shared>, node_id: i32) -> Result<(), ControlError> {
    match stop_quietly(shared, node_id).await {
        Ok(()) | Err(ControlError::BrokerDown(_)) => {}
        Err(e) => return Err(e),
    }
    shared
        .control
        .members
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|m| m.address.node_id != node_id);
    let live: Vec<i32> = shared.control.live().iter().map(|b| b.node_id).collect();
    let mut state = shared.state();
    for name in state.topics.names() {
        let Some(topic) = state.topics.get_mut(&name) else {
            continue;
        };
        for partition in &mut topic.partitions {
            partition.replicas.retain(|r| *r != node_id);
            if partition.replicas.is_empty() {
                partition.replicas.push(partition.leader);
            }
            if let Some(spare) = live.iter().find(|n| !partition.replicas.contains(n)) {
                if partition.replicas.len() < usize::try_from(topic.replication_factor).unwrap_or(1)
                {
                    partition.replicas.push(*spare);
                }
            }
        }
    }
    lock(&shared.control.coordinators).retain(|_, n| *n != node_id);
    Ok(())
}

/// Moves one partition's leader to `to` (or the next running broker
/// after the current leader), bumping its epoch: (new leader, epoch).
pub(crate) fn move_leader(
    shared: &Shared,
    topic: &str,
    partition: i32,
    to: Option<i32>,
) -> Result<(i32, i32), ControlError> {
    let live: Vec<i32> = shared.control.live().iter().map(|b| b.node_id).collect();
    if let Some(to) = to {
        if !live.contains(&to) {
            return Err(
                if shared
                    .control
                    .members()
                    .iter()
                    .any(|m| m.address.node_id == to)
                {
                    ControlError::BrokerDown(to)
                } else {
                    ControlError::UnknownBroker(to)
                },
            );
        }
    }
    let mut state = shared.state();
    let p = state
        .topics
        .get_mut(topic)
        .and_then(|t| t.partition_mut(partition))
        .ok_or_else(|| ControlError::UnknownPartition(topic.to_owned(), partition))?;
    let to = match to {
        Some(to) => to,
        None => next_after(&live, p.leader).ok_or(ControlError::NoLiveBroker)?,
    };
    p.elect(to);
    let result = (p.leader, p.leader_epoch);
    drop(state);
    shared.control.count(FaultKind::MoveLeaders);
    shared.appended.notify_waiters();
    Ok(result)
}

/// The running broker after `node` (wrapping), other than `node`.
fn next_after(live: &[i32], node: i32) -> Option<i32> {
    live.iter()
        .copied()
        .find(|n| *n > node)
        .or_else(|| live.first().copied())
        .filter(|n| *n != node)
}

/// Gives every partition a leader drawn from the running brokers with a
/// generator seeded by `seed` (a different one than now when two or more
/// run), bumping every epoch. Returns the partitions moved.
pub(crate) fn shuffle_leaders(shared: &Shared, seed: u64) -> usize {
    let live: Vec<i32> = shared.control.live().iter().map(|b| b.node_id).collect();
    if live.is_empty() {
        return 0;
    }
    let mut draw = seed;
    let mut moved = 0;
    let mut state = shared.state();
    for name in state.topics.names() {
        let Some(topic) = state.topics.get_mut(&name) else {
            continue;
        };
        for p in &mut topic.partitions {
            draw = draw.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let others: Vec<i32> = live.iter().copied().filter(|n| *n != p.leader).collect();
            let pool = if others.is_empty() { &live } else { &others };
            let pick = pool[(super::mix(draw) % pool.len() as u64) as usize];
            p.elect(pick);
            moved += 1;
        }
    }
    drop(state);
    shared.control.count(FaultKind::MoveLeaders);
    shared.appended.notify_waiters();
    moved
}

/// Moves the coordinator of `key` (a group or transactional id) to `to`
/// (or the next running broker): the old one answers NOT_COORDINATOR.
pub(crate) fn move_coordinator(
    shared: &Shared,
    key: &str,
    to: Option<i32>,
) -> Result<i32, ControlError> {
    let live: Vec<i32> = shared.control.live().iter().map(|b| b.node_id).collect();
    let to = match to {
        Some(to) if live.contains(&to) => to,
        Some(to) => return Err(ControlError::UnknownBroker(to)),
        None => next_after(&live, shared.coordinator(key)).ok_or(ControlError::NoLiveBroker)?,
    };
    let mut moved = lock(&shared.control.coordinators);
    if moved.len() >= MAX_MOVED_COORDINATORS && !moved.contains_key(key) {
        return Err(ControlError::TooMany(MAX_MOVED_COORDINATORS));
    }
    moved.insert(key.to_owned(), to);
    drop(moved);
    shared.control.count(FaultKind::MoveCoordinator);
    Ok(to)
}

/// Moves every coordinator one broker along (keys moved one by one go
/// back to the rule).
pub(crate) fn move_coordinators(shared: &Shared) {
    lock(&shared.control.coordinators).clear();
    shared
        .control
        .coordinator_shift
        .fetch_add(1, Ordering::Relaxed);
    shared.control.count(FaultKind::MoveCoordinator);
}
