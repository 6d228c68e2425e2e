//! The target assignment of a streams group, on the principles of Kafka's
//! `sticky` task assignor (the default and only one of Kafka 4.4.0):
//!
//! 1. Active tasks, in (partition, subtopology) order, stay with the member
//!    whose target held them, while it is under its quota (the tasks per
//!    member, rounded up, recomputed as members fill up).
//! 2. Then a member that held the task as a standby takes it, the one in
//!    the least loaded process first.
//! 3. The rest, in (subtopology, partition) order, go to the least loaded
//!    process (tasks per member of it), to its member with the fewest
//!    tasks.
//! 4. Each task of a stateful subtopology gets `num.standby.replicas`
//!    standbys, each in a process that holds no copy of it yet: its
//!    previous active owner, else a previous standby holder, when that
//!    process is free of it, else the least loaded process.
//!
//! Warm-up tasks are never assigned: Kafka 4.4.0's assignment refinement
//! (the step that would add them) returns the target unchanged.
//!
//! Ties break by process id and member id, so the assignment is the same
//! for the same group; Kafka breaks them by hash order.

use std::collections::{BTreeMap, BTreeSet};

use super::tasks::{TaskId, TaskSets};

/// What the assignor knows of a member.
#[derive(Debug, Clone)]
pub struct MemberSpec<'a> {
    /// Its process.
    pub process_id: &'a str,
    /// Its previous target.
    pub previous: Option<&'a TaskSets>,
}

#[derive(Debug, Default)]
struct Process {
    /// Tasks per member, active and standby.
    members: BTreeMap<String, usize>,
    tasks: BTreeSet<TaskId>,
}

impl Process {
    fn load(&self) -> f64 {
        self.tasks.len() as f64 / self.members.len().max(1) as f64
    }

    fn least_loaded_member(&self) -> Option<String> {
        self.members
            .iter()
            .min_by_key(|(id, count)| (**count, (*id).clone()))
            .map(|(id, _)| id.clone())
    }
}

struct Assignment<'a> {
    processes: BTreeMap<&'a str, Process>,
    process_of: BTreeMap<&'a str, &'a str>,
    active: BTreeMap<String, BTreeSet<TaskId>>,
    standby: BTreeMap<String, BTreeSet<TaskId>>,
    quota: usize,
    members_left: usize,
    tasks_left: usize,
}

impl<'a> Assignment<'a> {
    fn has_quota(&self, member: &str) -> bool {
        self.active.get(member).map_or(0, BTreeSet::len) < self.quota
    }

    fn add(&mut self, member: &str, task: &TaskId, active: bool) {
        let Some(process) = self.process_of.get(member).copied() else {
            return;
        };
        if let Some(p) = self.processes.get_mut(process) {
            p.tasks.insert(task.clone());
            *p.members.entry(member.to_owned()).or_default() += 1;
        }
        let target = if active {
            &mut self.active
        } else {
            &mut self.standby
        };
        target
            .entry(member.to_owned())
            .or_default()
            .insert(task.clone());
        if active {
            let held = self.active.get(member).map_or(0, BTreeSet::len);
            if held == self.quota && self.members_left > 0 {
                // This member is full: the others share what is left.
                self.members_left -= 1;
                self.tasks_left = self.tasks_left.saturating_sub(held);
                if self.members_left > 0 {
                    self.quota = self.tasks_left.div_ceil(self.members_left);
                }
            }
        }
    }

    /// The least loaded process among those `allowed`, by id on ties.
    fn least_loaded_process(&self, allowed: impl Fn(&str) -> bool) -> Option<&'a str> {
        self.processes
            .iter()
            .filter(|(id, _)| allowed(id))
            .min_by(|(a_id, a), (b_id, b)| {
                a.load().total_cmp(&b.load()).then_with(|| a_id.cmp(b_id))
            })
            .map(|(id, _)| *id)
    }
}

