//! The fake's answers beside Kafka 4.4.0's, field by field, in three areas
//! where an outside client suite found them to differ: metadata (Metadata,
//! DescribeTopicPartitions, DescribeCluster, the authorized operations of
//! every describe), produce limits (sizes, timestamps, invalid batches,
//! acks, min.insync.replicas, internal topics) and share-group
//! administration (KIP-932's offsets admin, ListGroups, DescribeGroups,
//! DeleteGroups, ShareGroupDescribe, group configs).
//!
//! The same cases, each a sequence of requests written once as JSON, run
//! against a two-broker fake (in this process) and two real brokers
//! (`tests/kafka/broker.sh --brokers 2`), each request where a client would
//! send it. A case returns what it observed, with what the two sides may
//! differ in written the same way (node ids as their rank among the
//! brokers, topic ids and addresses as `ID` and `ADDRESS`, the replicas
//! Kafka places at random as counts), and the observations must be equal.
//! Prints `faithful: N cases; same S; differ D`.
//!
//! Skips Kafka's side without Java, Maven or the broker's jars in ~/.m2,
//! unless `KAFKA_WIRE_REQUIRE_JAVA` is set. `KAFKA_WIRE_FAITHFUL_KAFKA`
//! (the bootstrap address of a running Kafka 4.4.0 of two or more brokers)
//! uses that cluster instead of starting one, for working on the cases.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_wire::ApiKey;
use kafka_wire_fake::FakeCluster;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::broker::Session;
use serde_json::{json, Value};

/// The zero topic id: "no id" in requests.
const NO_ID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// A topic id no topic has.
const UNKNOWN_ID: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

/// One side (the fake or Kafka): a session per broker, opened when first
/// needed.
struct Target {
    /// Every broker's address, by node id (from Metadata).
    addresses: BTreeMap<i64, String>,
    sessions: BTreeMap<i64, Session>,
    /// A tag unique to this run, so that a reused Kafka (see the module)
    /// meets no topic or group of an earlier run.
    run: String,
}

impl Target {
    /// Node `id`'s session.
    fn node(&mut self, id: i64) -> &mut Session {
        let address = self
            .addresses
            .get(&id)
            .unwrap_or_else(|| panic!("no broker {id} in {:?}", self.addresses))
            .clone();
        self.sessions
            .entry(id)
            .or_insert_with(|| Session::connect(&address, "fake-faithful"))
    }

    /// The first broker's session.
    fn any(&mut self) -> &mut Session {
        let first = *self.addresses.keys().next().unwrap_or(&0);
        self.node(first)
    }

    /// A node id's rank among the brokers (0 for the lowest), so that the
    /// fake's ids (0, 1) and Kafka's (1, 2) read the same; -1 stays -1.
    fn rank(&self, id: &Value) -> Value {
        match id.as_i64() {
            Some(id) if id >= 0 => self
                .addresses
                .keys()
                .position(|&n| n == id)
                .map_or(json!(format!("unknown node {id}")), |rank| json!(rank)),
            _ => id.clone(),
        }
    }

    /// A name unique to this run.
    fn name(&self, base: &str) -> String {
        format!("{base}-{}", self.run)
    }

    /// The session of the coordinator of `key` (`key_type` 0 for a group,
    /// 1 for a transactional id), once it has one, as a client waits.
    fn coordinator(&mut self, key: &str, key_type: i8) -> &mut Session {
        let found = self.any().json_until(
            ApiKey::FindCoordinator,
            &json!({"key": key, "keyType": key_type, "coordinatorKeys": [key]}),
            |answer| answer["coordinators"][0]["errorCode"] == 0,
        );
        let id = found["coordinators"][0]["nodeId"]
            .as_i64()
            .unwrap_or_else(|| panic!("no coordinator: {found}"));
        self.node(id)
    }

    /// Creates `topic` (`partitions`, `replication`, `configs` as name to
    /// value) and waits until every broker knows it and its leaders serve
    /// it, as a client waits: the creation's error code.
    fn create(
        &mut self,
        topic: &str,
        partitions: i32,
        replication: i16,
        configs: &[(&str, &str)],
    ) -> Value {
        let configs: Vec<Value> = configs
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect();
        let created = self.any().json(
            ApiKey::CreateTopics,
            &json!({"topics": [{"name": topic, "numPartitions": partitions,
                                "replicationFactor": replication, "assignments": [],
                                "configs": configs}], "timeoutMs": 10000}),
        );
        let outcome = created["topics"][0]["errorCode"].clone();
        if created["topics"][0]["errorCode"] == 0 {
            self.ready(topic);
        }
        outcome
    }

