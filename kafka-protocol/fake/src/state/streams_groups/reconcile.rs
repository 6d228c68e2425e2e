//! A member's reconciliation towards its target assignment (Kafka 4.4.0's
//! `CurrentAssignmentBuilder` for streams groups): it keeps the tasks that
//! stay, is asked to give up the ones that go (keeping its epoch until it
//! reports them gone), and gets the ones that are free.
//!
//! An active task is free once no member holds it and no other member of
//! the member's process runs a standby or warm-up copy of it; a standby
//! (warm-up) task once no other member of the process runs it as an
//! active task and no member of the process holds it as a standby
//! (warm-up), nor another one as a warm-up (standby). A change of role of
//! the member's own task takes effect at once: an active task it gives up
//! and must run as a standby becomes one (the active task is still
//! revoked), a standby becomes a warm-up and back without a revocation,
//! and a standby or warm-up it must run as an active task stays until the
//! active task is granted, then is superseded by it.

use std::collections::{BTreeMap, BTreeSet};

use super::member::{MemberState, StreamsMember};
use super::tasks::{TaskId, TaskSets, Tasks};

/// Who holds each task now, by process (from every member's assigned and
/// pending-revocation tasks).
#[derive(Debug, Default)]
pub struct Owners {
    /// An active task's process.
    pub active: BTreeMap<TaskId, String>,
    /// A standby task's processes.
    pub standby: BTreeMap<TaskId, BTreeSet<String>>,
    /// A warm-up task's processes.
    pub warmup: BTreeMap<TaskId, BTreeSet<String>>,
}

impl Owners {
    /// The owners of the tasks the members hold.
    pub fn of<'a>(members: impl IntoIterator<Item = &'a StreamsMember>) -> Self {
        let mut owners = Owners::default();
        for member in members {
            for tasks in [&member.assigned, &member.pending_revocation] {
                for task in tasks.active.keys() {
                    owners
                        .active
                        .insert(task.clone(), member.process_id.clone());
                }
                for task in &tasks.standby {
                    owners
                        .standby
                        .entry(task.clone())
                        .or_default()
                        .insert(member.process_id.clone());
                }
                for task in &tasks.warmup {
                    owners
                        .warmup
                        .entry(task.clone())
                        .or_default()
                        .insert(member.process_id.clone());
                }
            }
        }
        owners
    }

    fn in_process(map: &BTreeMap<TaskId, BTreeSet<String>>, process: &str, task: &TaskId) -> bool {
        map.get(task).is_some_and(|p| p.contains(process))
    }

    /// Whether an active task cannot be given to `member` yet.
    fn active_unreleased(&self, member: &StreamsMember, task: &TaskId) -> bool {
        let process = member.process_id.as_str();
        self.active.contains_key(task)
            || (Self::in_process(&self.standby, process, task)
                && !member.assigned.standby.contains(task))
            || (Self::in_process(&self.warmup, process, task)
                && !member.assigned.warmup.contains(task))
    }

    /// Whether a standby task cannot be given to `member` yet.
    fn standby_unreleased(&self, member: &StreamsMember, task: &TaskId) -> bool {
        let process = member.process_id.as_str();
        (self.active.get(task).is_some_and(|p| p == process)
            && !member.assigned.active.contains_key(task))
            || Self::in_process(&self.standby, process, task)
            || (Self::in_process(&self.warmup, process, task)
                && !member.assigned.warmup.contains(task))
    }

    /// Whether a warm-up task cannot be given to `member` yet.
    fn warmup_unreleased(&self, member: &StreamsMember, task: &TaskId) -> bool {
        let process = member.process_id.as_str();
        self.active.get(task).is_some_and(|p| p == process)
            || (Self::in_process(&self.standby, process, task)
                && !member.assigned.standby.contains(task))
            || Self::in_process(&self.warmup, process, task)
    }
}

/// The difference of one kind of task: kept, to give up, to take.
struct Difference {
    kept: BTreeSet<TaskId>,
    revoke: BTreeSet<TaskId>,
    take: BTreeSet<TaskId>,
    unreleased: bool,
}

fn difference(
    current: &BTreeSet<TaskId>,
    target: &BTreeSet<TaskId>,
    unreleased: impl Fn(&TaskId) -> bool,
) -> Difference {
    let kept: BTreeSet<TaskId> = current.intersection(target).cloned().collect();
    let revoke = current.difference(&kept).cloned().collect();
    let mut take: BTreeSet<TaskId> = target.difference(&kept).cloned().collect();
    let before = take.len();
    take.retain(|t| !unreleased(t));
    let unreleased = take.len() != before;
    Difference {
        kept,
        revoke,
        take,
        unreleased,
    }
}

