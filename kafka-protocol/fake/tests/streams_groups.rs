//! Streams groups (KIP-1071) over real sockets, each behaviour as Kafka
//! 4.4.0 answers it (the same exchanges go to Kafka beside the fake in
//! tests/tests/streams_app.rs of the workspace): joins, epochs and leaves;
//! internal topics the broker creates; statuses of topologies the topics
//! do not fit; the initial rebalance delay and the assignment interval;
//! tasks that move only once given up; standby tasks; fencing by session
//! and rebalance timeouts; offsets checked against the members' tasks; and
//! streams groups among the other kinds of groups.

use std::time::Duration;

use kafka_wire::messages::*;
use kafka_wire::ErrorCode;
use kafka_wire_fake::probe::Probe;
use kafka_wire_fake::{FakeCluster, StreamsGroupConfig, TopicSpec};

mod common;

use common::call;

/// Status codes of a StreamsGroupHeartbeat answer.
const STALE_TOPOLOGY: i8 = 0;
const MISSING_SOURCE_TOPICS: i8 = 1;
const INCORRECTLY_PARTITIONED_TOPICS: i8 = 2;
const MISSING_INTERNAL_TOPICS: i8 = 3;
const ASSIGNMENT_DELAYED: i8 = 5;

/// A cluster of `brokers` with topics `in-a` (3 partitions) and `in-b`
/// (2), streams groups run with `config` changed by `settings`.
async fn cluster(brokers: usize, settings: &[(&str, &str)]) -> FakeCluster {
    let mut config = StreamsGroupConfig::default();
    for (key, value) in [
        ("group.streams.initial.rebalance.delay.ms", "0"),
        ("group.streams.assignment.interval.ms", "0"),
    ]
    .iter()
    .chain(settings)
    {
        config.set(key, value).expect("a streams setting");
    }
    FakeCluster::builder()
        .brokers(brokers)
        .topic(TopicSpec::new("in-a", 3))
        .topic(TopicSpec::new("in-b", 2))
        .streams_groups(config)
        .start()
        .await
        .expect("start")
}

fn topic_info(name: &str, cleanup: &str) -> streams_group_heartbeat_request::TopicInfo<'static> {
    streams_group_heartbeat_request::TopicInfo {
        name: name.to_owned().into(),
        replication_factor: -1,
        topic_configs: vec![streams_group_heartbeat_request::KeyValue {
            key: "cleanup.policy".into(),
            value: cleanup.to_owned().into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

/// A subtopology reading `sources` and `repartitions`, writing `sinks`,
/// with `changelogs`.
fn subtopology(
    id: &str,
    sources: &[&str],
    repartitions: &[&str],
    sinks: &[&str],
    changelogs: &[&str],
) -> streams_group_heartbeat_request::Subtopology<'static> {
    streams_group_heartbeat_request::Subtopology {
        subtopology_id: id.to_owned().into(),
        source_topics: sources.iter().map(|s| (*s).to_owned().into()).collect(),
        repartition_source_topics: repartitions
            .iter()
            .map(|t| topic_info(t, "delete"))
            .collect::<Vec<_>>()
            .into(),
        repartition_sink_topics: sinks.iter().map(|s| (*s).to_owned().into()).collect(),
        state_changelog_topics: changelogs
            .iter()
            .map(|t| topic_info(t, "compact"))
            .collect::<Vec<_>>()
            .into(),
        ..Default::default()
    }
}

fn topology(
    epoch: i32,
    subtopologies: Vec<streams_group_heartbeat_request::Subtopology<'static>>,
) -> streams_group_heartbeat_request::Topology<'static> {
    streams_group_heartbeat_request::Topology {
        epoch,
        subtopologies: subtopologies.into(),
        ..Default::default()
    }
}

/// One subtopology reading `in-a`: three stateless tasks.
fn simple() -> streams_group_heartbeat_request::Topology<'static> {
    topology(0, vec![subtopology("0", &["in-a"], &[], &[], &[])])
}

