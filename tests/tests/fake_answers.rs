//! The fake's answers beside Kafka 4.4.0's, field by field, where outside
//! client suites found them to differ: the same requests, written once as
//! JSON, go to a one-broker fake (in this process) and to one real broker
//! (`tests/kafka/broker.sh`), and what each answered, with the node id and
//! addresses of each side written as `N` and `ADDRESS`, must be the same.
//!
//! - ApiVersions v3 and v4: the supported features Kafka lists at each
//!   (kafka-clients before 3.9 refuse a supported range that starts at 0,
//!   which Kafka leaves out below v4) and the finalized ones.
//! - Fetch: a fetch with no partition to read (sessionless, a new session
//!   that names none, a consumer's closing fetch) is answered at once, a
//!   fetch session holding a partition with no data waits its max_wait.
//! - CreateTopics with replica assignments (on the broker's own id, and
//!   the ways Kafka refuses them).
//! - DescribeConfigs v4 with synonyms: a fresh topic, the
//!   broker (all but the settings broker.sh gives the node), the
//!   cluster-wide defaults and a group; AlterConfigs and
//!   IncrementalAlterConfigs of a topic and the broker, and the values Kafka
//!   refuses, with its messages.
//! - FindCoordinator's error message below v4, the group apis (JoinGroup,
//!   Heartbeat, SyncGroup, LeaveGroup) with the empty group id, and
//!   ListPartitionReassignments' answer.
//!
//! Without Java (or the broker's jars) the fake's side runs alone and the
//! comparison skips with a message, a failure under
//! `KAFKA_WIRE_REQUIRE_JAVA`.

use std::time::{Duration, Instant};

use kafka_wire::ApiKey;
use kafka_wire_fake::FakeCluster;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::broker::Session;
use serde_json::{json, Value};

/// How long the fetches that may wait are let wait.
const MAX_WAIT_MS: i64 = 3000;

/// The config sources of a broker's start-up settings, which broker.sh and
/// the fake set differently (ports, directories, node ids).
const STATIC_BROKER_CONFIG: i64 = 4;

/// What one side answered, by check, in the order of the checks.
type Seen = Vec<(&'static str, Value)>;

/// `value` with the side's address written `ADDRESS`.
fn normal(value: &Value, address: &str) -> Value {
    let text = value.to_string().replace(address, "ADDRESS");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// `text` with node id `node` written `N` where a message names the
/// broker (`broker 1,`, `the broker 1 more`).
fn without_id(text: &str, node: i64) -> String {
    text.replace(&format!("broker {node},"), "broker N,")
        .replace(&format!("broker {node} "), "broker N ")
}

fn features(answer: &Value) -> Value {
    json!({
        "supported": answer["supportedFeatures"],
        "finalized": answer["finalizedFeatures"],
    })
}

/// An empty Fetch of the session (`id`, `epoch`) with `topics`: whether it
/// was answered before half its max_wait, and its error code.
fn timed_fetch(session: &mut Session, id: i64, epoch: i64, topics: Value) -> (bool, Value) {
    let started = Instant::now();
    let answer = session.json(
        ApiKey::Fetch,
        &json!({
            "replicaId": -1, "maxWaitMs": MAX_WAIT_MS, "minBytes": 1, "maxBytes": 1 << 20,
            "isolationLevel": 0, "sessionId": id, "sessionEpoch": epoch,
            "topics": topics, "forgottenTopicsData": [], "rackId": ""
        }),
    );
    let prompt = started.elapsed() < Duration::from_millis((MAX_WAIT_MS / 2) as u64);
    (prompt, answer)
}

fn describe(session: &mut Session, resources: Value) -> Value {
    session.json_at(
        ApiKey::DescribeConfigs,
        4,
        &json!({"resources": resources, "includeSynonyms": true, "includeDocumentation": false}),
    )
}

/// Two sides' described broker configs, less the start-up settings of
/// either (broker.sh's and the fake's own: ports, directories, node ids,
/// internal topics' sizes) and the synonyms that stand for them.
fn without_static(kafka: &Value, fake: &Value) -> (Value, Value) {
    let configs = |side: &Value| side[1].as_array().cloned().unwrap_or_default();
    let statics: Vec<Value> = configs(kafka)
        .into_iter()
        .chain(configs(fake))
        .filter(|c| c["configSource"] == STATIC_BROKER_CONFIG)
        .map(|c| c["name"].clone())
        .collect();
    let kept = |side: &Value| -> Value {
        let kept: Vec<Value> = configs(side)
            .into_iter()
            .filter(|c| !statics.contains(&c["name"]))
            .collect();
        json!([side[0], kept])
    };
    (kept(kafka), kept(fake))
}

/// Where two answers first differ: a JSON path and the two values there.
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .find_map(|(k, v)| {
                first_difference(&format!("{path}.{k}"), v, y.get(k).unwrap_or(&Value::Null))
            })
            .or_else(|| {
                (x.len() != y.len()).then(|| {
                    format!(
                        "{path}: keys {:?} / {:?}",
                        x.keys().collect::<Vec<_>>(),
                        y.keys().collect::<Vec<_>>()
                    )
                })
            }),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(&format!("{path}[{i}]"), v, w))
            .or_else(|| {
                (x.len() != y.len()).then(|| format!("{path}: {} / {} items", x.len(), y.len()))
            }),
        _ => (a != b).then(|| format!("{path}: {a} / {b}")),
    }
}

