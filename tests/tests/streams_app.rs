//! Kafka Streams 4.4.0 against the fake cluster and against Kafka 4.4.0
//! (issue 53, section 2).
//!
//! - The application of `tests/streams` (a word count and a windowed
//!   stream-stream join, `exactly_once_v2`, two stream threads) runs under
//!   the classic group protocol and the streams group protocol (KIP-1071)
//!   at once, against the fake with one broker and with three, and against
//!   Kafka 4.4.0. Its JVM is killed (SIGKILL) once each application has
//!   processed a quarter of its input, then started again: the output
//!   topics, read `read_committed`, must hold exactly the records that the
//!   workload makes, computed here on our own (every word's running counts
//!   once each, every pair of the join window once), on every target.
//! - The same StreamsGroupHeartbeat, StreamsGroupDescribe and group and
//!   offset requests, a script of joins, reconciliations, errors and
//!   statuses, go to Kafka and to the fake, and their answers must be the
//!   same, field for field.
//!
//! Both sides run with the same streams group settings: a 6 s session
//! timeout, 500 ms heartbeats, no initial rebalance delay, no assignment
//! interval and one standby per stateful task (Kafka's `group.streams.*`
//! broker configs, the
//! fake's [`StreamsGroupConfig`]). Each scenario prints its time. Skips
//! without Java, Maven or the jars, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use std::time::Instant;

use kafka_wire::ApiKey;
use kafka_wire_fake::{FakeCluster, StreamsGroupConfig};
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::broker::Session;
use kafka_wire_tests::clients::{say, scratch};
use kafka_wire_tests::streams::{app, check_output, workload, Outcome};
use serde_json::{json, Value};

/// Input records each application processes before its JVM is killed: a
/// quarter of the input.
const KILL_AT: u64 = workload::INPUT / 4;

/// The streams group settings of both sides, as Kafka's broker configs.
const STREAMS_CONFIGS: &[(&str, &str)] = &[
    ("group.streams.session.timeout.ms", "6000"),
    ("group.streams.heartbeat.interval.ms", "500"),
    ("group.streams.initial.rebalance.delay.ms", "0"),
    ("group.streams.assignment.interval.ms", "0"),
    ("group.streams.num.standby.replicas", "1"),
];

/// Kafka's options: the settings above and the lower bounds they need.
/// (Kafka 4.4.0 enables the streams protocol by default:
/// `group.coordinator.rebalance.protocols` is `classic,consumer,streams`
/// and `streams.version` 1 is finalized when storage is formatted.)
fn kafka_options() -> Vec<String> {
    let mut options = vec![
        "--config".to_owned(),
        "group.streams.min.session.timeout.ms=6000".to_owned(),
        "--config".to_owned(),
        "group.streams.min.heartbeat.interval.ms=500".to_owned(),
    ];
    for (key, value) in STREAMS_CONFIGS {
        options.push("--config".into());
        options.push(format!("{key}={value}"));
    }
    options
}

/// A fake cluster of `brokers` with the same settings, on a runtime of
/// its own.
struct Fake {
    cluster: FakeCluster,
    _runtime: tokio::runtime::Runtime,
}

