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
//! unless `KAFKA_WIRE_REQUIRE_JAVA` is set. `KAFKA_WIRE_FAITHFUL_KAFKA=DIR`
//! uses the cluster of a running `tests/kafka/broker.sh start DIR --brokers
//! 2` instead of starting one, for working on the cases (the last case
//! stops its node 2: `broker.sh start-node DIR 2` starts it again).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire::frame::ResponseFrame;
use kafka_wire::ApiKey;
use kafka_wire_fake::FakeCluster;
use kafka_wire_records::RecordBatchBuilder;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::broker::{fit, Session};
use serde_json::{json, Value};

/// The zero topic id: "no id" in requests.
const NO_ID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// A topic id no topic has.
const UNKNOWN_ID: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

/// Stands for a connection the broker closed instead of answering.
const CLOSED: &str = "closed";

/// Castagnoli's CRC, as record batches carry it.
fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One side (the fake or Kafka): a session per broker, opened when first
/// needed.
struct Target<'s> {
    /// Every broker's address, by node id (from Metadata).
    addresses: BTreeMap<i64, String>,
    sessions: BTreeMap<i64, Session>,
    /// A tag unique to this run, so that a reused Kafka (see the module)
    /// meets no topic or group of an earlier run.
    run: String,
    /// Stops node `id` (cleanly), for the last cases.
    stop: &'s (dyn Fn(i64) + Sync),
}