    /// Waits until every broker describes `topic` with a leader for each
    /// partition, and each leader answers ListOffsets for it.
    fn ready(&mut self, topic: &str) {
        let ids: Vec<i64> = self.addresses.keys().copied().collect();
        let mut leaders = Vec::new();
        for id in ids {
            let metadata =
                self.node(id)
                    .json_until(ApiKey::Metadata, &metadata_of(&[topic]), |answer| {
                        let t = &answer["topics"][0];
                        t["errorCode"] == 0
                            && t["partitions"].as_array().is_some_and(|p| {
                                !p.is_empty() && p.iter().all(|p| p["leaderId"].as_i64() >= Some(0))
                            })
                    });
            leaders = metadata["topics"][0]["partitions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    (
                        p["partitionIndex"].as_i64().unwrap_or(0),
                        p["leaderId"].as_i64().unwrap_or(-1),
                    )
                })
                .collect();
        }
        for (partition, leader) in leaders {
            self.node(leader).json_until(
                ApiKey::ListOffsets,
                &json!({"replicaId": -1, "topics": [{"name": topic, "partitions": [
                    {"partitionIndex": partition, "currentLeaderEpoch": -1, "timestamp": -1,
                     "maxNumOffsets": 1}
                ]}]}),
                |answer| answer["topics"][0]["partitions"][0]["errorCode"] == 0,
            );
        }
    }

    /// `topic`'s id, from Metadata.
    fn topic_id(&mut self, topic: &str) -> Value {
        let metadata = self.any().json(ApiKey::Metadata, &metadata_of(&[topic]));
        metadata["topics"][0]["topicId"].clone()
    }
}

/// A Metadata request for `topics` by name, creating nothing.
fn metadata_of(topics: &[&str]) -> Value {
    let topics: Vec<Value> = topics
        .iter()
        .map(|t| json!({"name": t, "topicId": NO_ID}))
        .collect();
    json!({"topics": topics, "allowAutoTopicCreation": false})
}

/// A topic's answer in Metadata or DescribeTopicPartitions, written the
/// same on both sides: node ids as ranks, the topic id as `ID` (the zero
/// id as it is), each partition's replicas as counts with whether the
/// leader is among them.
fn topic_view(target: &Target, topic: &Value) -> Value {
    let mut view = topic.clone();
    if let Some(map) = view.as_object_mut() {
        if let Some(id) = map.get_mut("topicId") {
            if id != NO_ID && !id.is_null() {
                *id = json!("ID");
            }
        }
        if let Some(Value::Array(partitions)) = map.get_mut("partitions") {
            for p in partitions.iter_mut() {
                let leader = p["leaderId"].clone();
                let count = |key: &str| p[key].as_array().map(Vec::len);
                let replicas = p["replicaNodes"].as_array().cloned().unwrap_or_default();
                let summary = json!({
                    "leaderIsAReplica": replicas.contains(&leader),
                    "replicaNodes": count("replicaNodes"),
                    "isrNodes": count("isrNodes"),
                    "offlineReplicas": count("offlineReplicas"),
                    "eligibleLeaderReplicas": count("eligibleLeaderReplicas"),
                    "lastKnownElr": count("lastKnownElr"),
                });
                if let (Some(p), Some(summary)) = (p.as_object_mut(), summary.as_object()) {
                    p.insert("leaderId".into(), json!(leader.as_i64().map(|l| l >= 0)));
                    for (key, value) in summary {
                        if p.contains_key(key) || key == "leaderIsAReplica" {
                            p.insert(key.clone(), value.clone());
                        }
                    }
                }
            }
        }
    }
    let _ = target;
    view
}

/// A Metadata answer written the same on both sides: brokers as ranks and
/// whether each has an address, the cluster id and controller as whether
/// they are set, the topics by [`topic_view`].
fn metadata_view(target: &Target, answer: &Value) -> Value {
    let mut view = answer.clone();
    if let Some(map) = view.as_object_mut() {
        if let Some(Value::Array(brokers)) = map.get_mut("brokers") {
            for b in brokers.iter_mut() {
                *b = json!({"nodeId": target.rank(&b["nodeId"]), "rack": b["rack"],
                            "hasAddress": b["host"].as_str().is_some_and(|h| !h.is_empty())
                                && b["port"].as_i64() > Some(0)});
            }
        }
        if let Some(id) = map.get_mut("clusterId") {
            *id = json!(id.as_str().map(|_| "CLUSTER"));
        }
        if let Some(id) = map.get_mut("controllerId") {
            *id = json!(id
                .as_i64()
                .map(|c| c >= 0 && target.addresses.contains_key(&c)));
        }
        if let Some(Value::Array(topics)) = map.get_mut("topics") {
            for t in topics.iter_mut() {
                *t = topic_view(target, t);
            }
        }
    }
    view
}