fn fake(brokers: usize) -> Fake {
    let mut config = StreamsGroupConfig::default();
    for (key, value) in STREAMS_CONFIGS {
        config.set(key, value).unwrap_or_else(|e| panic!("{e}"));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let cluster = runtime
        .block_on(
            FakeCluster::builder()
                .brokers(brokers)
                .streams_groups(config)
                .start(),
        )
        .unwrap_or_else(|e| panic!("the fake with {brokers} brokers: {e}"));
    Fake {
        cluster,
        _runtime: runtime,
    }
}

/// Runs the application killed and restarted against `bootstrap`, checks
/// its output and prints what it did.
fn application(target: &str, bootstrap: &str) -> Option<Outcome> {
    let app = app()?;
    let dir = scratch(&format!("streams-app-{}", target.replace(' ', "-")));
    let started = Instant::now();
    let outcome = app.run_killed_and_restarted(bootstrap, "wc", &dir, KILL_AT);
    for (protocol, processed) in &outcome.killed_at {
        assert!(
            *processed < workload::INPUT,
            "{target} {protocol}: the first run had processed all {processed} records when it was killed"
        );
    }
    let mut counted = Vec::new();
    for protocol in ["classic", "streams"] {
        let again = outcome.after_restart.get(protocol).copied().unwrap_or(0);
        assert!(
            again > 0,
            "{target} {protocol}: nothing was left to process after the restart"
        );
        let (counts, joined) = check_output(target, protocol, &outcome.output[protocol]);
        counted.push(format!(
            "{protocol}: killed at {} of {} input records, {again} processed after the restart, output {counts} word counts and {joined} joined records, exactly once",
            outcome.killed_at.get(protocol).copied().unwrap_or(0),
            workload::INPUT
        ));
    }
    say(&format!(
        "streams app on {target}: {} (prepare {:.1} s, run until killed {:.1} s, restart {:.1} s; {:.1} s in all)",
        counted.join("; "),
        outcome.seconds[0],
        outcome.seconds[1],
        outcome.seconds[2],
        started.elapsed().as_secs_f64()
    ));
    Some(outcome)
}

#[test]
fn the_streams_application_is_exactly_once_on_the_fake_with_one_broker() {
    let _one = one_at_a_time();
    if app().is_none() {
        return;
    }
    let fake = fake(1);
    application("fake 1", &fake.cluster.bootstrap());
}

#[test]
fn the_streams_application_is_exactly_once_on_the_fake_with_three_brokers() {
    let _one = one_at_a_time();
    if app().is_none() {
        return;
    }
    let fake = fake(3);
    application("fake 3", &fake.cluster.bootstrap());
}

// ---------------------------------------------------------------------------
// The script of requests, beside Kafka.

fn topic_info(name: &str) -> Value {
    json!({"name": name, "partitions": 0, "replicationFactor": -1,
           "topicConfigs": [{"key": "cleanup.policy", "value": "compact"}]})
}

fn subtopology(
    id: &str,
    sources: &[&str],
    changelogs: &[&str],
    sinks: &[&str],
    repartitions: &[&str],
    copartition: Value,
) -> Value {
    json!({
        "subtopologyId": id,
        "sourceTopics": sources,
        "sourceTopicRegex": [],
        "stateChangelogTopics": changelogs.iter().map(|c| topic_info(c)).collect::<Vec<_>>(),
        "repartitionSinkTopics": sinks,
        "repartitionSourceTopics": repartitions.iter().map(|c| {
            let mut info = topic_info(c);
            info["topicConfigs"] = json!([{"key": "cleanup.policy", "value": "delete"}]);
            info
        }).collect::<Vec<_>>(),
        "copartitionGroups": copartition,
    })
}

fn join(group: &str, member: &str, process: &str, topology: Value) -> Value {
    json!({"groupId": group, "memberId": member, "memberEpoch": 0, "endpointInformationEpoch": -1,
           "rebalanceTimeoutMs": 30000, "topology": topology, "activeTasks": [], "standbyTasks": [],
           "warmupTasks": [], "processId": process})
}

fn beat(group: &str, member: &str, epoch: i64, owned: Option<Value>) -> Value {
    let mut beat = json!({"groupId": group, "memberId": member, "memberEpoch": epoch,
                          "endpointInformationEpoch": 0, "rebalanceTimeoutMs": -1, "topology": null,
                          "activeTasks": null, "standbyTasks": null, "warmupTasks": null});
    if let Some(active) = owned {
        beat["activeTasks"] = active;
        beat["standbyTasks"] = json!([]);
        beat["warmupTasks"] = json!([]);
    }
    beat
}

/// The active tasks of a heartbeat answer (or a describe's assignment), as
/// the member reports them back.
fn owned(tasks: &Value) -> Value {
    tasks.clone()
}

fn commit(group: &str, member: &str, epoch: i64, topic: &str, partitions: &[i64]) -> Value {
    json!({"groupId": group, "generationIdOrMemberEpoch": epoch, "memberId": member,
           "topics": [{"name": topic, "partitions": partitions.iter().map(|p| json!(
               {"partitionIndex": p, "committedOffset": 7, "committedLeaderEpoch": -1,
                "committedMetadata": ""})).collect::<Vec<_>>()}]})
}

fn fetch(group: &str, member: Value, epoch: i64) -> Value {
    json!({"groups": [{"groupId": group, "memberId": member, "memberEpoch": epoch, "topics": null}],
           "requireStable": false})
}

/// Waits until `topics` exist and are led, as a client does.
fn wait_for(session: &mut Session, topics: &[&str]) {
    for topic in topics {
        session.json_until(
            ApiKey::Metadata,
            &json!({"topics": [{"name": topic, "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}],
                    "allowAutoTopicCreation": false}),
            |answer| {
                answer["topics"][0]["errorCode"] == 0
                    && answer["topics"][0]["partitions"][0]["leaderId"].as_i64() >= Some(0)
            },
        );
    }
}

/// An answer with what Kafka lists in hash-table order in order: the
/// members of a StreamsGroupDescribe group (Kafka: its members map; the
/// fake: by member id) and the partitions of an OffsetFetch group (Kafka:
/// its offsets map; the fake: by partition). Neither is a difference of
/// streams groups.
fn in_order(mut answer: Value) -> Value {
    let groups = answer.get_mut("groups").and_then(Value::as_array_mut);
    for group in groups.into_iter().flatten() {
        if let Some(members) = group["members"].as_array_mut() {
            members.sort_by_key(|m| m["memberId"].as_str().map(str::to_owned));
        }
        for topic in group["topics"].as_array_mut().into_iter().flatten() {
            if let Some(partitions) = topic["partitions"].as_array_mut() {
                partitions.sort_by_key(|p| p["partitionIndex"].as_i64());
            }
        }
    }
    answer
}

/// The script: every answer, labelled.
fn script(bootstrap: &str) -> Vec<(String, Value)> {
    let mut s = Session::connect(bootstrap, "streams-script");
    let mut out: Vec<(String, Value)> = Vec::new();
    let mut record = |label: &str, answer: Value| out.push((label.to_owned(), answer));
    let created = s.json(
        ApiKey::CreateTopics,
        &json!({"topics": [
            {"name": "sg-in-a", "numPartitions": 3, "replicationFactor": 1, "assignments": [], "configs": []},
            {"name": "sg-in-b", "numPartitions": 2, "replicationFactor": 1, "assignments": [], "configs": []}],
            "timeoutMs": 5000}),
    );
    assert!(
        created["topics"]
            .as_array()
            .is_some_and(|t| t.iter().all(|t| t["errorCode"] == 0)),
        "{created}"
    );
    wait_for(&mut s, &["sg-in-a", "sg-in-b"]);
    // As a client does, until the group coordinator is there and loaded
    // (Kafka creates __consumer_offsets on the first FindCoordinator).
    s.json_until(
        ApiKey::FindCoordinator,
        &json!({"keyType": 0, "coordinatorKeys": ["sg-a"]}),
        |answer| answer["coordinators"][0]["errorCode"] == 0,
    );
    s.json_until(
        ApiKey::StreamsGroupDescribe,
        &json!({"groupIds": ["sg-warm-up"]}),
        |answer| !matches!(answer["groups"][0]["errorCode"].as_i64(), Some(14..=16)),
    );
    let hb = ApiKey::StreamsGroupHeartbeat;
    let simple = json!({"epoch": 0, "subtopologies": [subtopology("0", &["sg-in-a"], &[], &[], &[], json!([]))]});

    // Requests refused before the coordinator looks at the group.
    record("unknown group", s.json(hb, &beat("sg-none", "m1", 5, None)));
    let mut empty_member = join("sg-e", "", "p1", simple.clone());
    record("empty member id", s.json(hb, &empty_member));
    empty_member["memberId"] = json!("m1");
    empty_member["topology"] = Value::Null;
    record("join without topology", s.json(hb, &empty_member));
    let mut with_tasks = join("sg-e", "m1", "p1", simple.clone());
    with_tasks["activeTasks"] = json!([{"subtopologyId": "0", "partitions": [0]}]);
    record("join with tasks", s.json(hb, &with_tasks));
    let mut no_timeout = join("sg-e", "m1", "p1", simple.clone());
    no_timeout["rebalanceTimeoutMs"] = json!(-1);
    record("join without rebalance timeout", s.json(hb, &no_timeout));
    let mut changelog = join(
        "sg-e",
        "m1",
        "p1",
        json!({"epoch": 0, "subtopologies": [subtopology("0", &["sg-in-a"], &["sg-e-log"], &[], &[], json!([]))]}),
    );
    changelog["topology"]["subtopologies"][0]["stateChangelogTopics"][0]["partitions"] = json!(4);
    record("changelog with partitions", s.json(hb, &changelog));
    record("epoch -3", s.json(hb, &beat("sg-e", "m1", -3, None)));
    record(
        "static leave without instance",
        s.json(hb, &beat("sg-e", "m1", -2, None)),
    );
    let mut topology_later = beat("sg-e", "m1", 3, None);
    topology_later["topology"] = simple.clone();
    record("topology on a heartbeat", s.json(hb, &topology_later));
    let mut partial = beat("sg-e", "m1", 3, None);
    partial["activeTasks"] = json!([]);
    record("active tasks alone", s.json(hb, &partial));
    record(
        "internal topic in the topology",
        s.json(hb, &join("sg-e", "m1", "p1", json!({"epoch": 0, "subtopologies": [subtopology("0", &["__consumer_offsets", "sg-in-a"], &[], &[], &[], json!([]))]}))),
    );
    record(
        "invalid topic names",
        s.json(hb, &join("sg-e", "m1", "p1", json!({"epoch": 0, "subtopologies": [subtopology("0", &["bad name", "sg-in-a", "b@d"], &[], &[], &[], json!([]))]}))),
    );
    let mut regex = join("sg-e", "m1", "p1", simple.clone());
    regex["topology"]["subtopologies"][0]["sourceTopicRegex"] = json!(["sg-.*"]);
    record("source topic pattern", s.json(hb, &regex));

    // A group whose internal topics the broker creates, two members
    // reconciling, offsets checked against their tasks.
    let topology = json!({"epoch": 0, "subtopologies": [
        subtopology("0", &["sg-in-a"], &["sg-a-store-changelog"], &["sg-a-rep"], &[], json!([])),
        subtopology("1", &[], &["sg-a-agg-changelog"], &[], &["sg-a-rep"], json!([])),
    ]});
    record(
        "m1 joins, internal topics missing",
        s.json(hb, &join("sg-a", "m1", "p1", topology.clone())),
    );
    record(
        "describe, not ready",
        s.json(ApiKey::StreamsGroupDescribe, &json!({"groupIds": ["sg-a"]})),
    );
    wait_for(
        &mut s,
        &["sg-a-rep", "sg-a-store-changelog", "sg-a-agg-changelog"],
    );
    // Until the coordinator has seen the topics too (Kafka's learns of
    // them from the metadata a moment later): a heartbeat that changes
    // nothing changes nothing on either side.
    let m1 = s.json_until(hb, &beat("sg-a", "m1", 2, Some(json!([]))), |answer| {
        let statuses = answer["status"].as_array().cloned().unwrap_or_default();
        statuses.iter().all(|s| s["statusCode"] != 3)
    });
    let m1_tasks = m1["activeTasks"].clone();
    record("m1, topics ready", m1);
    let m2 = s.json(hb, &join("sg-a", "m2", "p2", topology.clone()));
    record("m2 joins", m2);
    let m1 = s.json(hb, &beat("sg-a", "m1", 3, Some(owned(&m1_tasks))));
    let m1_kept = m1["activeTasks"].clone();
    record("m1 asked to give tasks up", m1);
    record(
        "m1 gave them up",
        s.json(hb, &beat("sg-a", "m1", 3, Some(owned(&m1_kept)))),
    );
    record(
        "m2 takes them",
        s.json(hb, &beat("sg-a", "m2", 4, Some(json!([])))),
    );
    let stable = s.json(
        ApiKey::StreamsGroupDescribe,
        &json!({"groupIds": ["sg-a", "sg-none"]}),
    );
    // Two processes and stateful subtopologies: the comparison covers
    // standby tasks.
    let standbys = stable["groups"][0]["members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| {
            m["assignment"]["standbyTasks"]
                .as_array()
                .is_some_and(|t| !t.is_empty())
        })
        .count();
    assert_eq!(standbys, 2, "{stable}");
    record("describe, stable", stable);
    let at =
        |version: i16, s: &mut Session, api: ApiKey, body: &Value| s.json_at(api, version, body);
    record(
        "commit at the epoch",
        at(
            9,
            &mut s,
            ApiKey::OffsetCommit,
            &commit("sg-a", "m1", 4, "sg-in-a", &[0, 1, 2]),
        ),
    );
    record(
        "commit at an older epoch",
        at(
            9,
            &mut s,
            ApiKey::OffsetCommit,
            &commit("sg-a", "m1", 3, "sg-in-a", &[0, 1, 2]),
        ),
    );
    record(
        "commit at a newer epoch",
        at(
            9,
            &mut s,
            ApiKey::OffsetCommit,
            &commit("sg-a", "m2", 9, "sg-in-a", &[0]),
        ),
    );
    record(
        "commit of an unknown member",
        at(
            9,
            &mut s,
            ApiKey::OffsetCommit,
            &commit("sg-a", "mX", 4, "sg-in-a", &[0]),
        ),
    );
    record(
        "commit of a member below v9",
        at(
            8,
            &mut s,
            ApiKey::OffsetCommit,
            &commit("sg-a", "m1", 4, "sg-in-a", &[0]),
        ),
    );
    record(
        "commit of no member",
        at(
            9,
            &mut s,
            ApiKey::OffsetCommit,
            &commit("sg-a", "", -1, "sg-in-a", &[0]),
        ),
    );
    record(
        "fetch at the epoch",
        at(
            9,
            &mut s,
            ApiKey::OffsetFetch,
            &fetch("sg-a", json!("m1"), 4),
        ),
    );
    record(
        "fetch at another epoch",
        at(
            9,
            &mut s,
            ApiKey::OffsetFetch,
            &fetch("sg-a", json!("m1"), 2),
        ),
    );
    record(
        "fetch of an unknown member",
        at(
            9,
            &mut s,
            ApiKey::OffsetFetch,
            &fetch("sg-a", json!("mX"), 4),
        ),
    );
    record(
        "fetch of no member",
        at(
            9,
            &mut s,
            ApiKey::OffsetFetch,
            &fetch("sg-a", Value::Null, -1),
        ),
    );
    let listed = s.json(
        ApiKey::ListGroups,
        &json!({"statesFilter": [], "typesFilter": ["streams"]}),
    );
    let mut ours: Vec<Value> = listed["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|g| {
            g["groupId"]
                .as_str()
                .is_some_and(|id| id.starts_with("sg-"))
        })
        .cloned()
        .collect();
    ours.sort_by_key(|g| g["groupId"].to_string());
    record("list streams groups", json!(ours));
    let stable = s.json(
        ApiKey::ListGroups,
        &json!({"statesFilter": ["Stable"], "typesFilter": []}),
    );
    record("list stable groups", stable["groups"].clone());
    record(
        "describe as a classic group",
        s.json(ApiKey::DescribeGroups, &json!({"groups": ["sg-a"]})),
    );
    record(
        "consumer heartbeat to a streams group",
        s.json(ApiKey::ConsumerGroupHeartbeat, &json!({"groupId": "sg-a", "memberId": "abcdefghijklmnopqrstuv", "memberEpoch": 0,
            "rebalanceTimeoutMs": 30000, "subscribedTopicNames": ["sg-in-a"], "topicPartitions": []})),
    );
    record(
        "classic join to a streams group",
        s.json(ApiKey::JoinGroup, &json!({"groupId": "sg-a", "sessionTimeoutMs": 30000, "rebalanceTimeoutMs": 30000,
            "memberId": "", "protocolType": "consumer", "protocols": [{"name": "range", "metadata": ""}]})),
    );
    record(
        "topology description update",
        s.json(
            ApiKey::StreamsGroupTopologyDescriptionUpdate,
            &json!({"groupId": "sg-a", "memberId": "m1", "topologyEpoch": 0,
                    "topologyDescription": {"subtopologies": [], "globalStores": []}}),
        ),
    );
    record(
        "delete a group with members",
        s.json(ApiKey::DeleteGroups, &json!({"groupsNames": ["sg-a"]})),
    );
    let other = json!({"epoch": 0, "subtopologies": [subtopology("0", &["sg-in-b"], &[], &[], &[], json!([]))]});
    record(
        "another topology",
        s.json(hb, &join("sg-a", "m3", "p3", other)),
    );
    record("unknown member", s.json(hb, &beat("sg-a", "mX", 4, None)));
    record("a greater epoch", s.json(hb, &beat("sg-a", "m1", 9, None)));
    record("a smaller epoch", s.json(hb, &beat("sg-a", "m1", 1, None)));
    let mut unknown_task = beat("sg-a", "m2", 4, None);
    unknown_task["activeTasks"] = json!([{"subtopologyId": "9", "partitions": [0]}]);
    unknown_task["standbyTasks"] = json!([]);
    unknown_task["warmupTasks"] = json!([]);
    record("a task of no subtopology", s.json(hb, &unknown_task));
    unknown_task["activeTasks"] = json!([{"subtopologyId": "1", "partitions": [3]}]);
    record("a task past the partitions", s.json(hb, &unknown_task));
    record("m1 leaves", s.json(hb, &beat("sg-a", "m1", -1, None)));
    record("m2 leaves", s.json(hb, &beat("sg-a", "m2", -1, None)));
    record(
        "describe, empty",
        s.json(ApiKey::StreamsGroupDescribe, &json!({"groupIds": ["sg-a"]})),
    );
    record(
        "delete the empty group",
        s.json(ApiKey::DeleteGroups, &json!({"groupsNames": ["sg-a"]})),
    );
    record(
        "describe, deleted",
        s.json(ApiKey::StreamsGroupDescribe, &json!({"groupIds": ["sg-a"]})),
    );

    // Statuses of topologies the topics do not fit.
    let copartitioned = json!({"epoch": 0, "subtopologies": [subtopology("0", &["sg-in-a", "sg-in-b"], &[], &[], &[],
        json!([{"sourceTopics": [0, 1], "sourceTopicRegex": [], "repartitionSourceTopics": []}]))]});
    record(
        "co-partitioned topics that differ",
        s.json(hb, &join("sg-b", "m1", "p1", copartitioned)),
    );
    record("sg-b m1 leaves", s.json(hb, &beat("sg-b", "m1", -1, None)));
    let missing = json!({"epoch": 0, "subtopologies": [subtopology("0", &["sg-missing", "sg-in-a"], &[], &[], &[], json!([]))]});
    record(
        "a missing source topic",
        s.json(hb, &join("sg-c", "m1", "p1", missing)),
    );
    record("sg-c m1 leaves", s.json(hb, &beat("sg-c", "m1", -1, None)));
    let mut newer = simple.clone();
    newer["epoch"] = json!(1);
    record(
        "a topology of epoch 1",
        s.json(hb, &join("sg-d", "m1", "p1", newer)),
    );
    record(
        "a member with the older topology",
        s.json(hb, &join("sg-d", "m2", "p2", simple.clone())),
    );
    record("sg-d m1 leaves", s.json(hb, &beat("sg-d", "m1", -1, None)));
    record("sg-d m2 leaves", s.json(hb, &beat("sg-d", "m2", -1, None)));
    out
}

/// Every path where two answers differ.
fn differences(path: &str, kafka: &Value, fake: &Value, found: &mut Vec<String>) {
    match (kafka, fake) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                differences(
                    &format!("{path}.{key}"),
                    &a[key],
                    b.get(key).unwrap_or(&Value::Null),
                    found,
                );
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(&format!("{path}[{i}]"), x, y, found);
            }
        }
        _ if kafka == fake => {}
        _ => found.push(format!("{path}: kafka {kafka}, fake {fake}")),
    }
}