fn join(
    group: &str,
    member: &str,
    process: &str,
    topology: streams_group_heartbeat_request::Topology<'static>,
) -> StreamsGroupHeartbeatRequest<'static> {
    StreamsGroupHeartbeatRequest {
        group_id: group.to_owned().into(),
        member_id: member.to_owned().into(),
        member_epoch: 0,
        endpoint_information_epoch: -1,
        rebalance_timeout_ms: 30_000,
        topology: Some(topology),
        active_tasks: Some(Vec::new().into()),
        standby_tasks: Some(Vec::new().into()),
        warmup_tasks: Some(Vec::new().into()),
        process_id: Some(process.to_owned().into()),
        ..Default::default()
    }
}

/// A heartbeat at `epoch`, reporting `owned` active tasks when given.
fn beat(
    group: &str,
    member: &str,
    epoch: i32,
    owned: Option<Vec<(&str, Vec<i32>)>>,
) -> StreamsGroupHeartbeatRequest<'static> {
    let tasks = |list: Vec<(&str, Vec<i32>)>| {
        list.into_iter()
            .map(|(s, p)| streams_group_heartbeat_request::TaskIds {
                subtopology_id: s.to_owned().into(),
                partitions: p.into(),
                ..Default::default()
            })
            .collect::<Vec<_>>()
            .into()
    };
    let given = owned.is_some();
    StreamsGroupHeartbeatRequest {
        group_id: group.to_owned().into(),
        member_id: member.to_owned().into(),
        member_epoch: epoch,
        rebalance_timeout_ms: -1,
        active_tasks: owned.map(tasks),
        standby_tasks: given.then(|| Vec::new().into()),
        warmup_tasks: given.then(|| Vec::new().into()),
        ..Default::default()
    }
}

/// What a heartbeat answer says, in short: (error, epoch, statuses, active
/// tasks by subtopology when sent).
type Short = (i16, i32, Vec<i8>, Option<Vec<(String, Vec<i32>)>>);

fn short(r: &StreamsGroupHeartbeatResponse<'static>) -> Short {
    let tasks = r.active_tasks.as_ref().map(|t| {
        t.iter()
            .map(|t| (t.subtopology_id.to_string(), t.partitions.iter().collect()))
            .collect()
    });
    let statuses = r
        .status
        .as_ref()
        .map(|s| s.iter().map(|s| s.status_code).collect())
        .unwrap_or_default();
    (r.error_code, r.member_epoch, statuses, tasks)
}

async fn heartbeat(
    probe: &mut Probe,
    request: StreamsGroupHeartbeatRequest<'static>,
) -> StreamsGroupHeartbeatResponse<'static> {
    call(probe, request, 1).await
}

fn tasks(list: &[(&str, &[i32])]) -> Option<Vec<(String, Vec<i32>)>> {
    Some(
        list.iter()
            .map(|(s, p)| ((*s).to_owned(), p.to_vec()))
            .collect(),
    )
}