/// Moves `member` towards `target` of `target_epoch`, given what it
/// reports owning (`owned`, when it sent it) and who holds what.
pub fn reconcile(
    member: &StreamsMember,
    target_epoch: i32,
    target: &TaskSets,
    owned: Option<&TaskSets>,
    owners: &Owners,
) -> StreamsMember {
    let still_held = |pending: &Tasks| owned.is_none_or(|o| o.contains_any(&pending.sets()));
    match member.state {
        MemberState::Stable if member.epoch == target_epoch => member.clone(),
        MemberState::UnrevokedTasks if still_held(&member.pending_revocation) => member.clone(),
        MemberState::UnrevokedTasks => next(
            member,
            member.epoch + 1,
            target_epoch,
            target,
            owned,
            owners,
        ),
        MemberState::Stable | MemberState::UnreleasedTasks => {
            next(member, member.epoch, target_epoch, target, owned, owners)
        }
    }
}

fn next(
    member: &StreamsMember,
    epoch: i32,
    target_epoch: i32,
    target: &TaskSets,
    owned: Option<&TaskSets>,
    owners: &Owners,
) -> StreamsMember {
    let current = member.assigned.sets();
    let active = difference(&current.active, &target.active, |t| {
        owners.active_unreleased(member, t)
    });
    let mut standby = difference(&current.standby, &target.standby, |t| {
        owners.standby_unreleased(member, t)
    });
    let mut warmup = difference(&current.warmup, &target.warmup, |t| {
        owners.warmup_unreleased(member, t)
    });
    let unreleased = active.unreleased || standby.unreleased || warmup.unreleased;
    // Role changes of the member's own tasks take effect at once: an
    // active task to run as a standby (it is still revoked as active), a
    // standby to run as a warm-up and back (no revocation).
    for task in &current.active {
        if standby.take.remove(task) {
            standby.kept.insert(task.clone());
        }
    }
    for task in &current.standby {
        if warmup.take.remove(task) {
            warmup.kept.insert(task.clone());
            standby.revoke.remove(task);
        }
    }
    for task in &current.warmup {
        if standby.take.remove(task) {
            standby.kept.insert(task.clone());
            warmup.revoke.remove(task);
        }
    }
    // A standby or warm-up to run as an active task is not revoked; it
    // stays until the active task is granted.
    standby.revoke.retain(|t| !target.active.contains(t));
    warmup.revoke.retain(|t| !target.active.contains(t));
    let with_epochs = |set: &BTreeSet<TaskId>| -> BTreeMap<TaskId, i32> {
        set.iter()
            .map(|t| {
                let epoch = member
                    .assigned
                    .active
                    .get(t)
                    .copied()
                    .unwrap_or(target_epoch);
                (t.clone(), epoch)
            })
            .collect()
    };
    let revoke = Tasks {
        active: with_epochs(&active.revoke),
        standby: standby.revoke.clone(),
        warmup: warmup.revoke.clone(),
    };
    let to_revoke = !revoke.is_empty() && owned.is_none_or(|o| o.contains_any(&revoke.sets()));
    for (held, kept) in [
        (&current.standby, &mut standby.kept),
        (&current.warmup, &mut warmup.kept),
    ] {
        for task in held {
            let promoted_now = !to_revoke && active.take.contains(task);
            if target.active.contains(task) && !promoted_now {
                kept.insert(task.clone());
            }
        }
    }
    let kept = Tasks {
        active: with_epochs(&active.kept),
        standby: standby.kept.clone(),
        warmup: warmup.kept.clone(),
    };
    let mut out = member.clone();
    let set_epoch = |out: &mut StreamsMember, epoch: i32| {
        out.previous_epoch = out.epoch;
        out.epoch = epoch;
    };
    if to_revoke {
        out.state = MemberState::UnrevokedTasks;
        set_epoch(&mut out, epoch);
        out.assigned = kept;
        out.pending_revocation = revoke;
    } else {
        out.state = if unreleased {
            MemberState::UnreleasedTasks
        } else {
            MemberState::Stable
        };
        set_epoch(&mut out, target_epoch);
        let mut assigned = kept;
        for task in active.take {
            assigned.active.insert(task, target_epoch);
        }
        assigned.standby.extend(standby.take);
        assigned.warmup.extend(warmup.take);
        out.assigned = assigned;
        out.pending_revocation = Tasks::default();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn tasks(list: &[i32]) -> BTreeSet<TaskId> {
        list.iter().map(|p| ("0".to_owned(), *p)).collect()
    }

    fn target(list: &[i32]) -> TaskSets {
        TaskSets {
            active: tasks(list),
            ..Default::default()
        }
    }

    fn member(id: &str, process: &str, epoch: i32, active: &[i32]) -> StreamsMember {
        let mut m = StreamsMember::new(id, Instant::now());
        m.process_id = process.into();
        m.epoch = epoch;
        m.assigned.active = tasks(active).into_iter().map(|t| (t, epoch)).collect();
        m
    }

    #[test]
    fn a_task_moves_only_once_given_up() {
        // As Kafka 4.4.0 answered: m1 holds 0-2 at epoch 2; m2 joins and the
        // target of epoch 3 gives it task 2.
        let m1 = member("m1", "p1", 2, &[0, 1, 2]);
        let m2 = member("m2", "p2", 0, &[]);
        let owners = Owners::of([&m1, &m2]);
        let m2 = reconcile(&m2, 3, &target(&[2]), Some(&TaskSets::default()), &owners);
        assert_eq!((m2.epoch, m2.state), (3, MemberState::UnreleasedTasks));
        assert!(m2.assigned.is_empty());
        // m1 still reports task 2: it keeps epoch 2 and is asked to give it up.
        let owned = TaskSets {
            active: tasks(&[0, 1, 2]),
            ..Default::default()
        };
        let m1 = reconcile(&m1, 3, &target(&[0, 1]), Some(&owned), &owners);
        assert_eq!((m1.epoch, m1.state), (2, MemberState::UnrevokedTasks));
        assert_eq!(
            m1.assigned.active.keys().cloned().collect::<BTreeSet<_>>(),
            tasks(&[0, 1])
        );
        // It gave it up: epoch 3, stable; task 0 keeps its epoch 2.
        let owned = TaskSets {
            active: tasks(&[0, 1]),
            ..Default::default()
        };
        let m1 = reconcile(&m1, 3, &target(&[0, 1]), Some(&owned), &Owners::of([&m1]));
        assert_eq!((m1.epoch, m1.state), (3, MemberState::Stable));
        assert_eq!(m1.assigned.active.get(&("0".to_owned(), 0)), Some(&2));
        // Now m2 gets it, assigned at epoch 3.
        let owners = Owners::of([&m1, &m2]);
        let m2 = reconcile(&m2, 3, &target(&[2]), None, &owners);
        assert_eq!((m2.epoch, m2.state), (3, MemberState::Stable));
        assert_eq!(m2.assigned.active.get(&("0".to_owned(), 2)), Some(&3));
    }

    #[test]
    fn a_standby_waits_for_its_process_to_drop_the_active() {
        let mut m1 = member("m1", "p1", 2, &[0]);
        let m2 = member("m2", "p1", 2, &[]);
        m1.state = MemberState::Stable;
        let owners = Owners::of([&m1, &m2]);
        let wanted = TaskSets {
            standby: tasks(&[0]),
            ..Default::default()
        };
        let m2 = reconcile(&m2, 3, &wanted, None, &owners);
        assert_eq!(m2.state, MemberState::UnreleasedTasks);
        assert!(m2.assigned.standby.is_empty());
    }

    #[test]
    fn roles_change_in_place() {
        let standby_of = |list: &[i32]| TaskSets {
            standby: tasks(list),
            ..Default::default()
        };
        let active_of = |list: &[i32]| TaskSets {
            active: tasks(list),
            ..Default::default()
        };
        // An active task to run as a standby: the standby at once, the
        // active task still to give up.
        let m1 = member("m1", "p1", 2, &[0]);
        let owned = active_of(&[0]);
        let demoted = reconcile(&m1, 3, &standby_of(&[0]), Some(&owned), &Owners::of([&m1]));
        assert_eq!(demoted.state, MemberState::UnrevokedTasks);
        assert_eq!(demoted.assigned.standby, tasks(&[0]));
        assert_eq!(demoted.pending_revocation.active.len(), 1);
        // A standby to run as an active task nobody holds: promoted now.
        let mut m2 = member("m2", "p2", 2, &[]);
        m2.assigned.standby = tasks(&[1]);
        let promoted = reconcile(&m2, 3, &active_of(&[1]), None, &Owners::of([&m2]));
        assert_eq!((promoted.state, promoted.epoch), (MemberState::Stable, 3));
        assert!(promoted.assigned.standby.is_empty());
        assert_eq!(promoted.assigned.active.get(&("0".to_owned(), 1)), Some(&3));
        // While another process still runs it, the standby stays.
        let m3 = member("m3", "p3", 2, &[1]);
        let waiting = reconcile(&m2, 3, &active_of(&[1]), None, &Owners::of([&m2, &m3]));
        assert_eq!(waiting.state, MemberState::UnreleasedTasks);
        assert_eq!(waiting.assigned.standby, tasks(&[1]));
        assert!(waiting.assigned.active.is_empty());
    }
}