/// Assigns the tasks of `subtopologies` (id, number of tasks, stateful) to
/// `members`, with `standby_replicas` standbys per stateful task.
pub fn assign(
    members: &BTreeMap<String, MemberSpec<'_>>,
    subtopologies: &BTreeMap<String, (i32, bool)>,
    standby_replicas: usize,
) -> BTreeMap<String, TaskSets> {
    let mut out: BTreeMap<String, TaskSets> = members
        .keys()
        .map(|id| (id.clone(), TaskSets::default()))
        .collect();
    if members.is_empty() {
        return out;
    }
    let mut processes: BTreeMap<&str, Process> = BTreeMap::new();
    let mut process_of = BTreeMap::new();
    let mut previous_active: BTreeMap<TaskId, &str> = BTreeMap::new();
    let mut previous_standby: BTreeMap<TaskId, BTreeSet<&str>> = BTreeMap::new();
    for (id, spec) in members {
        processes
            .entry(spec.process_id)
            .or_default()
            .members
            .insert(id.clone(), 0);
        process_of.insert(id.as_str(), spec.process_id);
        if let Some(previous) = spec.previous {
            for task in &previous.active {
                previous_active.insert(task.clone(), id.as_str());
            }
            for task in &previous.standby {
                previous_standby
                    .entry(task.clone())
                    .or_default()
                    .insert(id.as_str());
            }
        }
    }
    // Kafka keeps previous owners in (partition, subtopology) order.
    let mut tasks: Vec<TaskId> = subtopologies
        .iter()
        .flat_map(|(id, (count, _))| (0..*count).map(move |p| (id.clone(), p)))
        .collect();
    tasks.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    let total = tasks.len();
    let mut state = Assignment {
        processes,
        process_of,
        active: BTreeMap::new(),
        standby: BTreeMap::new(),
        quota: total.div_ceil(members.len()),
        members_left: members.len(),
        tasks_left: total,
    };

    // 1. The previous owner keeps its task.
    tasks.retain(|task| match previous_active.get(task) {
        Some(member) if state.has_quota(member) => {
            state.add(member, task, true);
            false
        }
        _ => true,
    });
    // 2. A previous standby holder takes it.
    tasks.retain(|task| {
        let Some(holders) = previous_standby.get(task) else {
            return true;
        };
        let chosen = holders
            .iter()
            .filter(|m| state.has_quota(m))
            .min_by(|a, b| {
                let load = |m: &str| {
                    state
                        .process_of
                        .get(m)
                        .and_then(|p| state.processes.get(p))
                        .map_or(0.0, Process::load)
                };
                load(a).total_cmp(&load(b)).then_with(|| a.cmp(b))
            })
            .copied();
        match chosen {
            Some(member) => {
                state.add(member, task, true);
                false
            }
            None => true,
        }
    });
    // 3. The rest to the least loaded process, in (subtopology,
    //    partition) order.
    tasks.sort();
    for task in &tasks {
        let member = state
            .least_loaded_process(|_| true)
            .and_then(|p| state.processes.get(p))
            .and_then(Process::least_loaded_member);
        if let Some(member) = member {
            state.add(&member, task, true);
        }
    }
    // 4. Standbys of stateful tasks, each on a process without the task.
    if standby_replicas > 0 {
        let mut stateful: Vec<TaskId> = subtopologies
            .iter()
            .filter(|(_, (_, stateful))| *stateful)
            .flat_map(|(id, (count, _))| (0..*count).map(move |p| (id.clone(), p)))
            .collect();
        stateful.sort();
        for task in &stateful {
            for _ in 0..standby_replicas {
                let free = |p: &str| {
                    state
                        .processes
                        .get(p)
                        .is_some_and(|process| !process.tasks.contains(task))
                };
                let free_member = |m: &str| state.process_of.get(m).is_some_and(|p| free(p));
                // The previous active owner keeps a copy as a standby,
                // else a previous standby holder, else the least loaded.
                let previous_owner = previous_active
                    .get(task)
                    .filter(|m| free_member(m))
                    .map(|m| (*m).to_owned());
                let previous = previous_owner.or_else(|| {
                    previous_standby.get(task).and_then(|holders| {
                        holders
                            .iter()
                            .find(|m| free_member(m))
                            .map(|m| (*m).to_owned())
                    })
                });
                let member = previous.or_else(|| {
                    state
                        .least_loaded_process(free)
                        .and_then(|p| state.processes.get(p))
                        .and_then(Process::least_loaded_member)
                });
                match member {
                    Some(member) => state.add(&member, task, false),
                    // Not enough processes for every replica.
                    None => break,
                }
            }
        }
    }
    for (member, tasks) in state.active {
        if let Some(sets) = out.get_mut(&member) {
            sets.active = tasks;
        }
    }
    for (member, tasks) in state.standby {
        if let Some(sets) = out.get_mut(&member) {
            sets.standby = tasks;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(process: &'a str, previous: Option<&'a TaskSets>) -> MemberSpec<'a> {
        MemberSpec {
            process_id: process,
            previous,
        }
    }

    fn counts(out: &BTreeMap<String, TaskSets>) -> Vec<usize> {
        out.values().map(|s| s.active.len()).collect()
    }

    #[test]
    fn balanced_over_processes_then_members_and_sticky() {
        let subtopologies: BTreeMap<String, (i32, bool)> =
            [("0".into(), (3, false)), ("1".into(), (3, true))].into();
        let mut members = BTreeMap::new();
        members.insert("a".to_owned(), spec("p1", None));
        members.insert("b".to_owned(), spec("p1", None));
        let first = assign(&members, &subtopologies, 0);
        assert_eq!(counts(&first), [3, 3]);
        // A second process joins: two tasks each, and a and b keep two of
        // the three they had.
        let previous = first.clone();
        let mut members = BTreeMap::new();
        members.insert("a".to_owned(), spec("p1", previous.get("a")));
        members.insert("b".to_owned(), spec("p1", previous.get("b")));
        members.insert("c".to_owned(), spec("p2", None));
        let second = assign(&members, &subtopologies, 0);
        assert_eq!(counts(&second), [2, 2, 2]);
        for m in ["a", "b"] {
            assert!(
                second[m].active.is_subset(&previous[m].active),
                "{second:?}"
            );
        }
        let all: BTreeSet<&TaskId> = second.values().flat_map(|s| &s.active).collect();
        assert_eq!(all.len(), 6);
    }

    #[test]
    fn standbys_go_to_another_process() {
        let subtopologies: BTreeMap<String, (i32, bool)> =
            [("0".into(), (2, false)), ("1".into(), (2, true))].into();
        let mut members = BTreeMap::new();
        members.insert("a".to_owned(), spec("p1", None));
        members.insert("b".to_owned(), spec("p2", None));
        let out = assign(&members, &subtopologies, 1);
        // Only the stateful subtopology's tasks get standbys, never where
        // the active task is.
        let standbys: Vec<&TaskId> = out.values().flat_map(|s| &s.standby).collect();
        assert_eq!(standbys.len(), 2);
        for sets in out.values() {
            assert!(sets.standby.is_disjoint(&sets.active));
            assert!(sets.standby.iter().all(|(s, _)| s == "1"));
        }
        // One process: no room for a standby.
        let mut alone = BTreeMap::new();
        alone.insert("a".to_owned(), spec("p1", None));
        let out = assign(&alone, &subtopologies, 1);
        assert!(out["a"].standby.is_empty());
        assert_eq!(out["a"].active.len(), 4);
    }
}