#[tokio::test]
async fn members_join_heartbeat_and_leave_as_on_kafka() {
    let cluster = cluster(1, &[]).await;
    let mut probe = common::connect(&cluster, 0).await;
    // A heartbeat to no group; a join (a new group's first epoch is 2);
    // an unknown member; epochs ahead and behind; a leave, then again.
    let unknown = heartbeat(&mut probe, beat("g", "m1", 5, None)).await;
    assert_eq!(unknown.error_code, ErrorCode::GroupIdNotFound.code());
    assert_eq!(
        unknown.error_message.as_deref(),
        Some("Streams group g not found.")
    );
    assert_eq!(unknown.acceptable_recovery_lag, -1);
    let joined = heartbeat(&mut probe, join("g", "m1", "p1", simple())).await;
    assert_eq!(short(&joined), (0, 2, vec![], tasks(&[("0", &[0, 1, 2])])));
    assert_eq!(
        (
            joined.heartbeat_interval_ms,
            joined.task_offset_interval_ms,
            joined.acceptable_recovery_lag
        ),
        (5_000, 60_000, 10_000)
    );
    let answers: Vec<(i16, Option<String>)> = {
        let mut out = Vec::new();
        for request in [
            beat("g", "mX", 2, None),
            beat("g", "m1", 7, None),
            beat("g", "m1", 1, None),
        ] {
            let r = heartbeat(&mut probe, request).await;
            out.push((r.error_code, r.error_message.map(|m| m.to_string())));
        }
        out
    };
    assert_eq!(
        answers,
        [
            (ErrorCode::UnknownMemberId.code(), Some("Member mX is not a member of group g.".into())),
            (ErrorCode::FencedMemberEpoch.code(), Some("The streams group member has a greater member epoch (7) than the one known by the group coordinator (2). The member must abandon all its partitions and rejoin.".into())),
            (ErrorCode::FencedMemberEpoch.code(), Some("The streams group member has a smaller member epoch (1) than the one known by the group coordinator (2). The member must abandon all its partitions and rejoin.".into())),
        ]
    );
    // Unchanged tasks are not sent again.
    let again = heartbeat(
        &mut probe,
        beat("g", "m1", 2, Some(vec![("0", vec![0, 1, 2])])),
    )
    .await;
    assert_eq!(short(&again), (0, 2, vec![], None));
    let left = heartbeat(&mut probe, beat("g", "m1", -1, None)).await;
    assert_eq!(
        (
            left.error_code,
            left.member_epoch,
            left.heartbeat_interval_ms,
            left.acceptable_recovery_lag
        ),
        (0, -1, 0, -1)
    );
    let again = heartbeat(&mut probe, beat("g", "m1", -1, None)).await;
    assert_eq!(again.error_code, ErrorCode::UnknownMemberId.code());
    // Another member with another topology is refused.
    heartbeat(&mut probe, join("g", "m1", "p1", simple())).await;
    let other = topology(0, vec![subtopology("0", &["in-b"], &[], &[], &[])]);
    let refused = heartbeat(&mut probe, join("g", "m2", "p2", other)).await;
    assert_eq!(refused.error_code, ErrorCode::InvalidRequest.code());
    assert_eq!(
        refused.error_message.as_deref(),
        Some("Topology updates are not supported yet.")
    );
}

#[tokio::test]
async fn requests_are_checked_as_kafka_checks_them() {
    let cluster = cluster(1, &[]).await;
    let mut probe = common::connect(&cluster, 0).await;
    let mut cases: Vec<(StreamsGroupHeartbeatRequest<'static>, i16, &str)> = Vec::new();
    cases.push((
        join("g", "", "p1", simple()),
        42,
        "MemberId can't be empty.",
    ));
    let mut no_topology = join("g", "m1", "p1", simple());
    no_topology.topology = None;
    cases.push((
        no_topology,
        42,
        "Topology must be non-null when (re-)joining.",
    ));
    let mut with_tasks = join("g", "m1", "p1", simple());
    with_tasks.active_tasks = beat("g", "m1", 1, Some(vec![("0", vec![0])])).active_tasks;
    cases.push((
        with_tasks,
        42,
        "ActiveTasks must be empty when (re-)joining.",
    ));
    let mut no_timeout = join("g", "m1", "p1", simple());
    no_timeout.rebalance_timeout_ms = -1;
    cases.push((
        no_timeout,
        42,
        "RebalanceTimeoutMs must be provided in first request.",
    ));
    cases.push((
        beat("g", "m1", -3, None),
        42,
        "MemberEpoch is -3, but must be greater than or equal to -2.",
    ));
    cases.push((beat("g", "m1", -2, None), 42, "InstanceId can't be null."));
    let mut later = beat("g", "m1", 3, None);
    later.topology = Some(simple());
    cases.push((
        later,
        42,
        "Topology can only be provided when (re-)joining.",
    ));
    let mut partial = beat("g", "m1", 3, None);
    partial.active_tasks = Some(Vec::new().into());
    cases.push((
        partial,
        42,
        "If one task-type is non-null, all must be non-null.",
    ));
    let internal = topology(
        0,
        vec![subtopology(
            "0",
            &["__consumer_offsets", "in-a"],
            &[],
            &[],
            &[],
        )],
    );
    cases.push((
        join("g", "m1", "p1", internal),
        ErrorCode::StreamsInvalidTopology.code(),
        "Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited.",
    ));
    let invalid = topology(
        0,
        vec![subtopology(
            "0",
            &["bad name", "in-a", "b@d"],
            &[],
            &[],
            &[],
        )],
    );
    cases.push((
        join("g", "m1", "p1", invalid),
        ErrorCode::StreamsInvalidTopology.code(),
        "Topic names bad name,b@d are not valid topic names.",
    ));
    let mut sized = topology(0, vec![subtopology("0", &["in-a"], &[], &[], &["g-log"])]);
    sized.subtopologies.to_mut()[0]
        .state_changelog_topics
        .to_mut()[0]
        .partitions = 4;
    cases.push((
        join("g", "m1", "p1", sized),
        ErrorCode::StreamsInvalidTopology.code(),
        "Changelog topic g-log must have an undefined partition count, but it is set to 4.",
    ));
    let mut regex = simple();
    regex.subtopologies.to_mut()[0].source_topic_regex = vec!["in-.*".into()];
    cases.push((
        join("g", "m1", "p1", regex),
        42,
        "Regular expressions for source topics are not supported yet.",
    ));
    for (request, code, message) in cases {
        let r = heartbeat(&mut probe, request).await;
        assert_eq!(
            (r.error_code, r.error_message.as_deref()),
            (code, Some(message))
        );
        assert_eq!((r.member_epoch, r.heartbeat_interval_ms), (0, 0));
    }
    // Without a topology description plugin, an update is refused.
    let update = call(
        &mut probe,
        StreamsGroupTopologyDescriptionUpdateRequest {
            group_id: "g".into(),
            member_id: "m1".into(),
            ..Default::default()
        },
        0,
    )
    .await;
    assert_eq!(
        (update.error_code, update.error_message.as_deref()),
        (
            ErrorCode::UnsupportedVersion.code(),
            Some("The broker has no streams group topology description plugin configured.")
        )
    );
    // None of them created the group.
    let described = call(
        &mut probe,
        StreamsGroupDescribeRequest {
            group_ids: vec!["g".into()],
            ..Default::default()
        },
        1,
    )
    .await;
    assert_eq!(
        described.groups.iter().next().map(|g| g.error_code),
        Some(ErrorCode::GroupIdNotFound.code())
    );
}

/// The word count's shape: a subtopology writing a repartition topic and
/// keeping a store, one reading it with another store.
fn counting(group: &str) -> streams_group_heartbeat_request::Topology<'static> {
    let rep = format!("{group}-rep");
    let store = format!("{group}-store-changelog");
    let agg = format!("{group}-agg-changelog");
    topology(
        0,
        vec![
            subtopology("0", &["in-a"], &[], &[&rep], &[&store]),
            subtopology("1", &[], &[&rep], &[], &[&agg]),
        ],
    )
}