/// Milliseconds since the epoch.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The cases: a name, and what a step sequence observed.
type Case = (&'static str, fn(&mut Target) -> Value);

const CASES: &[Case] = &[
    // ---- Metadata ----
    (
        "metadata: a topic with its authorized operations (v8+), at the highest version",
        |t| {
            let topic = t.name("meta-ops");
            let created = t.create(&topic, 3, 2, &[]);
            let answer = t.any().json(
                ApiKey::Metadata,
                &json!({"topics": [{"name": topic, "topicId": NO_ID}],
                        "allowAutoTopicCreation": false,
                        "includeTopicAuthorizedOperations": true}),
            );
            json!([created, metadata_view(t, &answer)["topics"]])
        },
    ),
    (
        "metadata v10: the cluster's and a topic's authorized operations",
        |t| {
            let topic = t.name("meta-ops");
            let answer = t.any().json_at(
                ApiKey::Metadata,
                10,
                &json!({"topics": [{"name": topic, "topicId": NO_ID}],
                        "allowAutoTopicCreation": false,
                        "includeClusterAuthorizedOperations": true,
                        "includeTopicAuthorizedOperations": true}),
            );
            let view = metadata_view(t, &answer);
            json!([view["clusterAuthorizedOperations"], view["topics"]])
        },
    ),
    (
        "metadata: authorized operations not asked for",
        |t| {
            let topic = t.name("meta-ops");
            let v10 = t.any().json_at(
                ApiKey::Metadata,
                10,
                &json!({"topics": [{"name": topic, "topicId": NO_ID}],
                        "allowAutoTopicCreation": false}),
            );
            let v13 = t.any().json(ApiKey::Metadata, &metadata_of(&[&topic]));
            json!([v10["clusterAuthorizedOperations"], v10["topics"][0]["topicAuthorizedOperations"],
                   v13["topics"][0]["topicAuthorizedOperations"], v13["errorCode"]])
        },
    ),
    (
        "metadata: unknown topics, v1 (which creates them), then v4, v9 and the highest without auto-creation, with operations asked",
        |t| {
            let name = t.name("meta-unknown");
            let mut seen = Vec::new();
            // Below v4 every request may create topics: a name of its own.
            let v1_name = t.name("meta-unknown-v1");
            let old = t
                .any()
                .json_at(ApiKey::Metadata, 1, &json!({"topics": [{"name": v1_name}]}));
            seen.push(metadata_view(t, &old)["topics"].clone());
            for version in [4, 9, 12, 13] {
                let answer = t.any().json_at(
                    ApiKey::Metadata,
                    version,
                    &json!({"topics": [{"name": name, "topicId": NO_ID}],
                            "allowAutoTopicCreation": false,
                            "includeTopicAuthorizedOperations": true}),
                );
                seen.push(metadata_view(t, &answer)["topics"].clone());
            }
            json!(seen)
        },
    ),
    (
        "metadata: an unknown topic auto-created (the first answer, then the next), at v4 and v12",
        |t| {
            let mut seen = Vec::new();
            for version in [4, 12] {
                let name = t.name(&format!("meta-auto-{version}"));
                let ask = json!({"topics": [{"name": name, "topicId": NO_ID}],
                                 "allowAutoTopicCreation": true});
                let first = t.any().json_at(ApiKey::Metadata, version, &ask);
                seen.push(metadata_view(t, &first)["topics"].clone());
                t.ready(&name);
                let next = t.any().json_at(ApiKey::Metadata, version, &ask);
                seen.push(metadata_view(t, &next)["topics"].clone());
            }
            json!(seen)
        },
    ),
    (
        "metadata: invalid topic names, with and without auto-creation",
        |t| {
            let mut seen = Vec::new();
            for allow in [false, true] {
                for name in ["bad name!", "..", &"x".repeat(250)] {
                    let answer = t.any().json(
                        ApiKey::Metadata,
                        &json!({"topics": [{"name": name, "topicId": NO_ID}],
                                "allowAutoTopicCreation": allow,
                                "includeTopicAuthorizedOperations": true}),
                    );
                    seen.push(metadata_view(t, &answer)["topics"].clone());
                }
            }
            json!(seen)
        },
    ),
    (
        "metadata: a topic asked twice, and known before unknown",
        |t| {
            let topic = t.name("meta-ops");
            let unknown = t.name("meta-nothing");
            let answer = t.any().json(
                ApiKey::Metadata,
                &metadata_of(&[&unknown, &topic, &topic]),
            );
            let names: Vec<Value> = answer["topics"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| json!([t["name"], t["errorCode"]]))
                .collect();
            json!(names)
        },
    ),
    (
        "metadata v12: topics by id (known, unknown, the zero id), names ignored once an id is given",
        |t| {
            let topic = t.name("meta-ops");
            let id = t.topic_id(&topic);
            let by_id = t.any().json_at(
                ApiKey::Metadata,
                12,
                &json!({"topics": [{"name": null, "topicId": UNKNOWN_ID},
                                   {"name": null, "topicId": id},
                                   {"name": null, "topicId": NO_ID}],
                        "allowAutoTopicCreation": false,
                        "includeTopicAuthorizedOperations": true}),
            );
            let mixed = t.any().json_at(
                ApiKey::Metadata,
                12,
                &json!({"topics": [{"name": "whatever", "topicId": UNKNOWN_ID},
                                   {"name": topic, "topicId": NO_ID}],
                        "allowAutoTopicCreation": true}),
            );
            json!([metadata_view(t, &by_id)["topics"], metadata_view(t, &mixed)["topics"]])
        },
    ),
    (
        "metadata v10 and v11: a topic id or a null name is an invalid request",
        |t| {
            let topic = t.name("meta-ops");
            let id = t.topic_id(&topic);
            let mut seen = Vec::new();
            for version in [10, 11] {
                for topics in [json!([{"name": topic, "topicId": id}]), json!([{"name": null, "topicId": NO_ID}])] {
                    let answer = t.any().json_at(
                        ApiKey::Metadata,
                        version,
                        &json!({"topics": topics, "allowAutoTopicCreation": false}),
                    );
                    seen.push(metadata_view(t, &answer));
                }
            }
            json!(seen)
        },
    ),
    (
        "metadata: brokers, cluster id and controller, at v0, v1 and the highest",
        |t| {
            let mut seen = Vec::new();
            for version in [0, 1, 13] {
                let answer = t.any().json_at(
                    ApiKey::Metadata,
                    version,
                    &json!({"topics": [], "allowAutoTopicCreation": false}),
                );
                let mut view = metadata_view(t, &answer);
                if let Some(map) = view.as_object_mut() {
                    // v0's empty list means every topic.
                    map.remove("topics");
                }
                seen.push(view);
            }
            json!(seen)
        },
    ),
    (
        "metadata: internal topics once the coordinators are used",
        |t| {
            let group = t.name("meta-group");
            let txn = t.name("meta-txn");
            t.coordinator(&group, 0);
            t.coordinator(&txn, 1);
            let internal = ["__consumer_offsets", "__transaction_state"];
            let answer = t.any().json(
                ApiKey::Metadata,
                &json!({"topics": [{"name": internal[0], "topicId": NO_ID},
                                   {"name": internal[1], "topicId": NO_ID}],
                        "allowAutoTopicCreation": false}),
            );
            let named: Vec<Value> = answer["topics"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| json!([t["name"], t["errorCode"], t["isInternal"]]))
                .collect();
            let all = t.any().json(ApiKey::Metadata, &json!({"topics": null}));
            let listed: Vec<Value> = all["topics"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| internal.contains(&t["name"].as_str().unwrap_or_default()))
                .map(|t| json!([t["name"], t["isInternal"]]))
                .collect();
            json!([named, listed.len()])
        },
    ),
    // ---- DescribeTopicPartitions ----
    (
        "describe topic partitions: known, unknown and invalid topics, sorted, with operations",
        |t| {
            let topic = t.name("meta-ops");
            let unknown = t.name("meta-nothing");
            let answer = t.any().json(
                ApiKey::DescribeTopicPartitions,
                &json!({"topics": [{"name": unknown}, {"name": topic}, {"name": "bad name"}],
                        "responsePartitionLimit": 2000}),
            );
            let topics: Vec<Value> = answer["topics"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|x| topic_view(t, x))
                .collect();
            json!([topics, answer["nextCursor"]])
        },
    ),
    (
        "describe topic partitions: paging with a limit and a cursor",
        |t| {
            let topic = t.name("meta-ops");
            let mut seen = Vec::new();
            for (limit, cursor) in [
                (2, Value::Null),
                (3, Value::Null),
                (0, Value::Null),
                (-1, Value::Null),
                (10, json!({"topicName": topic, "partitionIndex": 1})),
                (10, json!({"topicName": topic, "partitionIndex": 7})),
                (10, json!({"topicName": topic, "partitionIndex": -1})),
                (10, json!({"topicName": "not-asked", "partitionIndex": 0})),
            ] {
                let answer = t.any().json(
                    ApiKey::DescribeTopicPartitions,
                    &json!({"topics": [{"name": topic}], "responsePartitionLimit": limit,
                            "cursor": cursor}),
                );
                let topics: Vec<Value> = answer["topics"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|x| {
                        let partitions: Vec<Value> = x["partitions"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|p| p["partitionIndex"].clone())
                            .collect();
                        json!([x["errorCode"], partitions])
                    })
                    .collect();
                let cursor = &answer["nextCursor"];
                let cursor = json!([cursor["topicName"].as_str().map(|n| n == topic), cursor["partitionIndex"]]);
                seen.push(json!([topics, cursor]));
            }
            json!(seen)
        },
    ),
    // ---- DescribeCluster ----
    (
        "describe cluster: with and without the cluster's authorized operations",
        |t| {
            let mut seen = Vec::new();
            for include in [false, true] {
                let answer = t.any().json(
                    ApiKey::DescribeCluster,
                    &json!({"includeClusterAuthorizedOperations": include,
                            "endpointType": 1, "includeFencedBrokers": false}),
                );
                let brokers: Vec<Value> = answer["brokers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| json!([t.rank(&b["brokerId"]), b["rack"], b["isFenced"]]))
                    .collect();
                seen.push(json!([answer["errorCode"], answer["errorMessage"], answer["endpointType"],
                                 brokers, answer["clusterAuthorizedOperations"]]));
            }
            json!(seen)
        },
    ),
];

/// Runs every case against the brokers behind `bootstrap`.
fn run_cases(bootstrap: &str, run: &str) -> Vec<Value> {
    let mut session = Session::connect(bootstrap, "fake-faithful");
    let metadata = session.json(ApiKey::Metadata, &json!({"topics": []}));
    let addresses: BTreeMap<i64, String> = metadata["brokers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            let id = b["nodeId"].as_i64().unwrap_or(-1);
            (
                id,
                format!("{}:{}", b["host"].as_str().unwrap_or(""), b["port"]),
            )
        })
        .collect();
    assert!(addresses.len() >= 2, "{metadata}");
    let mut target = Target {
        addresses,
        sessions: BTreeMap::new(),
        run: run.to_owned(),
    };
    CASES
        .iter()
        .map(|(name, case)| {
            let started = std::time::Instant::now();
            // A case that panics (an answer a client could not use) is
            // seen as its message, and the next case goes on.
            let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&mut target)))
                .unwrap_or_else(|panic| {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    json!({"panicked": message})
                });
            if started.elapsed() > Duration::from_secs(5) {
                eprintln!("{name}: {:.1} s", started.elapsed().as_secs_f64());
            }
            seen
        })
        .collect()
}

