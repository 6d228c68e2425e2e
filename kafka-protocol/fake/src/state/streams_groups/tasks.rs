//! Tasks: a subtopology and a partition. A member holds active tasks, each
//! with the epoch at which it was given to the member (what an offset
//! commit at an older epoch is checked against), standby tasks and
//! warm-up tasks.

use std::collections::{BTreeMap, BTreeSet};

/// A task: (subtopology id, partition).
pub type TaskId = (String, i32);

/// A member's tasks of each kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tasks {
    /// Active tasks, each with the member epoch at which it was assigned.
    pub active: BTreeMap<TaskId, i32>,
    /// Standby tasks.
    pub standby: BTreeSet<TaskId>,
    /// Warm-up tasks.
    pub warmup: BTreeSet<TaskId>,
}

/// A set of tasks of each kind, without epochs: a target assignment, or
/// what a member reports it owns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskSets {
    /// Active tasks.
    pub active: BTreeSet<TaskId>,
    /// Standby tasks.
    pub standby: BTreeSet<TaskId>,
    /// Warm-up tasks.
    pub warmup: BTreeSet<TaskId>,
}

impl Tasks {
    /// Whether the member holds no task.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty() && self.standby.is_empty() && self.warmup.is_empty()
    }

    /// The tasks without their epochs.
    pub fn sets(&self) -> TaskSets {
        TaskSets {
            active: self.active.keys().cloned().collect(),
            standby: self.standby.clone(),
            warmup: self.warmup.clone(),
        }
    }
}

impl TaskSets {
    /// Whether there is no task.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty() && self.standby.is_empty() && self.warmup.is_empty()
    }

    /// Whether any task of `other` is here, kind by kind.
    pub fn contains_any(&self, other: &TaskSets) -> bool {
        !self.active.is_disjoint(&other.active)
            || !self.standby.is_disjoint(&other.standby)
            || !self.warmup.is_disjoint(&other.warmup)
    }

    /// Every task of every kind is among `assigned`'s of the same kind.
    pub fn within(&self, assigned: &TaskSets) -> bool {
        self.active.is_subset(&assigned.active)
            && self.standby.is_subset(&assigned.standby)
            && self.warmup.is_subset(&assigned.warmup)
    }
}

/// Tasks grouped by subtopology, in order, each subtopology made into a
/// response's entry by `entry` (subtopology id, its partitions sorted).
pub fn by_subtopology<'a, T>(
    tasks: impl IntoIterator<Item = &'a TaskId>,
    mut entry: impl FnMut(&str, Vec<i32>) -> T,
) -> Vec<T> {
    let mut grouped: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (subtopology, partition) in tasks {
        grouped.entry(subtopology).or_default().push(*partition);
    }
    grouped
        .into_iter()
        .map(|(subtopology, mut partitions)| {
            partitions.sort_unstable();
            entry(subtopology, partitions)
        })
        .collect()
}
