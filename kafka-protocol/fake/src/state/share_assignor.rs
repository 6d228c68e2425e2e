//! The `simple` share-group assignor, as Kafka 4.4.0's assigns: each
//! partition goes to `ceil(members / partitions)` members, so that with no
//! more members than partitions every member has partitions of its own and
//! with more members each partition is shared; members get as even counts
//! as that allows, keep what they had where the counts let them (sticky),
//! and the rest goes round the members with room.
//!
//! Members subscribed to the same topics share every partition of them
//! together (Kafka's homogeneous case); otherwise each topic is shared out
//! among the members subscribed to it. Which member gets which partition
//! may differ from Kafka's, whose member order is a hash map's; the counts
//! are Kafka's.

use std::collections::{BTreeMap, BTreeSet};

use kafka_wire::runtime::Uuid;

/// A topic partition.
pub type Tp = (Uuid, i32);

/// One member's view for the assignor: what it subscribes to (topic ids)
/// and what it held.
#[derive(Debug, Clone, Default)]
pub struct Seat {
    /// The topics it subscribes to.
    pub topics: BTreeSet<Uuid>,
    /// Its current assignment.
    pub held: BTreeSet<Tp>,
}

/// The assignment of every member (by id), given each member's seat and
/// the partitions of each topic that may be assigned.
pub fn assign(
    members: &BTreeMap<String, Seat>,
    partitions: &BTreeMap<Uuid, Vec<i32>>,
) -> BTreeMap<String, BTreeSet<Tp>> {
    let mut out: BTreeMap<String, BTreeSet<Tp>> = members
        .keys()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    let homogeneous = members
        .values()
        .map(|s| &s.topics)
        .collect::<BTreeSet<_>>()
        .len()
        <= 1;
    // Groups of (members, topics) to share out together.
    let mut shares: Vec<(Vec<&String>, Vec<Uuid>)> = Vec::new();
    if homogeneous {
        let topics = members
            .values()
            .next()
            .map(|s| s.topics.iter().copied().collect())
            .unwrap_or_default();
        shares.push((members.keys().collect(), topics));
    } else {
        let topics: BTreeSet<Uuid> = members
            .values()
            .flat_map(|s| s.topics.iter().copied())
            .collect();
        for topic in topics {
            let subscribed = members
                .iter()
                .filter(|(_, s)| s.topics.contains(&topic))
                .map(|(id, _)| id)
                .collect();
            shares.push((subscribed, vec![topic]));
        }
    }
    for (ids, topics) in shares {
        let targets: Vec<Tp> = topics
            .iter()
            .flat_map(|t| {
                partitions
                    .get(t)
                    .into_iter()
                    .flatten()
                    .map(move |p| (*t, *p))
            })
            .collect();
        for (id, tps) in share_out(&ids, &targets, members) {
            if let Some(set) = out.get_mut(id) {
                set.extend(tps);
            }
        }
    }
    out
}

/// Shares `targets` out among `ids`, as Kafka's homogeneous builder does.
fn share_out<'a>(
    ids: &[&'a String],
    targets: &[Tp],
    members: &BTreeMap<String, Seat>,
) -> Vec<(&'a String, BTreeSet<Tp>)> {
    let n = ids.len();
    if n == 0 || targets.is_empty() {
        return ids.iter().map(|id| (*id, BTreeSet::new())).collect();
    }
    let sharing = n.div_ceil(targets.len());
    // Member i's count: ceil((i+1) * avg) - ceil(i * avg), avg being the
    // slots (partitions times sharing) per member.
    let avg = (targets.len() * sharing) as f64 / n as f64;
    let wanted: Vec<usize> = (0..n)
        .map(|i| ((i + 1) as f64 * avg).ceil() as usize - (i as f64 * avg).ceil() as usize)
        .collect();
    let mut held: Vec<BTreeSet<Tp>> = vec![BTreeSet::new(); n];
    let mut owners: BTreeMap<Tp, usize> = BTreeMap::new();
    // Sticky: what a member held, while it has room and the partition is
    // not shared enough already.
    for (i, id) in ids.iter().enumerate() {
        let Some(seat) = members.get(*id) else {
            continue;
        };
        for tp in &seat.held {
            let shared = owners.get(tp).copied().unwrap_or(0);
            if held[i].len() < wanted[i] && shared < sharing && targets.contains(tp) {
                held[i].insert(*tp);
                *owners.entry(*tp).or_default() += 1;
            }
        }
    }
    // The rest, partition by partition, to the members with room.
    let mut next = 0;
    for tp in targets {
        while owners.get(tp).copied().unwrap_or(0) < sharing {
            let Some(i) = (0..n)
                .map(|k| (next + k) % n)
                .find(|&i| held[i].len() < wanted[i] && !held[i].contains(tp))
            else {
                break;
            };
            held[i].insert(*tp);
            *owners.entry(*tp).or_default() += 1;
            next = (i + 1) % n;
        }
    }
    ids.iter().copied().zip(held).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seats(n: usize, topics: &[Uuid]) -> BTreeMap<String, Seat> {
        (0..n)
            .map(|i| {
                (
                    format!("m{i}"),
                    Seat {
                        topics: topics.iter().copied().collect(),
                        held: BTreeSet::new(),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn partitions_are_split_then_shared_as_kafkas_simple_assignor_does() {
        let t = Uuid([1; 16]);
        let partitions = BTreeMap::from([(t, vec![0, 1])]);
        // One member: everything.
        let one = assign(&seats(1, &[t]), &partitions);
        assert_eq!(one["m0"].len(), 2);
        // Two members, two partitions: one each.
        let two = assign(&seats(2, &[t]), &partitions);
        assert_eq!((two["m0"].len(), two["m1"].len()), (1, 1));
        assert!(two["m0"].is_disjoint(&two["m1"]));
        // Three members, two partitions: each partition shared by two.
        let three = assign(&seats(3, &[t]), &partitions);
        let counts: Vec<usize> = three.values().map(BTreeSet::len).collect();
        assert_eq!(counts.iter().sum::<usize>(), 4);
        for p in [0, 1] {
            assert_eq!(three.values().filter(|s| s.contains(&(t, p))).count(), 2);
        }
    }

    #[test]
    fn a_member_keeps_what_it_held() {
        let t = Uuid([1; 16]);
        let partitions = BTreeMap::from([(t, vec![0, 1, 2, 3])]);
        let mut members = seats(2, &[t]);
        if let Some(m) = members.get_mut("m1") {
            m.held = BTreeSet::from([(t, 0), (t, 1)]);
        }
        let out = assign(&members, &partitions);
        assert_eq!(out["m1"], BTreeSet::from([(t, 0), (t, 1)]));
        assert_eq!(out["m0"], BTreeSet::from([(t, 2), (t, 3)]));
    }

    #[test]
    fn different_subscriptions_share_each_topic_among_its_members() {
        let (a, b) = (Uuid([1; 16]), Uuid([2; 16]));
        let partitions = BTreeMap::from([(a, vec![0, 1]), (b, vec![0])]);
        let mut members = seats(2, &[a]);
        if let Some(m) = members.get_mut("m1") {
            m.topics.insert(b);
        }
        let out = assign(&members, &partitions);
        assert_eq!(out["m0"].len() + out["m1"].len(), 3);
        assert!(out["m1"].contains(&(b, 0)));
        assert!(!out["m0"].contains(&(b, 0)));
    }
}