/// One config of a described resource.
fn entry<'a>(answer: &'a Value, name: &str) -> &'a Value {
    answer["results"][0]["configs"]
        .as_array()
        .and_then(|configs| configs.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

/// The error code and message of the first resource or topic of `list`,
/// the node id `node` written `N` in the message.
fn outcome(answer: &Value, list: &str, node: i64) -> Value {
    let r = &answer[list][0];
    let message = r["errorMessage"].as_str().map(|m| without_id(m, node));
    json!([r["errorCode"], message])
}

/// Every check against the broker at `bootstrap`.
fn run(bootstrap: &str) -> Seen {
    let mut seen = Seen::new();
    let mut s = Session::connect(bootstrap, "fake-answers");
    let metadata = s.json(ApiKey::Metadata, &json!({"topics": null}));
    let node = metadata["brokers"][0]["nodeId"].as_i64().unwrap_or(-1);
    let address = format!(
        "{}:{}",
        metadata["brokers"][0]["host"].as_str().unwrap_or(""),
        metadata["brokers"][0]["port"]
    );
    let mut note = |name: &'static str, value: Value| seen.push((name, normal(&value, &address)));

    for version in [3, 4] {
        let answer = s.json_at(
            ApiKey::ApiVersions,
            version,
            &json!({"clientSoftwareName": "apache-kafka-java", "clientSoftwareVersion": "3.5.0"}),
        );
        note(
            if version == 3 {
                "ApiVersions v3 features"
            } else {
                "ApiVersions v4 features"
            },
            features(&answer),
        );
    }

    // Topics created with replica assignments, and refused ones.
    let create = |name: &str, assignments: Value, partitions: i64, replication: i64| {
        json!({"topics": [{"name": name, "numPartitions": partitions, "replicationFactor": replication,
                           "assignments": assignments, "configs": []}],
               "timeoutMs": 30000, "validateOnly": false})
    };
    let on = |partitions: &[i64], brokers: Value| -> Value {
        Value::Array(
            partitions
                .iter()
                .map(|p| json!({"partitionIndex": p, "brokerIds": brokers}))
                .collect(),
        )
    };
    let created = s.json(
        ApiKey::CreateTopics,
        &create("assigned", on(&[0, 1, 2], json!([node])), -1, -1),
    );
    let t = &created["topics"][0];
    note(
        "CreateTopics assigned to N",
        json!([t["errorCode"], t["numPartitions"], t["replicationFactor"]]),
    );
    let refused = [
        (
            "CreateTopics on an unknown broker",
            on(&[0], json!([999])),
            -1,
            -1,
        ),
        (
            "CreateTopics on a broker twice",
            on(&[0], json!([node, node])),
            -1,
            -1,
        ),
        (
            "CreateTopics with an empty list",
            on(&[0], json!([])),
            -1,
            -1,
        ),
        (
            "CreateTopics with a gap",
            on(&[0, 2], json!([node])),
            -1,
            -1,
        ),
        (
            "CreateTopics with a partition twice",
            on(&[0, 0], json!([node])),
            -1,
            -1,
        ),
        (
            "CreateTopics assigned with a factor",
            on(&[0], json!([node])),
            -1,
            1,
        ),
        (
            "CreateTopics assigned with a count",
            on(&[0], json!([node])),
            1,
            -1,
        ),
    ];
    for (case, assignments, partitions, replication) in refused {
        let answer = s.json(
            ApiKey::CreateTopics,
            &create("refused", assignments, partitions, replication),
        );
        note(case, outcome(&answer, "topics", node));
    }
    let led = |m: &Value| {
        m["topics"][0]["partitions"]
            .as_array()
            .is_some_and(|p| p.len() == 3 && p.iter().all(|p| p["leaderId"].as_i64() == Some(node)))
    };
    let assigned = s.json_until(
        ApiKey::Metadata,
        &json!({"topics": [{"name": "assigned", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}]}),
        led,
    );
    let partitions: Vec<Value> = assigned["topics"][0]["partitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let on_node = |ids: &Value| *ids == json!([node]);
            json!([
                p["partitionIndex"],
                p["leaderId"] == node,
                on_node(&p["replicaNodes"]),
                on_node(&p["isrNodes"])
            ])
        })
        .collect();
    note("Metadata of the assigned topic", Value::Array(partitions));
    let topic_id = assigned["topics"][0]["topicId"].clone();

    // Fetches with nothing to read, and one that must wait.
    let (prompt, _) = timed_fetch(&mut s, 0, -1, json!([]));
    note(
        "Fetch sessionless with no partition: answered at once",
        json!(prompt),
    );
    let (prompt, answer) = timed_fetch(&mut s, 0, 0, json!([]));
    note(
        "Fetch opening a session with no partition: answered at once",
        json!(prompt),
    );
    let empty_session = answer["sessionId"].clone();
    let (prompt, _) = timed_fetch(&mut s, empty_session.as_i64().unwrap_or(0), 1, json!([]));
    note(
        "Fetch of a session holding no partition: answered at once",
        json!(prompt),
    );
    let partition = json!([{"topicId": topic_id, "topic": "assigned", "partitions": [{
        "partition": 0, "currentLeaderEpoch": -1, "fetchOffset": 0, "lastFetchedEpoch": -1,
        "logStartOffset": -1, "partitionMaxBytes": 1 << 20}]}]);
    // Until the partition is readable there (Kafka's leader may lag its
    // metadata): an error is answered at once.
    s.json_until(
        ApiKey::Fetch,
        &json!({"maxWaitMs": 0, "minBytes": 1, "maxBytes": 1 << 20, "isolationLevel": 0,
                "sessionId": 0, "sessionEpoch": -1, "topics": partition.clone(),
                "forgottenTopicsData": [], "rackId": ""}),
        |a| a["responses"][0]["partitions"][0]["errorCode"] == 0,
    );
    let (prompt, answer) = timed_fetch(&mut s, 0, 0, partition);
    note(
        "Fetch opening a session on an empty partition: answered at once",
        json!(prompt),
    );
    let id = answer["sessionId"].as_i64().unwrap_or(0);
    let (prompt, _) = timed_fetch(&mut s, id, 1, json!([]));
    note(
        "Fetch of a session holding an empty partition: answered at once",
        json!(prompt),
    );
    let (prompt, _) = timed_fetch(&mut s, id, -1, json!([]));
    note("Fetch closing a session: answered at once", json!(prompt));

    // Configs.
    let fresh = s.json(ApiKey::CreateTopics, &create("fresh", json!([]), 1, 1));
    note("CreateTopics fresh", outcome(&fresh, "topics", node));
    let topic = describe(
        &mut s,
        json!([{"resourceType": 2, "resourceName": "fresh", "configurationKeys": null}]),
    );
    note("DescribeConfigs of a fresh topic", topic["results"].clone());
    let broker = describe(
        &mut s,
        json!([{"resourceType": 4, "resourceName": node.to_string(), "configurationKeys": null}]),
    );
    let r = &broker["results"][0];
    note(
        "DescribeConfigs of the broker",
        json!([r["errorCode"], r["configs"]]),
    );
    let named = |m: &Value| -> Vec<Value> {
        m["results"][0]["configs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["configSource"] == STATIC_BROKER_CONFIG)
            .map(|c| c["name"].clone())
            .collect()
    };
    note(
        "DescribeConfigs of the broker: set at start",
        json!(named(&broker).contains(&json!("node.id"))),
    );
    let cluster = describe(
        &mut s,
        json!([{"resourceType": 4, "resourceName": "", "configurationKeys": null}]),
    );
    note(
        "DescribeConfigs of the cluster-wide defaults",
        cluster["results"].clone(),
    );
    let group = describe(
        &mut s,
        json!([{"resourceType": 32, "resourceName": "never-seen", "configurationKeys": null}]),
    );
    note("DescribeConfigs of a group", group["results"].clone());

    let alter = |resource_type: i64, name: &str, configs: Value, validate: bool| {
        json!({"resources": [{"resourceType": resource_type, "resourceName": name, "configs": configs}],
               "validateOnly": validate})
    };
    let refused_topic_values = [
        ("max.message.bytes", "abc"),
        ("nope", "1"),
        ("cleanup.policy", "foo"),
        ("min.insync.replicas", "0"),
        ("segment.bytes", "10"),
        ("unclean.leader.election.enable", "yes"),
        ("message.timestamp.type", "Sometime"),
        ("compression.type", "brotli"),
        ("retention.ms", "-5"),
        ("min.cleanable.dirty.ratio", "2"),
    ];
    for (name, value) in refused_topic_values {
        let answer = s.json(
            ApiKey::AlterConfigs,
            &alter(2, "fresh", json!([{"name": name, "value": value}]), true),
        );
        note(
            "AlterConfigs of a topic, refused",
            json!([name, value, outcome(&answer, "responses", node)]),
        );
    }
    for (name, value) in [
        ("node.id", "5"),
        ("log.flush.interval.messages", "abc"),
        ("unknown.thing", "1"),
    ] {
        let answer = s.json(
            ApiKey::AlterConfigs,
            &alter(
                4,
                &node.to_string(),
                json!([{"name": name, "value": value}]),
                true,
            ),
        );
        note(
            "AlterConfigs of the broker, checked",
            json!([name, value, outcome(&answer, "responses", node)]),
        );
    }
    // rust-rdkafka's test_configs: set, read back as the broker's own.
    let set = s.json(
        ApiKey::AlterConfigs,
        &alter(
            4,
            &node.to_string(),
            json!([{"name": "log.flush.interval.messages", "value": "1234"}]),
            false,
        ),
    );
    note(
        "AlterConfigs of the broker",
        outcome(&set, "responses", node),
    );
    let keys = json!([{"resourceType": 4, "resourceName": node.to_string(), "configurationKeys": ["log.flush.interval.messages"]}]);
    let read = s.json_until(
        ApiKey::DescribeConfigs,
        &json!({"resources": keys, "includeSynonyms": true}),
        |a| entry(a, "log.flush.interval.messages")["value"] == "1234",
    );
    note(
        "DescribeConfigs of the broker after AlterConfigs",
        entry(&read, "log.flush.interval.messages").clone(),
    );
    let incremental = s.json(
        ApiKey::IncrementalAlterConfigs,
        &json!({"resources": [{"resourceType": 2, "resourceName": "fresh", "configs": [
            {"name": "retention.ms", "configOperation": 0, "value": "86400000"},
            {"name": "max.message.bytes", "configOperation": 0, "value": "1234"}]}],
            "validateOnly": false}),
    );
    note(
        "IncrementalAlterConfigs of a topic",
        outcome(&incremental, "responses", node),
    );
    let keys = json!([{"resourceType": 2, "resourceName": "fresh", "configurationKeys": ["retention.ms", "max.message.bytes"]}]);
    let read = s.json_until(
        ApiKey::DescribeConfigs,
        &json!({"resources": keys, "includeSynonyms": true}),
        |a| entry(a, "retention.ms")["value"] == "86400000",
    );
    note(
        "DescribeConfigs of the topic after IncrementalAlterConfigs",
        read["results"].clone(),
    );
    // APPEND and SUBTRACT: list configs only.
    let op = |name: &str, operation: i64, value: &str| {
        json!({"resources": [{"resourceType": 2, "resourceName": "fresh", "configs": [
            {"name": name, "configOperation": operation, "value": value}]}], "validateOnly": false})
    };
    for (name, operation, value, expected) in [
        ("cleanup.policy", 2, "compact", "delete,compact"),
        ("cleanup.policy", 3, "delete", "compact"),
        ("retention.ms", 2, "5", "86400000"),
    ] {
        let answer = s.json(ApiKey::IncrementalAlterConfigs, &op(name, operation, value));
        note(
            "IncrementalAlterConfigs APPEND or SUBTRACT",
            json!([name, operation, outcome(&answer, "responses", node)]),
        );
        let keys =
            json!([{"resourceType": 2, "resourceName": "fresh", "configurationKeys": [name]}]);
        let read = s.json_until(ApiKey::DescribeConfigs, &json!({"resources": keys}), |a| {
            entry(a, name)["value"] == expected
        });
        note(
            "DescribeConfigs after APPEND or SUBTRACT",
            entry(&read, name).clone(),
        );
    }

    // FindCoordinator's error message below v4 (a whole answer but the
    // coordinator's id and address, which differ by side).
    for key in ["", "answers-group"] {
        let answer = s.json_until(
            ApiKey::FindCoordinator,
            &json!({"key": key, "keyType": 0, "coordinatorKeys": [key]}),
            |a| a["coordinators"][0]["errorCode"] != 15,
        );
        let found = &answer["coordinators"][0];
        note(
            "FindCoordinator v6 of a group",
            json!([found["key"], found["errorCode"], found["errorMessage"]]),
        );
        for version in [1, 3] {
            let answer = s.json_at(
                ApiKey::FindCoordinator,
                version,
                &json!({"key": key, "keyType": 0}),
            );
            note(
                "FindCoordinator v1 and v3 of a group",
                json!([answer["errorCode"], answer["errorMessage"]]),
            );
        }
    }
    // The group apis with the empty group id, whole answers: the group id
    // is checked first (JoinGroup's session timeout after it), but a
    // SyncGroup from v5 must name its protocol type and name before that.
    let empty = |name: &str| -> Value {
        match name {
            "join" => json!({"groupId": "", "sessionTimeoutMs": 0, "rebalanceTimeoutMs": -1,
                             "memberId": "", "groupInstanceId": null, "protocolType": "",
                             "protocols": [], "reason": null}),
            "heartbeat" => json!({"groupId": "", "generationId": 0, "memberId": "",
                                  "groupInstanceId": null}),
            "sync" => json!({"groupId": "", "generationId": 0, "memberId": "",
                             "groupInstanceId": null, "protocolType": null,
                             "protocolName": null, "assignments": []}),
            _ => json!({"groupId": "", "memberId": "", "members": []}),
        }
    };
    for version in [5, 7, 9] {
        note(
            "JoinGroup of the empty group",
            s.json_at(ApiKey::JoinGroup, version, &empty("join")),
        );
    }
    note(
        "Heartbeat of the empty group",
        s.json(ApiKey::Heartbeat, &empty("heartbeat")),
    );
    for version in [4, 5] {
        note(
            "SyncGroup of the empty group (v4, and v5 without its protocol)",
            s.json_at(ApiKey::SyncGroup, version, &empty("sync")),
        );
    }
    for version in [2, 3] {
        note(
            "LeaveGroup of the empty group",
            s.json_at(ApiKey::LeaveGroup, version, &empty("leave")),
        );
    }
    note(
        "ListPartitionReassignments of every topic",
        s.json(
            ApiKey::ListPartitionReassignments,
            &json!({"timeoutMs": 5000, "topics": null}),
        ),
    );
    seen
}

#[test]
fn the_fake_answers_as_kafka_does() {
    let _one = one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let fake = runtime
        .block_on(FakeCluster::builder().brokers(1).start())
        .unwrap_or_else(|e| panic!("the fake cluster: {e}"));
    let bootstrap = fake.bootstrap();
    let on_fake = std::thread::scope(|scope| {
        scope
            .spawn(|| run(&bootstrap))
            .join()
            .unwrap_or_else(|_| panic!("the checks against the fake panicked"))
    });
    runtime.block_on(async { fake.shutdown().await.ok() });
    // What the fake must answer, Kafka or not.
    let at = |name: &str| {
        on_fake
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        at("ApiVersions v3 features")["supported"],
        json!([{"name": "metadata.version", "minVersion": 7, "maxVersion": 33}])
    );
    for check in [
        "Fetch sessionless with no partition: answered at once",
        "Fetch of a session holding no partition: answered at once",
        "Fetch closing a session: answered at once",
    ] {
        assert_eq!(at(check), json!(true), "{check}");
    }
    assert_eq!(
        at("Fetch of a session holding an empty partition: answered at once"),
        json!(false)
    );
    assert_eq!(at("CreateTopics assigned to N"), json!([0, 3, 1]));
    assert_eq!(
        at("DescribeConfigs of a fresh topic")[0]["configs"]
            .as_array()
            .map(Vec::len),
        Some(37)
    );

    let Some(kafka) = Kafka::start("fake-answers", &pinned_version(), &[]) else {
        return;
    };
    let on_kafka = run(kafka.bootstrap());
    drop(kafka);
    let mut differ = Vec::new();
    for ((name, kafka), (_, fake)) in on_kafka.iter().zip(&on_fake) {
        let (kafka, fake) = if *name == "DescribeConfigs of the broker" {
            without_static(kafka, fake)
        } else {
            (kafka.clone(), fake.clone())
        };
        if let Some(where_) = first_difference("$", &kafka, &fake) {
            differ.push(format!("{name}: kafka / fake differ at {where_}"));
        }
    }
    let line = format!(
        "answers: {} checks; same {}; differ {}",
        on_kafka.len(),
        on_kafka.len() - differ.len(),
        differ.len()
    );
    kafka_wire_tests::clients::say(&line);
    assert!(differ.is_empty(), "{line}\n{}", differ.join("\n"));
}