impl Target<'_> {
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

    /// A fresh connection to node `id` (for a case that may see it closed).
    fn fresh(&self, id: i64) -> Session {
        Session::connect(&self.addresses[&id], "fake-faithful")
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

    /// The leader of partition `partition` of `topic`, from Metadata.
    fn leader(&mut self, topic: &str, partition: i64) -> i64 {
        let metadata = self.any().json(ApiKey::Metadata, &metadata_of(&[topic]));
        metadata["topics"][0]["partitions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["partitionIndex"] == partition)
            .and_then(|p| p["leaderId"].as_i64())
            .unwrap_or_else(|| panic!("no leader of {topic}-{partition}: {metadata}"))
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

/// Sends `given` at `version` on a fresh connection to `node`: the
/// answer's JSON form, or [`CLOSED`] when the broker closes the
/// connection instead.
fn maybe_at(target: &Target, node: i64, api: ApiKey, version: i16, given: &Value) -> Value {
    let mut session = target.fresh(node);
    match session.client.exchange(version, fit(api, version, given)) {
        Ok(Some(frame)) => {
            let answer = ResponseFrame::decode(&frame, api, version)
                .unwrap_or_else(|e| panic!("the {} v{version} answer: {e}", api.name()));
            answer.body.to_json(version)
        }
        Ok(None) => {
            // No answer expected (acks=0): whether the connection is still
            // open, by a request that must be answered.
            let probe = session
                .client
                .exchange(0, fit(ApiKey::ApiVersions, 0, &json!({})));
            match probe {
                Ok(Some(_)) => json!("no answer, connection open"),
                _ => json!(CLOSED),
            }
        }
        Err(_) => json!(CLOSED),
    }
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

/// One batch of records, base64 as the JSON form writes `records`:
/// `count` records of `value_size` bytes, keyed or not, stamped `timestamp`.
fn batch(count: usize, value_size: usize, keyed: bool, timestamp: i64) -> String {
    let mut builder = RecordBatchBuilder::new(0);
    let value = vec![b'v'; value_size];
    for i in 0..count {
        let key = format!("k{i}");
        builder
            .append(
                timestamp,
                keyed.then_some(key.as_bytes()),
                Some(&value),
                &[],
            )
            .unwrap_or_else(|e| panic!("{e}"));
    }
    STANDARD.encode(builder.build().unwrap_or_else(|e| panic!("{e}")))
}

/// A Produce request of `records` (base64) to partition 0 of `topic`, by
/// name and id.
fn produce_request(topic: &str, id: &Value, acks: i64, records: &str) -> Value {
    json!({"transactionalId": null, "acks": acks, "timeoutMs": 5000, "topicData": [
        {"name": topic, "topicId": id, "partitionData": [{"index": 0, "records": records}]}
    ]})
}

/// Produces `records` to partition 0 of `topic` at its leader, at the
/// negotiated version: the partition's answer, written the same on both
/// sides (offsets as whether they are set).
fn produce(target: &mut Target, topic: &str, acks: i64, records: &str) -> Value {
    let id = target.topic_id(topic);
    let leader = target.leader(topic, 0);
    let answer = target
        .node(leader)
        .json(ApiKey::Produce, &produce_request(topic, &id, acks, records));
    partition_view(&answer)
}

/// A Produce answer's first partition, offsets as set or not (-1).
fn partition_view(answer: &Value) -> Value {
    let p = &answer["responses"][0]["partitionResponses"][0];
    let set = |key: &str| json!(p[key].as_i64().map(|o| o >= 0));
    json!({"errorCode": p["errorCode"], "errorMessage": p["errorMessage"],
           "recordErrors": p["recordErrors"], "baseOffset": set("baseOffset"),
           "logAppendTimeMs": p["logAppendTimeMs"], "logStartOffset": set("logStartOffset")})
}

/// A share group's member id (a client makes up a uuid).
const MEMBER: &str = "c2hhcmUtbWVtYmVyLTAwMQ";

/// ShareGroupHeartbeat of `member` at the group's coordinator.
fn share_beat(t: &mut Target, group: &str, member: &str, epoch: i64, topics: Value) -> Value {
    t.coordinator(group, 0).json(
        ApiKey::ShareGroupHeartbeat,
        &json!({"groupId": group, "memberId": member, "memberEpoch": epoch, "rackId": null,
                "subscribedTopicNames": topics}),
    )
}

/// Joins `member` to share group `group` on `topics` and heartbeats, as a
/// share consumer does, until it is assigned partitions: its epoch and
/// its assignment (partition indexes, sorted).
fn share_join(t: &mut Target, group: &str, member: &str, topics: &[&str]) -> (i64, Vec<i64>) {
    let joined = share_beat(t, group, member, 0, json!(topics));
    assert_eq!(joined["errorCode"], 0, "{joined}");
    let mut epoch = joined["memberEpoch"].as_i64().unwrap_or(-1);
    let mut assignment = joined["assignment"].clone();
    for _ in 0..100 {
        let partitions: Vec<i64> = assignment["topicPartitions"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t["partitions"].as_array().cloned().unwrap_or_default())
            .filter_map(|p| p.as_i64())
            .collect();
        if !partitions.is_empty() {
            let mut partitions = partitions;
            partitions.sort_unstable();
            return (epoch, partitions);
        }
        std::thread::sleep(Duration::from_millis(200));
        let beat = share_beat(t, group, member, epoch, Value::Null);
        assert_eq!(beat["errorCode"], 0, "{beat}");
        epoch = beat["memberEpoch"].as_i64().unwrap_or(-1);
        assignment = beat["assignment"].clone();
    }
    panic!("{member} of {group}: no assignment");
}

/// Sets group configs (name, value) of `group` (IncrementalAlterConfigs,
/// the GROUP resource): the error code.
fn set_group_configs(t: &mut Target, group: &str, configs: &[(&str, &str)]) -> Value {
    let configs: Vec<Value> = configs
        .iter()
        .map(|(name, value)| json!({"name": name, "configOperation": 0, "value": value}))
        .collect();
    let answer = t.any().json(
        ApiKey::IncrementalAlterConfigs,
        &json!({"resources": [{"resourceType": 32, "resourceName": group, "configs": configs}],
                "validateOnly": false}),
    );
    answer["responses"][0]["errorCode"].clone()
}

/// A ShareFetch of partition `partition` of `topic` at its leader for
/// `member` of `group`, in share session epoch `epoch`, acknowledging
/// `acks` ((first, last, type) batches): the partition's answer, with the
/// acquired records as (first, last, delivery count).
#[allow(clippy::too_many_arguments)]
fn share_fetch(
    t: &mut Target,
    group: &str,
    member: &str,
    topic: &str,
    partition: i64,
    epoch: i64,
    acks: &[(i64, i64, i64)],
    wait_ms: i64,
) -> Value {
    let id = t.topic_id(topic);
    let leader = t.leader(topic, partition);
    let acks: Vec<Value> = acks
        .iter()
        .map(|(first, last, kind)| json!({"firstOffset": first, "lastOffset": last, "acknowledgeTypes": [kind]}))
        .collect();
    let answer = t.node(leader).json(
        ApiKey::ShareFetch,
        &json!({"groupId": group, "memberId": member, "shareSessionEpoch": epoch,
                "maxWaitMs": wait_ms, "minBytes": 1, "maxBytes": 1 << 20, "maxRecords": 100,
                "batchSize": 100, "topics": [{"topicId": id, "partitions": [
                    {"partitionIndex": partition, "partitionMaxBytes": 1 << 20,
                     "acknowledgementBatches": acks}]}],
                "forgottenTopicsData": []}),
    );
    let p = &answer["responses"][0]["partitions"][0];
    let acquired: Vec<Value> = p["acquiredRecords"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| json!([r["firstOffset"], r["lastOffset"], r["deliveryCount"]]))
        .collect();
    json!({"errorCode": answer["errorCode"], "partitionError": p["errorCode"],
           "acknowledgeErrorCode": p["acknowledgeErrorCode"], "acquired": acquired})
}

/// DescribeShareGroupOffsets (v1, with lags) of `groups` (group, topics
/// as JSON: null for all), each group at its coordinator: the groups'
/// answers, topic ids as `ID`.
fn describe_share_offsets(t: &mut Target, groups: &[(&str, Value)]) -> Value {
    let mut seen = Vec::new();
    for (group, topics) in groups {
        let answer = t.coordinator(group, 0).json(
            ApiKey::DescribeShareGroupOffsets,
            &json!({"groups": [{"groupId": group, "topics": topics}]}),
        );
        let mut view = answer["groups"][0].clone();
        if let Some(Value::Array(topics)) = view.get_mut("topics") {
            for topic in topics.iter_mut() {
                if topic["topicId"] != NO_ID {
                    topic["topicId"] = json!("ID");
                }
            }
            topics.sort_by_key(|t| t["topicName"].to_string());
        }
        seen.push(view);
    }
    json!(seen)
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
    // ---- Produce limits ----
    (
        "produce: a batch over the topic's max.message.bytes",
        |t| {
            let topic = t.name("produce-max");
            t.create(&topic, 1, 1, &[("max.message.bytes", "1000")]);
            json!([
                produce(t, &topic, -1, &batch(1, 2000, true, now_ms())),
                produce(t, &topic, 1, &batch(1, 100, true, now_ms())),
            ])
        },
    ),
    (
        "produce: a batch over the broker's message.max.bytes (1048588)",
        |t| {
            let topic = t.name("produce-broker-max");
            t.create(&topic, 1, 1, &[]);
            json!([produce(t, &topic, -1, &batch(1, 1_048_700, true, now_ms()))])
        },
    ),
    (
        "produce: timestamps outside message.timestamp.before.max.ms and after.max.ms",
        |t| {
            let topic = t.name("produce-time");
            t.create(&topic, 1, 1, &[("message.timestamp.before.max.ms", "60000")]);
            let day = 86_400_000;
            let seen = json!([
                produce(t, &topic, -1, &batch(3, 10, true, now_ms() - day)),
                produce(t, &topic, -1, &batch(3, 10, true, now_ms() + day)),
                produce(t, &topic, -1, &batch(3, 10, true, now_ms())),
            ]);
            // The messages name the broker's clock: its bounds as their
            // width, every time as T.
            let text = seen.to_string();
            let mut out = String::new();
            let mut numbers = Vec::new();
            let mut digits = String::new();
            for c in text.chars().chain(std::iter::once(' ')) {
                if c.is_ascii_digit() {
                    digits.push(c);
                    continue;
                }
                if digits.len() >= 12 {
                    numbers.push(digits.parse::<i64>().unwrap_or(0));
                    out.push('T');
                } else {
                    out.push_str(&digits);
                }
                digits.clear();
                out.push(c);
            }
            // Each message: the timestamp, then the bounds.
            let widths: Vec<i64> = numbers.chunks(3).map(|c| c[2] - c[1]).collect();
            json!([serde_json::from_str::<Value>(out.trim_end()).unwrap_or(Value::Null), widths])
        },
    ),
    (
        "produce: a keyless record to a compacted topic",
        |t| {
            let topic = t.name("produce-compact");
            t.create(&topic, 1, 1, &[("cleanup.policy", "compact")]);
            json!([
                produce(t, &topic, -1, &batch(2, 10, false, now_ms())),
                produce(t, &topic, -1, &batch(2, 10, true, now_ms())),
            ])
        },
    ),
    (
        "produce: acks other than -1, 0 and 1",
        |t| {
            let topic = t.name("produce-acks");
            t.create(&topic, 1, 1, &[]);
            json!([produce(t, &topic, 2, &batch(1, 10, true, now_ms())),
                   produce(t, &topic, -2, &batch(1, 10, true, now_ms()))])
        },
    ),
    (
        "produce: min.insync.replicas above the replicas in sync, acks=all and acks=1",
        |t| {
            let topic = t.name("produce-isr");
            t.create(&topic, 1, 1, &[("min.insync.replicas", "2")]);
            let all = produce(t, &topic, -1, &batch(1, 10, true, now_ms()));
            let one = produce(t, &topic, 1, &batch(1, 10, true, now_ms()));
            // The message names the replica's node id and the partition.
            let leader = t.leader(&topic, 0);
            let message = all["errorMessage"]
                .as_str()
                .map(|m| m.replace(&leader.to_string(), "N").replace(&topic, "TOPIC"));
            json!([all["errorCode"], message, all["baseOffset"], all["logStartOffset"], one])
        },
    ),
    (
        "produce: a corrupt batch (its CRC), and two batches for one partition",
        |t| {
            let topic = t.name("produce-invalid");
            t.create(&topic, 1, 1, &[]);
            let good = batch(1, 10, true, now_ms());
            let mut bytes = STANDARD.decode(&good).unwrap_or_default();
            let last = bytes.len() - 1;
            bytes[last] ^= 0xff;
            let corrupt = STANDARD.encode(&bytes);
            let mut two = STANDARD.decode(&good).unwrap_or_default();
            two.extend(STANDARD.decode(&good).unwrap_or_default());
            let two = STANDARD.encode(&two);
            json!([produce(t, &topic, -1, &corrupt), produce(t, &topic, -1, &two)])
        },
    ),
    (
        "produce: malformed batches (truncated, magic 1, a base offset, counts that disagree, zstd at v6)",
        |t| {
            let topic = t.name("produce-malformed");
            t.create(&topic, 1, 1, &[]);
            let good = STANDARD.decode(batch(2, 10, true, now_ms())).unwrap_or_default();
            let variant = |edit: &dyn Fn(&mut Vec<u8>)| {
                let mut bytes = good.clone();
                edit(&mut bytes);
                STANDARD.encode(&bytes)
            };
            let truncated = variant(&|b| b.truncate(b.len() - 3));
            let magic = variant(&|b| b[16] = 1);
            let offset = variant(&|b| b[7] = 5);
            // lastOffsetDelta 5 for two records, the CRC made right again.
            let counts = variant(&|b| {
                b[23..27].copy_from_slice(&5i32.to_be_bytes());
                let crc = crc32c(&b[21..]);
                b[17..21].copy_from_slice(&crc.to_be_bytes());
            });
            let mut builder = RecordBatchBuilder::new(0)
                .compression(kafka_wire_records::Compression::Zstd);
            builder
                .append(now_ms(), Some(b"k"), Some(b"v"), &[])
                .unwrap_or_else(|e| panic!("{e}"));
            let zstd = STANDARD.encode(builder.build().unwrap_or_else(|e| panic!("{e}")));
            let id = t.topic_id(&topic);
            let leader = t.leader(&topic, 0);
            let v6 = t.node(leader).json_at(ApiKey::Produce, 6, &produce_request(&topic, &id, -1, &zstd));
            json!([
                produce(t, &topic, -1, &truncated),
                produce(t, &topic, -1, &magic),
                produce(t, &topic, -1, &offset),
                produce(t, &topic, -1, &counts),
                partition_view(&v6),
                produce(t, &topic, -1, &zstd),
            ])
        },
    ),
    (
        "produce: acks=2 to a broker that does not lead the partition",
        |t| {
            let topic = t.name("produce-acks");
            let id = t.topic_id(&topic);
            let leader = t.leader(&topic, 0);
            let other = *t.addresses.keys().find(|&&n| n != leader).unwrap_or(&leader);
            let answer = t.node(other).json(
                ApiKey::Produce,
                &produce_request(&topic, &id, 2, &batch(1, 10, true, now_ms())),
            );
            partition_view(&answer)
        },
    ),
    (
        "produce: a transactional batch without a transactional id",
        |t| {
            let topic = t.name("produce-txn");
            t.create(&topic, 1, 1, &[]);
            let mut builder = RecordBatchBuilder::new(0)
                .producer_id(1000)
                .producer_epoch(0)
                .base_sequence(0)
                .transactional(true);
            builder
                .append(now_ms(), Some(b"k"), Some(b"v"), &[])
                .unwrap_or_else(|e| panic!("{e}"));
            let records = STANDARD.encode(builder.build().unwrap_or_else(|e| panic!("{e}")));
            let id = t.topic_id(&topic);
            let leader = t.leader(&topic, 0);
            let answer = t
                .node(leader)
                .json(ApiKey::Produce, &produce_request(&topic, &id, -1, &records));
            json!([answer["responses"][0]["partitionResponses"][0]["errorCode"],
                   answer["responses"][0]["partitionResponses"][0]["errorMessage"]])
        },
    ),
    (
        "produce: to an internal topic",
        |t| {
            let group = t.name("produce-group");
            t.coordinator(&group, 0);
            t.ready("__consumer_offsets");
            json!([produce(t, "__consumer_offsets", -1, &batch(1, 10, true, now_ms()))])
        },
    ),
    (
        "produce: acks=0 with an error closes the connection; without one it stays open",
        |t| {
            let topic = t.name("produce-acks0");
            t.create(&topic, 1, 1, &[("max.message.bytes", "1000")]);
            let id = t.topic_id(&topic);
            let leader = t.leader(&topic, 0);
            let version = t.any().version(ApiKey::Produce);
            let mut seen = Vec::new();
            for size in [10, 2000] {
                let request = produce_request(&topic, &id, 0, &batch(1, size, true, now_ms()));
                seen.push(maybe_at(t, leader, ApiKey::Produce, version, &request));
            }
            json!(seen)
        },
    ),
    (
        "produce: an append over segment.bytes (under max.message.bytes)",
        |t| {
            let topic = t.name("produce-segment");
            t.create(
                &topic,
                1,
                1,
                &[("segment.bytes", "1048576"), ("max.message.bytes", "2000000")],
            );
            json!([produce(t, &topic, -1, &batch(1, 1_500_000, true, now_ms())),
                   produce(t, &topic, -1, &batch(1, 1_000_000, true, now_ms()))])
        },
    ),
    (
        "produce: an idempotent producer's out-of-order sequence and a transactional batch outside its transaction (v11, v12)",
        |t| {
            let topic = t.name("produce-producers");
            t.create(&topic, 1, 1, &[]);
            let id = t.topic_id(&topic);
            let leader = t.leader(&topic, 0);
            let records = |pid: i64, sequence: i32, transactional: bool| {
                let mut builder = RecordBatchBuilder::new(0)
                    .producer_id(pid)
                    .producer_epoch(0)
                    .base_sequence(sequence)
                    .transactional(transactional);
                builder
                    .append(now_ms(), Some(b"k"), Some(b"v"), &[])
                    .unwrap_or_else(|e| panic!("{e}"));
                STANDARD.encode(builder.build().unwrap_or_else(|e| panic!("{e}")))
            };
            let init = t.node(leader).json_until(
                ApiKey::InitProducerId,
                &json!({"transactionalId": null, "transactionTimeoutMs": 60000}),
                |answer| !matches!(answer["errorCode"].as_i64(), Some(14 | 15)),
            );
            let pid = init["producerId"].as_i64().unwrap_or(-1);
            let first = produce(t, &topic, -1, &records(pid, 0, false));
            let gap = produce(t, &topic, -1, &records(pid, 5, false));
            let txn = t.name("produce-txn-id");
            let tinit = t.coordinator(&txn, 1).json_until(
                ApiKey::InitProducerId,
                &json!({"transactionalId": txn, "transactionTimeoutMs": 60000}),
                |answer| !matches!(answer["errorCode"].as_i64(), Some(14 | 15 | 16 | 51)),
            );
            let tpid = tinit["producerId"].as_i64().unwrap_or(-1);
            let mut seen = vec![first, gap];
            for version in [11, 12] {
                let mut request = produce_request(&topic, &id, -1, &records(tpid, 0, true));
                request["transactionalId"] = json!(txn);
                let answer = t.node(leader).json_at(ApiKey::Produce, version, &request);
                seen.push(partition_view(&answer));
            }
            json!(seen)
        },
    ),
    (
        "a request over socket.request.max.bytes (100 MiB) closes the connection",
        |t| {
            let id = *t.addresses.keys().next().unwrap_or(&0);
            let mut session = t.fresh(id);
            let size: i32 = 100 * 1024 * 1024 + 1;
            let mut frame = size.to_be_bytes().to_vec();
            // The start of a Produce header, which never gets its body.
            frame.extend_from_slice(&[0, 0, 0, 9, 0, 0, 0, 1]);
            session.client.send_raw(&frame).unwrap_or_else(|e| panic!("{e}"));
            json!(match session.client.read_frame() {
                Ok(_) => "answered",
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => CLOSED,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => CLOSED,
                Err(_) => "no answer, connection open",
            })
        },
    ),
    (
        "describe groups: a classic group's and an unknown group's authorized operations, v5 and v6",
        |t| {
            let topic = t.name("produce-producers");
            let group = t.name("classic-ops");
            let id = t.topic_id(&topic);
            let _ = t.coordinator(&group, 0).json(
                ApiKey::OffsetCommit,
                &json!({"groupId": group, "generationIdOrMemberEpoch": -1, "memberId": "",
                        "topics": [{"name": topic, "topicId": id, "partitions": [
                            {"partitionIndex": 0, "committedOffset": 0,
                             "committedLeaderEpoch": -1, "committedMetadata": ""}]}]}),
            );
            let unknown = t.name("classic-nobody");
            let mut seen = Vec::new();
            for (name, version) in [(&group, 5), (&group, 6), (&unknown, 5), (&unknown, 6)] {
                for include in [false, true] {
                    let answer = t.coordinator(name, 0).json_at(
                        ApiKey::DescribeGroups,
                        version,
                        &json!({"groups": [name], "includeAuthorizedOperations": include}),
                    );
                    seen.push(answer["groups"][0].clone());
                }
            }
            json!(seen)
        },
    ),
    (
        "produce: the broker's message.max.bytes (cluster-wide) bounds a topic without its own max.message.bytes",
        |t| {
            let topic = t.name("produce-broker-set");
            t.create(&topic, 1, 1, &[]);
            let set = |t: &mut Target, op: i64, value: Value| {
                let answer = t.any().json(
                    ApiKey::IncrementalAlterConfigs,
                    &json!({"resources": [{"resourceType": 4, "resourceName": "", "configs": [
                        {"name": "message.max.bytes", "configOperation": op, "value": value}]}],
                        "validateOnly": false}),
                );
                answer["responses"][0]["errorCode"].clone()
            };
            let lowered = set(t, 0, json!("2000"));
            // Until every broker has the change (Kafka's dynamic configs
            // travel through its metadata log).
            let mut refused = Value::Null;
            for _ in 0..50 {
                refused = produce(t, &topic, -1, &batch(1, 3000, true, now_ms()));
                if refused["errorCode"] == 10 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let restored = set(t, 1, Value::Null);
            let mut taken = Value::Null;
            for _ in 0..50 {
                taken = produce(t, &topic, -1, &batch(1, 3000, true, now_ms()));
                if taken["errorCode"] == 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            json!([lowered, refused, restored, taken])
        },
    ),
    // ---- Share groups ----
    (
        "share offsets admin of a group that does not exist",
        |t| {
            let topic = t.name("share-admin");
            t.create(&topic, 2, 1, &[]);
            let group = t.name("share-none");
            let described = describe_share_offsets(
                t,
                &[
                    (&group, Value::Null),
                    (&group, json!([{"topicName": topic, "partitions": [0, 1]},
                                    {"topicName": "share-no-topic", "partitions": [0]}])),
                ],
            );
            let altered = t.coordinator(&group, 0).json(
                ApiKey::AlterShareGroupOffsets,
                &json!({"groupId": group, "topics": [{"topicName": topic, "partitions": [
                    {"partitionIndex": 0, "startOffset": 0}]}]}),
            );
            let deleted = t.coordinator(&group, 0).json(
                ApiKey::DeleteShareGroupOffsets,
                &json!({"groupId": group, "topics": [{"topicName": topic}]}),
            );
            let strip = |mut v: Value| {
                for r in v["responses"].as_array_mut().into_iter().flatten() {
                    r["topicId"] = json!(r["topicId"] != NO_ID);
                }
                v
            };
            json!([described, strip(altered), strip(deleted)])
        },
    ),
    (
        "share offsets altered and deleted for the empty group id, at any broker",
        |t| {
            let topic = t.name("share-admin");
            let mut seen = Vec::new();
            for id in t.addresses.keys().copied().collect::<Vec<_>>() {
                let altered = t.node(id).json(
                    ApiKey::AlterShareGroupOffsets,
                    &json!({"groupId": "", "topics": [{"topicName": topic, "partitions": [
                        {"partitionIndex": 0, "startOffset": 0}]}]}),
                );
                let deleted = t.node(id).json(
                    ApiKey::DeleteShareGroupOffsets,
                    &json!({"groupId": "", "topics": [{"topicName": topic}]}),
                );
                seen.push(json!([altered, deleted]));
            }
            json!(seen)
        },
    ),
    (
        "a share group consumes: its offsets described, altered and deleted refused while it has members",
        |t| {
            let topic = t.name("share-admin");
            let group = t.name("share-group");
            let configs = set_group_configs(t, &group, &[("share.auto.offset.reset", "earliest")]);
            let leader = t.leader(&topic, 0);
            let id = t.topic_id(&topic);
            let produced = t.node(leader).json(
                ApiKey::Produce,
                &produce_request(&topic, &id, -1, &batch(5, 10, true, now_ms())),
            );
            let (_, assignment) = share_join(t, &group, MEMBER, &[&topic]);
            // Until the records come (Kafka's share partition loads first).
            let mut fetched = Value::Null;
            for _ in 0..50 {
                fetched = share_fetch(t, &group, MEMBER, &topic, 0, 0, &[], 500);
                if fetched["acquired"].as_array().is_some_and(|a| !a.is_empty()) {
                    break;
                }
                let _ = share_fetch(t, &group, MEMBER, &topic, 0, -1, &[], 0);
            }
            // Accept 0-1, release 2. (Whether the same ShareFetch acquires
            // record 2 again is a race in Kafka: its acknowledgements are
            // applied beside the fetch.)
            let mut acked = share_fetch(t, &group, MEMBER, &topic, 0, 1, &[(0, 1, 1), (2, 2, 2)], 0);
            acked["acquired"] = Value::Null;
            let described = describe_share_offsets(t, &[(&group, Value::Null)]);
            let altered = t.coordinator(&group, 0).json(
                ApiKey::AlterShareGroupOffsets,
                &json!({"groupId": group, "topics": [{"topicName": topic, "partitions": [
                    {"partitionIndex": 0, "startOffset": 0}]}]}),
            );
            let deleted = t.coordinator(&group, 0).json(
                ApiKey::DeleteShareGroupOffsets,
                &json!({"groupId": group, "topics": [{"topicName": topic}]}),
            );
            let removed = t.coordinator(&group, 0).json(
                ApiKey::DeleteGroups,
                &json!({"groupsNames": [group]}),
            );
            json!([configs, produced["responses"][0]["partitionResponses"][0]["errorCode"],
                   assignment, fetched, acked, described,
                   [altered["errorCode"], altered["errorMessage"], altered["responses"]
                       .as_array().map(|r| r.len())],
                   [deleted["errorCode"], deleted["errorMessage"], deleted["responses"]
                       .as_array().map(|r| r.len())],
                   removed["results"]])
        },
    ),
    (
        "a share group with a member: ListGroups by type and state, DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe",
        |t| {
            let topic = t.name("share-admin");
            let group = t.name("share-group");
            let mut listed = Vec::new();
            for (types, states) in [
                (json!(["share"]), json!([])),
                (json!(["consumer", "classic"]), json!([])),
                (json!([]), json!(["Stable"])),
                (json!(["Share"]), json!(["empty"])),
            ] {
                let answer = t.coordinator(&group, 0).json(
                    ApiKey::ListGroups,
                    &json!({"statesFilter": states, "typesFilter": types}),
                );
                let groups: Vec<Value> = answer["groups"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|g| g["groupId"] == group.as_str())
                    .cloned()
                    .collect();
                listed.push(json!([answer["errorCode"], groups]));
            }
            let classic = t.coordinator(&group, 0).json(
                ApiKey::DescribeGroups,
                &json!({"groups": [group], "includeAuthorizedOperations": true}),
            );
            let consumer = t.coordinator(&group, 0).json(
                ApiKey::ConsumerGroupDescribe,
                &json!({"groupIds": [group], "includeAuthorizedOperations": true}),
            );
            let share = t.coordinator(&group, 0).json(
                ApiKey::ShareGroupDescribe,
                &json!({"groupIds": [group], "includeAuthorizedOperations": true}),
            );
            let mut share_view = share["groups"][0].clone();
            for m in share_view["members"].as_array_mut().into_iter().flatten() {
                for tp in m["assignment"]["topicPartitions"].as_array_mut().into_iter().flatten() {
                    tp["topicId"] = json!("ID");
                }
                m["memberEpoch"] = json!(m["memberEpoch"].as_i64() > Some(0));
            }
            for key in ["groupEpoch", "assignmentEpoch"] {
                share_view[key] = json!(share_view[key].as_i64() > Some(0));
            }
            let _ = topic;
            json!([listed, classic["groups"], consumer["groups"], share_view])
        },
    ),
    (
        "a share group's member leaves: its offsets altered, described, deleted; the group deleted",
        |t| {
            let topic = t.name("share-admin");
            let group = t.name("share-group");
            let left = share_beat(t, &group, MEMBER, -1, Value::Null);
            let listed = t.coordinator(&group, 0).json(
                ApiKey::ListGroups,
                &json!({"statesFilter": [], "typesFilter": ["share"]}),
            );
            let state: Vec<Value> = listed["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|g| g["groupId"] == group.as_str())
                .map(|g| g["groupState"].clone())
                .collect();
            let altered = t.coordinator(&group, 0).json(
                ApiKey::AlterShareGroupOffsets,
                &json!({"groupId": group, "topics": [
                    {"topicName": topic, "partitions": [{"partitionIndex": 0, "startOffset": 1},
                                                        {"partitionIndex": 1, "startOffset": 0},
                                                        {"partitionIndex": 7, "startOffset": 0}]},
                    {"topicName": "share-no-topic", "partitions": [{"partitionIndex": 0, "startOffset": 0}]}]}),
            );
            let mut altered_view = altered.clone();
            for r in altered_view["responses"].as_array_mut().into_iter().flatten() {
                r["topicId"] = json!(r["topicId"] != NO_ID);
            }
            let after_alter = describe_share_offsets(t, &[(&group, Value::Null)]);
            let deleted = t.coordinator(&group, 0).json(
                ApiKey::DeleteShareGroupOffsets,
                &json!({"groupId": group, "topics": [{"topicName": topic},
                                                      {"topicName": "share-no-topic"}]}),
            );
            let mut deleted_view = deleted.clone();
            for r in deleted_view["responses"].as_array_mut().into_iter().flatten() {
                r["topicId"] = json!(r["topicId"] != NO_ID);
            }
            let after_delete = describe_share_offsets(t, &[(&group, Value::Null)]);
            let removed = t.coordinator(&group, 0).json(
                ApiKey::DeleteGroups,
                &json!({"groupsNames": [group]}),
            );
            let described = t.coordinator(&group, 0).json(
                ApiKey::ShareGroupDescribe,
                &json!({"groupIds": [group], "includeAuthorizedOperations": false}),
            );
            json!([[left["errorCode"], left["memberEpoch"]], state, altered_view, after_alter,
                   deleted_view, after_delete, removed["results"],
                   [described["groups"][0]["errorCode"], described["groups"][0]["errorMessage"]]])
        },
    ),
    (
        "share group heartbeats: a join, the assignment once initialized, a second member, stale and unknown epochs, a leave",
        |t| {
            let topic = t.name("share-beats");
            t.create(&topic, 2, 1, &[]);
            let group = t.name("share-beats");
            let (a, b) = ("bWVtYmVyLWEtMDAwMDAwMA", "bWVtYmVyLWItMDAwMDAwMA");
            let count = |answer: &Value| {
                answer["assignment"]["topicPartitions"]
                    .as_array()
                    .map(|tps| tps.iter().map(|tp| tp["partitions"].as_array().map_or(0, Vec::len)).sum::<usize>())
            };
            let first = share_beat(t, &group, a, 0, json!([topic]));
            let (a_epoch, a_partitions) = share_join(t, &group, a, &[&topic]);
            // Kafka computes a share group's assignment again at most once
            // a second (group.share.assignment.interval.ms): each change
            // comes after one, so that it is assigned at once.
            let interval = Duration::from_millis(1200);
            std::thread::sleep(interval);
            let b_join = share_beat(t, &group, b, 0, json!([topic]));
            let b_epoch = b_join["memberEpoch"].as_i64().unwrap_or(-1);
            let a_next = share_beat(t, &group, a, a_epoch, Value::Null);
            let a_now = a_next["memberEpoch"].as_i64().unwrap_or(-1);
            let b_next = share_beat(t, &group, b, b_epoch, Value::Null);
            let described = t.coordinator(&group, 0).json(
                ApiKey::ShareGroupDescribe,
                &json!({"groupIds": [group], "includeAuthorizedOperations": false}),
            );
            let epochs = json!([described["groups"][0]["groupEpoch"],
                                described["groups"][0]["assignmentEpoch"]]);
            let mut shares: Vec<usize> = described["groups"][0]["members"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    m["assignment"]["topicPartitions"]
                        .as_array()
                        .map_or(0, |tps| tps.iter().map(|tp| tp["partitions"].as_array().map_or(0, Vec::len)).sum())
                })
                .collect();
            shares.sort_unstable();
            let previous = share_beat(t, &group, a, a_epoch, Value::Null);
            let older = share_beat(t, &group, a, a_epoch - 1, Value::Null);
            let greater = share_beat(t, &group, a, a_now + 5, Value::Null);
            let stranger = share_beat(t, &group, "c3RyYW5nZXItMDAwMDAwMA", a_now, Value::Null);
            let pick = |v: &Value| json!([v["errorCode"], v["errorMessage"], v["memberId"], v["memberEpoch"], v["heartbeatIntervalMs"], count(v)]);
            let left = share_beat(t, &group, a, a_now, Value::Null);
            std::thread::sleep(interval);
            let leave = share_beat(t, &group, a, -1, Value::Null);
            let b_alone = share_beat(t, &group, b, b_next["memberEpoch"].as_i64().unwrap_or(-1), Value::Null);
            json!([
                pick(&first), a_epoch, a_partitions,
                pick(&b_join), pick(&a_next), pick(&b_next), epochs, shares,
                pick(&previous), pick(&older), pick(&greater), pick(&stranger), pick(&left),
                pick(&leave), pick(&b_alone),
            ])
        },
    ),
    (
        "share group heartbeats refused: a classic group's id, an unknown group, no member id, a join without topics",
        |t| {
            let topic = t.name("share-beats");
            let classic = t.name("share-classic");
            let id = t.topic_id(&topic);
            let committed = t.coordinator(&classic, 0).json(
                ApiKey::OffsetCommit,
                &json!({"groupId": classic, "generationIdOrMemberEpoch": -1, "memberId": "",
                        "topics": [{"name": topic, "topicId": id, "partitions": [
                            {"partitionIndex": 0, "committedOffset": 0,
                             "committedLeaderEpoch": -1, "committedMetadata": ""}]}]}),
            );
            let unknown = t.name("share-unknown");
            let nobody = t.name("share-nobody");
            let pick = |v: Value| json!([v["errorCode"], v["errorMessage"], v["memberId"], v["memberEpoch"], v["heartbeatIntervalMs"], v["assignment"]]);
            json!([
                committed["topics"][0]["partitions"][0]["errorCode"],
                pick(share_beat(t, &classic, MEMBER, 0, json!([topic]))),
                pick(share_beat(t, &unknown, MEMBER, 3, Value::Null)),
                pick(share_beat(t, &nobody, "", 0, json!([topic]))),
                pick(share_beat(t, &nobody, MEMBER, 0, Value::Null)),
                pick(share_beat(t, &nobody, MEMBER, 0, json!([]))),
            ])
        },
    ),
    (
        "a share group's configs: lock duration, delivery count limit, heartbeat interval",
        |t| {
            let topic = t.name("share-configs");
            t.create(&topic, 1, 1, &[]);
            let group = t.name("share-configs");
            let configs = set_group_configs(
                t,
                &group,
                &[
                    ("share.auto.offset.reset", "earliest"),
                    ("share.record.lock.duration.ms", "20000"),
                    ("share.delivery.count.limit", "2"),
                    ("share.heartbeat.interval.ms", "7000"),
                ],
            );
            let leader = t.leader(&topic, 0);
            let id = t.topic_id(&topic);
            let produced = t.node(leader).json(
                ApiKey::Produce,
                &produce_request(&topic, &id, -1, &batch(1, 10, true, now_ms())),
            );
            let joined = share_beat(t, &group, MEMBER, 0, json!([topic]));
            let (epoch, _) = share_join(t, &group, MEMBER, &[&topic]);
            let beat = share_beat(t, &group, MEMBER, epoch, Value::Null);
            // The lock time a fetch answers with, and what it acquired.
            let fetch = |t: &mut Target, epoch: i64, wait: i64| {
                let id = t.topic_id(&topic);
                let answer = t.node(leader).json(
                    ApiKey::ShareFetch,
                    &json!({"groupId": group, "memberId": MEMBER, "shareSessionEpoch": epoch,
                            "maxWaitMs": wait, "minBytes": 1, "maxBytes": 1 << 20, "maxRecords": 10,
                            "batchSize": 10, "topics": [{"topicId": id, "partitions": [
                                {"partitionIndex": 0, "partitionMaxBytes": 1 << 20,
                                 "acknowledgementBatches": []}]}],
                            "forgottenTopicsData": []}),
                );
                let acquired: Vec<Value> = answer["responses"][0]["partitions"][0]["acquiredRecords"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| json!([r["firstOffset"], r["lastOffset"], r["deliveryCount"]]))
                    .collect();
                json!([answer["errorCode"], answer["acquisitionLockTimeoutMs"], acquired])
            };
            // A release on its own (a ShareFetch carrying it may acquire
            // the record again or not: a race in Kafka).
            let release = |t: &mut Target, epoch: i64| {
                let id = t.topic_id(&topic);
                let answer = t.node(leader).json(
                    ApiKey::ShareAcknowledge,
                    &json!({"groupId": group, "memberId": MEMBER, "shareSessionEpoch": epoch,
                            "topics": [{"topicId": id, "partitions": [
                                {"partitionIndex": 0, "acknowledgementBatches": [
                                    {"firstOffset": 0, "lastOffset": 0, "acknowledgeTypes": [2]}]}]}]}),
                );
                json!([answer["errorCode"], answer["acquisitionLockTimeoutMs"],
                       answer["responses"][0]["partitions"][0]["errorCode"]])
            };
            let first = fetch(t, 0, 2000);
            let released = release(t, 1);
            let second = fetch(t, 2, 1000);
            let released_again = release(t, 3);
            // Delivered twice: archived, nothing to acquire.
            let third = fetch(t, 4, 200);
            let first = json!([first, released, second, released_again]);
            let _ = share_fetch(t, &group, MEMBER, &topic, 0, -1, &[], 0);
            let _ = share_beat(t, &group, MEMBER, -1, Value::Null);
            json!([configs, produced["responses"][0]["partitionResponses"][0]["errorCode"],
                   joined["heartbeatIntervalMs"], beat["heartbeatIntervalMs"], first, third])
        },
    ),
    (
        "share fetch and acknowledge that name no group or member",
        |t| {
            let topic = t.name("share-beats");
            let id = t.topic_id(&topic);
            let leader = t.leader(&topic, 0);
            let fetched = t.node(leader).json(
                ApiKey::ShareFetch,
                &json!({"groupId": null, "memberId": null, "shareSessionEpoch": 0, "maxWaitMs": 0,
                        "minBytes": 1, "maxBytes": 1024, "maxRecords": 10, "batchSize": 10,
                        "topics": [{"topicId": id, "partitions": [
                            {"partitionIndex": 0, "partitionMaxBytes": 1024,
                             "acknowledgementBatches": []}]}],
                        "forgottenTopicsData": []}),
            );
            let acknowledged = t.node(leader).json(
                ApiKey::ShareAcknowledge,
                &json!({"groupId": null, "memberId": null, "shareSessionEpoch": 1,
                        "topics": [{"topicId": id, "partitions": [
                            {"partitionIndex": 0, "acknowledgementBatches": [
                                {"firstOffset": 0, "lastOffset": 0, "acknowledgeTypes": [1]}]}]}]}),
            );
            json!([fetched, acknowledged])
        },
    ),
    (
        "consumer group describe: authorized operations and the member's host (KIP-848)",
        |t| {
            let topic = t.name("share-beats");
            let group = t.name("consumer-ops");
            let joined = t.coordinator(&group, 0).json(
                ApiKey::ConsumerGroupHeartbeat,
                &json!({"groupId": group, "memberId": MEMBER, "memberEpoch": 0, "instanceId": null,
                        "rackId": null, "rebalanceTimeoutMs": 30000,
                        "subscribedTopicNames": [topic], "subscribedTopicRegex": null,
                        "serverAssignor": null, "topicPartitions": []}),
            );
            let mut seen = vec![joined["errorCode"].clone()];
            for include in [false, true] {
                let described = t.coordinator(&group, 0).json(
                    ApiKey::ConsumerGroupDescribe,
                    &json!({"groupIds": [group], "includeAuthorizedOperations": include}),
                );
                let g = &described["groups"][0];
                let hosts: Vec<Value> = g["members"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|m| json!([m["clientId"], m["clientHost"], m["subscribedTopicNames"]]))
                    .collect();
                seen.push(json!([g["errorCode"], g["groupState"], g["assignorName"], hosts,
                                 g["authorizedOperations"]]));
            }
            let _ = t.coordinator(&group, 0).json(
                ApiKey::ConsumerGroupHeartbeat,
                &json!({"groupId": group, "memberId": MEMBER, "memberEpoch": -1,
                        "rebalanceTimeoutMs": -1, "topicPartitions": null}),
            );
            json!(seen)
        },
    ),
    // ---- Last: a broker stopped ----
    (
        "a broker stopped: Metadata (v0 and the highest), DescribeTopicPartitions, DescribeCluster, and a Produce with acks=all under min.insync.replicas",
        |t| {
            let topic = t.name("stopped");
            t.create(&topic, 2, 2, &[("min.insync.replicas", "2")]);
            let ids: Vec<i64> = t.addresses.keys().copied().collect();
            let (first, second) = (ids[0], ids[1]);
            (t.stop)(second);
            t.addresses.remove(&second);
            t.sessions.remove(&second);
            // Until Metadata no longer lists it, and the topic is led by
            // the running broker.
            let ask = metadata_of(&[&topic]);
            let metadata = t.node(first).json_until(ApiKey::Metadata, &ask, |answer| {
                answer["brokers"].as_array().is_some_and(|b| b.len() == 1)
                    && answer["topics"][0]["partitions"]
                        .as_array()
                        .is_some_and(|p| p.iter().all(|p| p["leaderId"] == first))
            });
            let v0 = t.node(first).json_at(ApiKey::Metadata, 0, &json!({"topics": [{"name": topic}]}));
            let partitions = t.node(first).json(
                ApiKey::DescribeTopicPartitions,
                &json!({"topics": [{"name": topic}], "responsePartitionLimit": 10}),
            );
            let mut cluster = Vec::new();
            for fenced in [false, true] {
                let answer = t.node(first).json(
                    ApiKey::DescribeCluster,
                    &json!({"endpointType": 1, "includeFencedBrokers": fenced}),
                );
                let brokers: Vec<Value> = answer["brokers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| json!([b["brokerId"] == first, b["isFenced"]]))
                    .collect();
                cluster.push(json!(brokers));
            }
            let all = produce(t, &topic, -1, &batch(1, 10, true, now_ms()));
            let one = produce(t, &topic, 1, &batch(1, 10, true, now_ms()));
            // Kafka places the partitions at random: which one moved its
            // leader (a new leader epoch) differs, so the partitions are
            // compared as a set.
            let sorted = |topic: &Value| {
                let mut view = topic_view(t, topic);
                if let Some(Value::Array(partitions)) = view.get_mut("partitions") {
                    for p in partitions.iter_mut() {
                        if let Some(p) = p.as_object_mut() {
                            p.remove("partitionIndex");
                        }
                    }
                    partitions.sort_by_key(Value::to_string);
                }
                view
            };
            json!([
                sorted(&metadata["topics"][0]),
                sorted(&v0["topics"][0]),
                sorted(&partitions["topics"][0]),
                cluster,
                all,
                one,
            ])
        },
    ),
];

/// Runs every case against the brokers behind `bootstrap`.
fn run_cases(bootstrap: &str, run: &str, stop: &(dyn Fn(i64) + Sync)) -> Vec<Value> {
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
        stop,
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
    let stop_fake = |id: i64| {
        let id = i32::try_from(id).unwrap_or(-1);
        runtime
            .block_on(fake.stop_broker(id))
            .unwrap_or_else(|e| panic!("stopping broker {id}: {e}"));
    };
    let fake_seen = std::thread::scope(|scope| {
        scope
            .spawn(|| run_cases(&first, &run, &stop_fake))
            .join()
            .unwrap_or_else(|_| panic!("the cases against the fake panicked"))
    });
    runtime.block_on(async { fake.shutdown().await.ok() });

    // A running `broker.sh start DIR --brokers 2` (see the module), or one
    // started here.
    let (kafka, dir) = match std::env::var("KAFKA_WIRE_FAITHFUL_KAFKA") {
        Ok(dir) => (None, std::path::PathBuf::from(dir)),
        Err(_) => {
            let Some(kafka) = Kafka::start("fake-faithful", &pinned_version(), &["--brokers", "2"])
            else {
                return;
            };
            let dir = kafka.dir().to_owned();
            (Some(kafka), dir)
        }
    };
    let env = std::fs::read_to_string(dir.join("env"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("env").display()));
    let kafka_bootstrap = env
        .lines()
        .find_map(|line| line.strip_prefix("bootstrap="))
        .unwrap_or_else(|| panic!("no bootstrap in {env}"))
        .to_owned();
    let stop_kafka = move |id: i64| {
        let out = std::process::Command::new("bash")
            .arg(kafka_wire_test_support::kafka::script())
            .args(["stop-node"])
            .arg(&dir)
            .arg(id.to_string())
            .output()
            .unwrap_or_else(|e| panic!("broker.sh stop-node: {e}"));
        assert!(out.status.success(), "broker.sh stop-node {id}: {out:?}");
    };
    let kafka_seen = run_cases(&kafka_bootstrap, &run, &stop_kafka);
    drop(kafka);

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