#[tokio::test]
async fn the_broker_creates_the_internal_topics_a_topology_needs() {
    let cluster = cluster(1, &[]).await;
    let mut probe = common::connect(&cluster, 0).await;
    let joined = heartbeat(&mut probe, join("w", "m1", "p1", counting("w"))).await;
    assert_eq!(
        short(&joined),
        (0, 2, vec![MISSING_INTERNAL_TOPICS], tasks(&[]))
    );
    let detail = joined
        .status
        .as_ref()
        .and_then(|s| s.iter().next())
        .map(|s| s.status_detail.to_string());
    // In the order Kafka's hash map of them iterates: w-store-changelog
    // and w-rep share a bucket, in the order they were put.
    assert_eq!(
        detail.as_deref(),
        Some("Internal topics are missing: w-store-changelog, w-rep, w-agg-changelog")
    );
    // They exist now, with the partitions of what feeds them and the
    // topology's configs.
    for topic in ["w-rep", "w-store-changelog", "w-agg-changelog"] {
        let answer = call(&mut probe, common::metadata(topic), 12).await;
        let found = answer
            .topics
            .iter()
            .next()
            .map(|t| (t.error_code, t.partitions.len()));
        assert_eq!(found, Some((0, 3)), "{topic}");
    }
    let configs = call(
        &mut probe,
        DescribeConfigsRequest {
            resources: vec![describe_configs_request::DescribeConfigsResource {
                resource_type: 2,
                resource_name: "w-agg-changelog".into(),
                configuration_keys: Some(vec!["cleanup.policy".into()]),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        },
        4,
    )
    .await;
    let policy = configs
        .results
        .iter()
        .flat_map(|r| {
            r.configs
                .iter()
                .map(|c| c.value.as_deref().map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .next()
        .flatten();
    assert_eq!(policy.as_deref(), Some("compact"));
    // Ready: the epoch is bumped and every task assigned.
    let ready = heartbeat(&mut probe, beat("w", "m1", 2, Some(vec![]))).await;
    assert_eq!(
        short(&ready),
        (0, 3, vec![], tasks(&[("0", &[0, 1, 2]), ("1", &[0, 1, 2])]))
    );
}

#[tokio::test]
async fn statuses_say_why_a_topology_is_not_ready() {
    let cluster = cluster(1, &[]).await;
    let mut probe = common::connect(&cluster, 0).await;
    let detail = |r: &StreamsGroupHeartbeatResponse<'static>| -> Vec<(i8, String)> {
        r.status
            .as_ref()
            .map(|s| {
                s.iter()
                    .map(|s| (s.status_code, s.status_detail.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let missing = topology(
        0,
        vec![subtopology("0", &["no-such", "in-a"], &[], &[], &[])],
    );
    let r = heartbeat(&mut probe, join("a", "m1", "p1", missing)).await;
    assert_eq!(
        detail(&r),
        [(
            MISSING_SOURCE_TOPICS,
            "Source topics no-such are missing.".to_owned()
        )]
    );
    let mut copartitioned = topology(0, vec![subtopology("0", &["in-a", "in-b"], &[], &[], &[])]);
    copartitioned.subtopologies.to_mut()[0].copartition_groups =
        vec![streams_group_heartbeat_request::CopartitionGroup {
            source_topics: vec![0i16, 1].into(),
            ..Default::default()
        }]
        .into();
    let r = heartbeat(&mut probe, join("b", "m1", "p1", copartitioned)).await;
    assert_eq!(
        detail(&r),
        [(
            INCORRECTLY_PARTITIONED_TOPICS,
            "Following topics do not have the same number of partitions: [{in-a=3, in-b=2}]"
                .to_owned()
        )]
    );
    assert_eq!(r.active_tasks.map(|t| t.len()), Some(0));
    // A member that joins with an older topology than the group's.
    let mut newer = simple();
    newer.epoch = 1;
    heartbeat(&mut probe, join("c", "m1", "p1", newer)).await;
    let r = heartbeat(&mut probe, join("c", "m2", "p2", simple())).await;
    assert_eq!(
        detail(&r),
        [(
            STALE_TOPOLOGY,
            "The member's topology epoch 0 is behind the group's topology epoch 1.".to_owned()
        )]
    );
    // The groups are NotReady, and Reconciling (m1 must give tasks up).
    let described = call(
        &mut probe,
        StreamsGroupDescribeRequest {
            group_ids: vec!["a".into(), "c".into()],
            ..Default::default()
        },
        1,
    )
    .await;
    let states: Vec<String> = described
        .groups
        .iter()
        .map(|g| g.group_state.to_string())
        .collect();
    assert_eq!(states, ["NotReady", "Reconciling"]);
}

#[tokio::test]
async fn assignments_wait_for_the_initial_delay_and_the_interval() {
    let cluster = cluster(
        1,
        &[
            ("group.streams.initial.rebalance.delay.ms", "400"),
            ("group.streams.assignment.interval.ms", "400"),
        ],
    )
    .await;
    let mut probe = common::connect(&cluster, 0).await;
    let delay = "Assignment delayed due to the configured initial rebalance delay.";
    let interval = "Assignment delayed due to the configured assignment interval.";
    let first = heartbeat(&mut probe, join("d", "m1", "p1", simple())).await;
    // The target of the new group's epoch 1 holds nothing yet.
    assert_eq!(short(&first), (0, 1, vec![ASSIGNMENT_DELAYED], tasks(&[])));
    assert_eq!(
        first
            .status
            .as_ref()
            .and_then(|s| s.iter().next())
            .map(|s| s.status_detail.to_string())
            .as_deref(),
        Some(delay)
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    let assigned = heartbeat(&mut probe, beat("d", "m1", 1, Some(vec![]))).await;
    assert_eq!(
        short(&assigned),
        (0, 2, vec![], tasks(&[("0", &[0, 1, 2])]))
    );
    // A second member right after: the interval holds the next target back.
    let second = heartbeat(&mut probe, join("d", "m2", "p2", simple())).await;
    assert_eq!(short(&second), (0, 2, vec![ASSIGNMENT_DELAYED], tasks(&[])));
    assert_eq!(
        second
            .status
            .as_ref()
            .and_then(|s| s.iter().next())
            .map(|s| s.status_detail.to_string())
            .as_deref(),
        Some(interval)
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    let m1 = heartbeat(
        &mut probe,
        beat("d", "m1", 2, Some(vec![("0", vec![0, 1, 2])])),
    )
    .await;
    // m1 keeps partitions 0 and 1 and must give 2 up, at its epoch.
    assert_eq!(short(&m1), (0, 2, vec![], tasks(&[("0", &[0, 1])])));
}

#[tokio::test]
async fn tasks_move_only_once_given_up_and_standbys_go_to_other_processes() {
    let cluster = cluster(1, &[("group.streams.num.standby.replicas", "1")]).await;
    let mut probe = common::connect(&cluster, 0).await;
    let stateful = topology(
        0,
        vec![subtopology(
            "0",
            &["in-a"],
            &[],
            &[],
            &["s-store-changelog"],
        )],
    );
    let m1 = heartbeat(&mut probe, join("s", "m1", "p1", stateful.clone())).await;
    assert_eq!(short(&m1).2, [MISSING_INTERNAL_TOPICS]);
    let m1 = heartbeat(&mut probe, beat("s", "m1", 2, Some(vec![]))).await;
    assert_eq!(short(&m1), (0, 3, vec![], tasks(&[("0", &[0, 1, 2])])));
    // Alone in its process: no standby.
    assert_eq!(m1.standby_tasks.map(|t| t.len()), Some(0));
    let m2 = heartbeat(&mut probe, join("s", "m2", "p2", stateful)).await;
    // m1 still runs every task: m2 waits, at the new epoch.
    assert_eq!(short(&m2), (0, 4, vec![], tasks(&[])));
    let standby = |r: &StreamsGroupHeartbeatResponse<'static>| -> Vec<i32> {
        r.standby_tasks
            .as_ref()
            .map(|t| {
                t.iter()
                    .flat_map(|t| t.partitions.iter().collect::<Vec<_>>())
                    .collect()
            })
            .unwrap_or_default()
    };
    let m1 = heartbeat(
        &mut probe,
        beat("s", "m1", 3, Some(vec![("0", vec![0, 1, 2])])),
    )
    .await;
    // m1 gives task 2 up, at its epoch, and keeps a copy of it as a
    // standby at once (the previous owner's in-place demotion).
    assert_eq!(short(&m1), (0, 3, vec![], tasks(&[("0", &[0, 1])])));
    assert_eq!(standby(&m1), [2]);
    let m1 = heartbeat(
        &mut probe,
        beat("s", "m1", 3, Some(vec![("0", vec![0, 1])])),
    )
    .await;
    assert_eq!(short(&m1).1, 4);
    let m2 = heartbeat(&mut probe, beat("s", "m2", 4, Some(vec![]))).await;
    assert_eq!(short(&m2), (0, 4, vec![], tasks(&[("0", &[2])])));
    // Each member's standbys are the other process's active tasks.
    assert_eq!(standby(&m2), [0, 1]);
}

#[tokio::test]
async fn members_are_fenced_after_their_session_or_rebalance_timeout() {
    let cluster = cluster(1, &[("group.streams.session.timeout.ms", "600")]).await;
    let mut probe = common::connect(&cluster, 0).await;
    heartbeat(&mut probe, join("f", "m1", "p1", simple())).await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let gone = heartbeat(&mut probe, beat("f", "m1", 2, None)).await;
    assert_eq!(gone.error_code, ErrorCode::UnknownMemberId.code());
    // A member that does not give a task up within its rebalance timeout
    // is fenced, whatever its heartbeats.
    let mut m1 = join("f", "m1", "p1", simple());
    m1.rebalance_timeout_ms = 300;
    let r = heartbeat(&mut probe, m1).await;
    let epoch = r.member_epoch;
    heartbeat(&mut probe, join("f", "m2", "p2", simple())).await;
    let asked = heartbeat(
        &mut probe,
        beat("f", "m1", epoch, Some(vec![("0", vec![0, 1, 2])])),
    )
    .await;
    assert_eq!(short(&asked).3, tasks(&[("0", &[0, 1])]));
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let still = heartbeat(
            &mut probe,
            beat("f", "m1", epoch, Some(vec![("0", vec![0, 1, 2])])),
        )
        .await;
        if still.error_code != 0 {
            assert_eq!(still.error_code, ErrorCode::UnknownMemberId.code());
            return;
        }
    }
    panic!("m1 was not fenced after its rebalance timeout");
}

fn commit(member: &str, epoch: i32, partitions: &[i32]) -> OffsetCommitRequest<'static> {
    OffsetCommitRequest {
        group_id: "o".into(),
        generation_id_or_member_epoch: epoch,
        member_id: member.to_owned().into(),
        topics: vec![offset_commit_request::OffsetCommitRequestTopic {
            name: "in-a".into(),
            partitions: partitions
                .iter()
                .map(|p| offset_commit_request::OffsetCommitRequestPartition {
                    partition_index: *p,
                    committed_offset: 7,
                    committed_leader_epoch: -1,
                    ..Default::default()
                })
                .collect::<Vec<_>>()
                .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

fn codes(r: &OffsetCommitResponse<'static>) -> Vec<i16> {
    r.topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| p.error_code)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn fetch(member: Option<&str>, epoch: i32) -> OffsetFetchRequest<'static> {
    OffsetFetchRequest {
        groups: vec![offset_fetch_request::OffsetFetchRequestGroup {
            group_id: "o".into(),
            member_id: member.map(|m| m.to_owned().into()),
            member_epoch: epoch,
            topics: None,
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn offsets_are_checked_against_the_members_tasks() {
    let cluster = cluster(1, &[]).await;
    let mut probe = common::connect(&cluster, 0).await;
    heartbeat(&mut probe, join("o", "m1", "p1", simple())).await;
    heartbeat(&mut probe, join("o", "m2", "p2", simple())).await;
    heartbeat(
        &mut probe,
        beat("o", "m1", 2, Some(vec![("0", vec![0, 1, 2])])),
    )
    .await;
    let m1 = heartbeat(
        &mut probe,
        beat("o", "m1", 2, Some(vec![("0", vec![0, 1])])),
    )
    .await;
    assert_eq!(m1.member_epoch, 3);
    let stale = ErrorCode::StaleMemberEpoch.code();
    // At its epoch; at the older epoch its tasks 0 and 1 were given at,
    // but partition 2 (revoked) refuses the whole commit, as in Kafka.
    for (request, version, want) in [
        (commit("m1", 3, &[0, 1, 2]), 9, vec![0, 0, 0]),
        (commit("m1", 2, &[0, 1]), 9, vec![0, 0]),
        (commit("m1", 2, &[0, 1, 2]), 9, vec![stale; 3]),
        (commit("m1", 4, &[0]), 9, vec![stale]),
        (
            commit("mX", 3, &[0]),
            9,
            vec![ErrorCode::UnknownMemberId.code()],
        ),
        (
            commit("m1", 3, &[0]),
            8,
            vec![ErrorCode::UnsupportedVersion.code()],
        ),
        (
            commit("", -1, &[0]),
            9,
            vec![ErrorCode::UnknownMemberId.code()],
        ),
    ] {
        let r = call(&mut probe, request, version).await;
        assert_eq!(codes(&r), want);
    }
    let group_code = |r: OffsetFetchResponse<'static>| r.groups.iter().next().map(|g| g.error_code);
    assert_eq!(
        group_code(call(&mut probe, fetch(Some("m1"), 3), 9).await),
        Some(0)
    );
    assert_eq!(
        group_code(call(&mut probe, fetch(Some("m1"), 2), 9).await),
        Some(stale)
    );
    assert_eq!(
        group_code(call(&mut probe, fetch(Some("mX"), 3), 9).await),
        Some(ErrorCode::UnknownMemberId.code())
    );
    assert_eq!(
        group_code(call(&mut probe, fetch(None, -1), 9).await),
        Some(0)
    );
}

#[tokio::test]
async fn streams_groups_among_the_other_groups() {
    let cluster = cluster(1, &[]).await;
    let mut probe = common::connect(&cluster, 0).await;
    heartbeat(&mut probe, join("x", "m1", "p1", simple())).await;
    let listed = call(
        &mut probe,
        ListGroupsRequest {
            types_filter: vec!["streams".into()],
            ..Default::default()
        },
        5,
    )
    .await;
    let listed: Vec<(String, String, String, String)> = listed
        .groups
        .iter()
        .map(|g| {
            (
                g.group_id.to_string(),
                g.protocol_type.to_string(),
                g.group_state.to_string(),
                g.group_type.to_string(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [(
            "x".into(),
            "streams".into(),
            "Stable".into(),
            "streams".into()
        )]
    );
    let described = call(
        &mut probe,
        DescribeGroupsRequest {
            groups: vec!["x".into()],
            ..Default::default()
        },
        6,
    )
    .await;
    let group = described.groups.into_iter().next().expect("a group");
    assert_eq!(
        (
            group.error_code,
            group.error_message.as_deref(),
            group.group_state.as_ref()
        ),
        (
            ErrorCode::GroupIdNotFound.code(),
            Some("Group x is not a classic group."),
            "Dead"
        )
    );
    let consumer = call(
        &mut probe,
        ConsumerGroupHeartbeatRequest {
            group_id: "x".into(),
            member_id: "abcdefghijklmnopqrstuv".into(),
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec!["in-a".into()]),
            topic_partitions: Some(Vec::new().into()),
            ..Default::default()
        },
        1,
    )
    .await;
    assert_eq!(consumer.error_code, ErrorCode::GroupIdNotFound.code());
    let classic = |group: &str| JoinGroupRequest {
        group_id: group.to_owned().into(),
        session_timeout_ms: 30_000,
        rebalance_timeout_ms: 30_000,
        protocol_type: "consumer".into(),
        protocols: vec![join_group_request::JoinGroupRequestProtocol {
            name: "range".into(),
            metadata: Vec::new().into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let refused = call(&mut probe, classic("x"), 9).await;
    assert_eq!(
        refused.error_code,
        ErrorCode::InconsistentGroupProtocol.code()
    );
    let delete = || DeleteGroupsRequest {
        groups_names: vec!["x".into()],
        ..Default::default()
    };
    let r = call(&mut probe, delete(), 2).await;
    assert_eq!(
        r.results.iter().next().map(|g| g.error_code),
        Some(ErrorCode::NonEmptyGroup.code())
    );
    heartbeat(&mut probe, beat("x", "m1", -1, None)).await;
    // An empty streams group becomes a classic group on a classic join.
    let converted = call(&mut probe, classic("x"), 9).await;
    assert_eq!(converted.error_code, ErrorCode::MemberIdRequired.code());
    // And an empty classic group a streams group on a streams join.
    let back = heartbeat(&mut probe, join("x", "m1", "p1", simple())).await;
    assert_eq!(short(&back).0, 0);
    heartbeat(&mut probe, beat("x", "m1", -1, None)).await;
    let r = call(&mut probe, delete(), 2).await;
    assert_eq!(r.results.iter().next().map(|g| g.error_code), Some(0));
}

#[tokio::test]
async fn only_the_coordinator_answers() {
    let cluster = cluster(3, &[]).await;
    let find = call(
        &mut common::connect(&cluster, 0).await,
        FindCoordinatorRequest {
            key_type: 0,
            coordinator_keys: vec!["n".into()],
            ..Default::default()
        },
        4,
    )
    .await;
    let coordinator = find
        .coordinators
        .iter()
        .next()
        .map(|c| c.node_id)
        .expect("a coordinator");
    let other = (0..3).find(|n| *n != coordinator).expect("another broker");
    let mut probe = common::connect(&cluster, other).await;
    let r = heartbeat(&mut probe, join("n", "m1", "p1", simple())).await;
    assert_eq!(
        (r.error_code, r.error_message.as_deref()),
        (ErrorCode::NotCoordinator.code(), None)
    );
    let mut probe = common::connect(&cluster, coordinator).await;
    let r = heartbeat(&mut probe, join("n", "m1", "p1", simple())).await;
    assert_eq!(short(&r), (0, 2, vec![], tasks(&[("0", &[0, 1, 2])])));
}