#[test]
fn streams_groups_and_the_streams_application_on_kafka_as_on_the_fake() {
    let _one = one_at_a_time();
    if app().is_none() {
        return;
    }
    let options = kafka_options();
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let Some(kafka) = Kafka::start("streams-app", &pinned_version(), &options) else {
        return;
    };
    let started = Instant::now();
    let on_kafka = script(kafka.bootstrap());
    let on_fake = {
        let fake = fake(1);
        let bootstrap = fake.cluster.bootstrap();
        std::thread::scope(|scope| {
            scope
                .spawn(|| script(&bootstrap))
                .join()
                .unwrap_or_else(|_| panic!("the script against the fake panicked"))
        })
    };
    let mut differ = Vec::new();
    for ((label, kafka), (_, fake)) in on_kafka.iter().zip(&on_fake) {
        let mut found = Vec::new();
        differences(
            "",
            &in_order(kafka.clone()),
            &in_order(fake.clone()),
            &mut found,
        );
        if !found.is_empty() {
            differ.push(format!("{label}:\n  {}", found.join("\n  ")));
        }
    }
    say(&format!(
        "streams groups: {} exchanges beside Kafka; same {}; differ {} ({:.1} s)",
        on_kafka.len(),
        on_kafka.len() - differ.len(),
        differ.len(),
        started.elapsed().as_secs_f64()
    ));
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    application("kafka", kafka.bootstrap());
}