#[test]
fn the_fake_answers_as_kafka_does() {
    let _one = one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let fake = runtime
        .block_on(FakeCluster::builder().brokers(2).start())
        .unwrap_or_else(|e| panic!("the fake cluster: {e}"));
    let bootstrap = fake.bootstrap();
    let first = bootstrap.split(',').next().unwrap_or_default().to_owned();
    let run = format!("{}", now_ms() % 1_000_000);
    let fake_seen = std::thread::scope(|scope| {
        scope
            .spawn(|| run_cases(&first, &run))
            .join()
            .unwrap_or_else(|_| panic!("the cases against the fake panicked"))
    });
    runtime.block_on(async { fake.shutdown().await.ok() });

    let kafka_seen = match std::env::var("KAFKA_WIRE_FAITHFUL_KAFKA") {
        Ok(bootstrap) => run_cases(&bootstrap, &run),
        Err(_) => {
            let Some(kafka) = Kafka::start("fake-faithful", &pinned_version(), &["--brokers", "2"])
            else {
                return;
            };
            let seen = run_cases(kafka.bootstrap(), &run);
            drop(kafka);
            seen
        }
    };

    let mut differ = Vec::new();
    for (((name, _), kafka), fake) in CASES.iter().zip(&kafka_seen).zip(&fake_seen) {
        if kafka == fake {
            println!("{name}: same {kafka}");
        } else {
            let line = format!("{name}:\n  kafka {kafka}\n  fake  {fake}");
            println!("{line}");
            differ.push(line);
        }
    }
    let line = format!(
        "faithful: {} cases; same {}; differ {}",
        CASES.len(),
        CASES.len() - differ.len(),
        differ.len()
    );
    kafka_wire_tests::clients::say(&line);
    assert!(differ.is_empty(), "{line}\n{}", differ.join("\n"));
}
