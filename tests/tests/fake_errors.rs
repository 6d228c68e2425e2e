//! The fake cluster's error paths beside real Kafka 4.4.0 (issue 43): the
//! same requests, written once as JSON, go to a two-broker fake cluster
//! (`kafka-wire-fake`, in this process) and to two real brokers
//! (`tests/kafka/broker.sh --brokers 2`), and the error codes of their
//! answers, every `errorCode` at any depth in order, must be the same.
//! Each request goes where a client would send it: a partition's requests
//! to its leader (or, on purpose, to the broker that does not lead it), a
//! group's or a transaction's to its coordinator. The cases before
//! authentication go to a SASL listener (Kafka's SASL_PLAINTEXT listener of
//! `--sasl`, a fake cluster with SASL users), where a refusal is a closed
//! connection, written `closed`.
//!
//! Prints `errors: N cases; same S; differ D`. Skips without Java, Maven or
//! the broker's jars in ~/.m2, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire::frame::ResponseFrame;
use kafka_wire::ApiKey;
use kafka_wire_fake::{FakeCluster, SaslMechanism};
use kafka_wire_records::RecordBatchBuilder;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::broker::{fit, Session};
use serde_json::{json, Value};

/// The topic every case that needs one uses: one partition.
const TOPIC: &str = "errors";

/// A topic no broker has.
const NO_TOPIC: &str = "no-such-topic";

/// The zero topic id, which stands for "no id" in Metadata requests.
const NO_ID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// A topic id no topic has.
const UNKNOWN_ID: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

/// The SASL user both sides know (PLAIN).
const USER: &str = "errors";
const PASSWORD: &str = "errors-secret";

/// Stands, among a case's codes, for a connection the broker closed
/// instead of answering (printed `closed`).
const CLOSED: i64 = i64::MIN;

/// Every error code in `value` (`errorCode`, or a name ending in
/// `ErrorCode` such as AddPartitionsToTxn's `partitionErrorCode`), at any
/// depth, in document order.
fn error_codes(value: &Value, found: &mut Vec<i64>) {
    match value {
        Value::Object(map) => {
            for (key, field) in map {
                match field.as_i64() {
                    Some(code) if key == "errorCode" || key.ends_with("ErrorCode") => {
                        found.push(code)
                    }
                    _ => error_codes(field, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| error_codes(item, found)),
        _ => {}
    }
}

fn codes(answer: &Value) -> Vec<i64> {
    let mut found = Vec::new();
    error_codes(answer, &mut found);
    found
}

/// A case's codes as the report prints them.
fn show(codes: &[i64]) -> String {
    let shown: Vec<String> = codes
        .iter()
        .map(|&code| match code {
            CLOSED => "closed".to_owned(),
            code => code.to_string(),
        })
        .collect();
    format!("[{}]", shown.join(", "))
}

/// One side (the fake or Kafka): a session per broker, opened when first
/// needed, and where the topic's partition is led.
struct Target {
    /// Every broker's address, by node id (from Metadata).
    addresses: BTreeMap<i64, String>,
    sessions: BTreeMap<i64, Session>,
    /// The node leading partition 0 of [`TOPIC`], and its leader epoch.
    leader: i64,
    leader_epoch: i64,
    /// A SASL listener's address.
    sasl: String,
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
            .or_insert_with(|| Session::connect(&address, "fake-errors"))
    }

    /// The session of the broker leading partition 0 of [`TOPIC`].
    fn leader(&mut self) -> &mut Session {
        self.node(self.leader)
    }

    /// The node id of a broker that does not lead partition 0 of [`TOPIC`].
    fn follower_id(&self) -> i64 {
        self.addresses
            .keys()
            .copied()
            .find(|&id| id != self.leader)
            .unwrap_or_else(|| panic!("no broker but the leader: {:?}", self.addresses))
    }

    /// The session of the coordinator of `key` (`key_type` 0 for a group,
    /// 1 for a transactional id), once it has one, as a client waits.
    fn coordinator(&mut self, key: &str, key_type: i8) -> &mut Session {
        let found = self.leader().json_until(
            ApiKey::FindCoordinator,
            &json!({"key": key, "keyType": key_type, "coordinatorKeys": [key]}),
            |answer| codes(answer).iter().all(|&code| code == 0),
        );
        let id = found["coordinators"][0]["nodeId"]
            .as_i64()
            .or_else(|| found["nodeId"].as_i64())
            .unwrap_or_else(|| panic!("no coordinator: {found}"));
        self.node(id)
    }
}

/// A batch of one record, base64 as the JSON form writes `records`.
fn batch(producer_id: i64, epoch: i16, sequence: i32) -> String {
    batch_of(producer_id, epoch, sequence, false)
}

/// [`batch`], transactional or not.
fn batch_of(producer_id: i64, epoch: i16, sequence: i32, transactional: bool) -> String {
    let mut builder = RecordBatchBuilder::new(0)
        .producer_id(producer_id)
        .producer_epoch(epoch)
        .base_sequence(sequence)
        .transactional(transactional);
    builder
        .append(1_700_000_000_000, Some(b"k"), Some(b"v"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    STANDARD.encode(builder.build().unwrap_or_else(|e| panic!("{e}")))
}

/// Produces `records` to partition 0 of `topic`, named by its name and
/// (from Produce v13 on, where it is the only name) its id: the one
/// Metadata gives, or an id no topic has.
fn produce(session: &mut Session, topic: &str, records: &str) -> Value {
    produce_as(session, topic, records, None)
}

/// [`produce`], for transactional id `transactional` when given.
fn produce_as(
    session: &mut Session,
    topic: &str,
    records: &str,
    transactional: Option<&str>,
) -> Value {
    let id = match topic {
        NO_TOPIC => json!(UNKNOWN_ID),
        _ => topic_id(session, topic),
    };
    session.json(
        ApiKey::Produce,
        &json!({"transactionalId": transactional, "acks": -1, "timeoutMs": 5000, "topicData": [
            {"name": topic, "topicId": id, "partitionData": [{"index": 0, "records": records}]}
        ]}),
    )
}

/// The topic's id, from Metadata.
fn topic_id(session: &mut Session, topic: &str) -> Value {
    let metadata = session.json(
        ApiKey::Metadata,
        &json!({"topics": [{"name": topic, "topicId": NO_ID}], "allowAutoTopicCreation": false}),
    );
    metadata["topics"][0]["topicId"].clone()
}

fn fetch(session: &mut Session, topic: &str, topic_id: &Value, partition: Value) -> Value {
    session.json(
        ApiKey::Fetch,
        &json!({"maxWaitMs": 0, "minBytes": 1, "topics": [
            {"topic": topic, "topicId": topic_id, "partitions": [partition]}
        ]}),
    )
}

/// A fetch of partition 0 of [`TOPIC`] from offset 0.
fn fetch_from_start(session: &mut Session) -> Value {
    let id = topic_id(session, TOPIC);
    fetch(
        session,
        TOPIC,
        &id,
        json!({"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": 0,
               "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1024}),
    )
}

/// What a `NOT_LEADER_OR_FOLLOWER` answer says of the leader (KIP-951),
/// against Metadata, where the version carries it: 1 or 0 for "the
/// current leader is Metadata's", for "its epoch is Metadata's", and for
/// "the answer's node endpoints give Metadata's address for it".
fn current_leader(target: &Target, partition: &Value, answer: &Value) -> Vec<i64> {
    let leader = &partition["currentLeader"];
    if leader.is_null() {
        return Vec::new();
    }
    let mut found = vec![
        i64::from(leader["leaderId"].as_i64() == Some(target.leader)),
        i64::from(leader["leaderEpoch"].as_i64() == Some(target.leader_epoch)),
    ];
    if let Some(endpoints) = answer["nodeEndpoints"].as_array() {
        let address = endpoints
            .iter()
            .find(|e| e["nodeId"].as_i64() == Some(target.leader))
            .map(|e| format!("{}:{}", e["host"].as_str().unwrap_or(""), e["port"]));
        found.push(i64::from(
            address.as_ref() == target.addresses.get(&target.leader),
        ));
    }
    found
}

/// An idempotent producer (no transactional id): the answer's error codes,
/// its producer id and epoch.
fn idempotent(session: &mut Session) -> (Vec<i64>, i64, i16) {
    // Kafka's transaction coordinator loads its partition first.
    let init = session.json_until(
        ApiKey::InitProducerId,
        &json!({"transactionalId": null, "transactionTimeoutMs": 60000}),
        |answer| !matches!(answer["errorCode"].as_i64(), Some(14 | 15)),
    );
    let id = init["producerId"].as_i64().unwrap_or(-1);
    let epoch = init["producerEpoch"].as_i64().unwrap_or(0);
    (codes(&init), id, i16::try_from(epoch).unwrap_or(0))
}

/// A transactional producer's InitProducerId at its coordinator, retried
/// while the coordinator loads or still ends an earlier transaction: the
/// answer's error codes, its producer id and epoch.
fn transactional(target: &mut Target, transactional_id: &str) -> (Vec<i64>, i64, i16) {
    let init = target.coordinator(transactional_id, 1).json_until(
        ApiKey::InitProducerId,
        &json!({"transactionalId": transactional_id, "transactionTimeoutMs": 60000}),
        // Not COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
        // NOT_COORDINATOR or CONCURRENT_TRANSACTIONS.
        |answer| !matches!(answer["errorCode"].as_i64(), Some(14 | 15 | 16 | 51)),
    );
    let id = init["producerId"].as_i64().unwrap_or(-1);
    let epoch = init["producerEpoch"].as_i64().unwrap_or(0);
    (codes(&init), id, i16::try_from(epoch).unwrap_or(0))
}

/// AddPartitionsToTxn of partition 0 of [`TOPIC`], at the highest version
/// a client sends (v3: v4 on are the brokers' batched form).
fn add_partition(target: &mut Target, transactional_id: &str, id: i64, epoch: i16) -> Vec<i64> {
    let session = target.coordinator(transactional_id, 1);
    let version = session.version(ApiKey::AddPartitionsToTxn).min(3);
    codes(&session.json_at(
        ApiKey::AddPartitionsToTxn,
        version,
        &json!({"v3AndBelowTransactionalId": transactional_id, "v3AndBelowProducerId": id,
                "v3AndBelowProducerEpoch": epoch,
                "v3AndBelowTopics": [{"name": TOPIC, "partitions": [0]}]}),
    ))
}

/// EndTxn (a commit) of a transactional producer.
fn end_txn(target: &mut Target, transactional_id: &str, id: i64, epoch: i16) -> Vec<i64> {
    codes(&target.coordinator(transactional_id, 1).json(
        ApiKey::EndTxn,
        &json!({"transactionalId": transactional_id, "producerId": id,
                "producerEpoch": epoch, "committed": true}),
    ))
}

/// A producer of `transactional_id`, fenced by a second InitProducerId of
/// the same id: the codes so far, its producer id and its old epoch.
fn fenced(target: &mut Target, transactional_id: &str) -> (Vec<i64>, i64, i16) {
    let (mut found, id, epoch) = transactional(target, transactional_id);
    let (again, _, _) = transactional(target, transactional_id);
    found.extend(again);
    (found, id, epoch)
}

/// A classic group with one member, at its coordinator: its member id and
/// generation.
fn join(target: &mut Target, group: &str) -> (String, i64) {
    let session = target.coordinator(group, 0);
    let join = |session: &mut Session, member: &str| {
        session.json(
            ApiKey::JoinGroup,
            &json!({"groupId": group, "sessionTimeoutMs": 30000, "rebalanceTimeoutMs": 30000,
                    "memberId": member, "protocolType": "consumer",
                    "protocols": [{"name": "range", "metadata": ""}]}),
        )
    };
    let first = session.json_until(
        ApiKey::JoinGroup,
        &json!({"groupId": group, "sessionTimeoutMs": 30000, "rebalanceTimeoutMs": 30000,
                "memberId": "", "protocolType": "consumer",
                "protocols": [{"name": "range", "metadata": ""}]}),
        // Not yet NOT_COORDINATOR (16) or COORDINATOR_LOAD_IN_PROGRESS (14).
        |answer| !matches!(answer["errorCode"].as_i64(), Some(14 | 16)),
    );
    let member = first["memberId"].as_str().unwrap_or_default().to_owned();
    let joined = join(session, &member);
    assert_eq!(joined["errorCode"], 0, "{joined}");
    let generation = joined["generationId"].as_i64().unwrap_or(-1);
    let synced = session.json(
        ApiKey::SyncGroup,
        &json!({"groupId": group, "generationId": generation, "memberId": member,
                "protocolType": "consumer", "protocolName": "range",
                "assignments": [{"memberId": member, "assignment": ""}]}),
    );
    assert_eq!(synced["errorCode"], 0, "{synced}");
    (member, generation)
}

/// Joins `group` as static member `instance` (with `member`, or "" for a
/// new one) at the coordinator: the whole answer.
fn join_static(target: &mut Target, group: &str, instance: &str, member: &str) -> Value {
    target.coordinator(group, 0).json_until(
        ApiKey::JoinGroup,
        &json!({"groupId": group, "sessionTimeoutMs": 30000, "rebalanceTimeoutMs": 30000,
                "memberId": member, "groupInstanceId": instance, "protocolType": "consumer",
                "protocols": [{"name": "range", "metadata": ""}]}),
        |answer| !matches!(answer["errorCode"].as_i64(), Some(14 | 16)),
    )
}

/// A classic group with one static member, `instance`, synced: its member
/// id and generation.
fn static_member(target: &mut Target, group: &str, instance: &str) -> (String, i64) {
    let joined = join_static(target, group, instance, "");
    assert_eq!(joined["errorCode"], 0, "{joined}");
    let member = joined["memberId"].as_str().unwrap_or_default().to_owned();
    let generation = joined["generationId"].as_i64().unwrap_or(-1);
    let synced = target.coordinator(group, 0).json(
        ApiKey::SyncGroup,
        &json!({"groupId": group, "generationId": generation, "memberId": member,
                "groupInstanceId": instance, "protocolType": "consumer",
                "protocolName": "range",
                "assignments": [{"memberId": member, "assignment": "AAE="}]}),
    );
    assert_eq!(synced["errorCode"], 0, "{synced}");
    (member, generation)
}

/// A static member's Heartbeat, SyncGroup, OffsetCommit and LeaveGroup as
/// `member` of `instance`: their error codes.
fn as_static_member(
    target: &mut Target,
    group: &str,
    instance: &str,
    member: &str,
    generation: i64,
) -> Vec<i64> {
    let id = topic_id(target.leader(), TOPIC);
    let session = target.coordinator(group, 0);
    let mut found = codes(&session.json(
        ApiKey::Heartbeat,
        &json!({"groupId": group, "generationId": generation, "memberId": member,
                "groupInstanceId": instance}),
    ));
    found.extend(codes(&session.json(
        ApiKey::SyncGroup,
        &json!({"groupId": group, "generationId": generation, "memberId": member,
                "groupInstanceId": instance, "protocolType": "consumer",
                "protocolName": "range", "assignments": []}),
    )));
    found.extend(codes(&session.json(
        ApiKey::OffsetCommit,
        &json!({"groupId": group, "generationIdOrMemberEpoch": generation,
                "memberId": member, "groupInstanceId": instance,
                "topics": [{"name": TOPIC, "topicId": id, "partitions": [
                    {"partitionIndex": 0, "committedOffset": 0,
                     "committedLeaderEpoch": -1, "committedMetadata": ""}]}]}),
    )));
    found.extend(codes(&session.json(
        ApiKey::LeaveGroup,
        &json!({"groupId": group, "members": [
            {"memberId": member, "groupInstanceId": instance, "reason": null}]}),
    )));
    found
}

/// Sends `given` at the negotiated version without expecting an answer:
/// its error codes, or [`CLOSED`] when the broker closes the connection.
fn maybe(session: &mut Session, api: ApiKey, given: &Value) -> Vec<i64> {
    let version = session.version(api);
    match session.client.exchange(version, fit(api, version, given)) {
        Ok(Some(frame)) => {
            let answer = ResponseFrame::decode(&frame, api, version)
                .unwrap_or_else(|e| panic!("the {} v{version} answer: {e}", api.name()));
            codes(&answer.body.to_json(version))
        }
        Ok(None) => panic!("{} v{version}: no answer expected", api.name()),
        Err(_) => vec![CLOSED],
    }
}

/// A connection to the SASL listener that has asked ApiVersions only.
fn unauthenticated(target: &Target) -> Session {
    Session::connect(&target.sasl, "fake-errors")
}

/// A Metadata request of no topic (the two sides' SASL listeners are on
/// clusters with other topics).
fn metadata_request() -> Value {
    json!({"topics": [], "allowAutoTopicCreation": false})
}

/// A SASL PLAIN token.
fn plain(user: &str, password: &str) -> String {
    STANDARD.encode(format!("\0{user}\0{password}"))
}

/// The cases: a name, and the error codes a step sequence ends with.
type Case = (&'static str, fn(&mut Target) -> Vec<i64>);

const CASES: &[Case] = &[
    ("metadata of an unknown topic", |t| {
        codes(&t.leader().json(
            ApiKey::Metadata,
            &json!({"topics": [{"name": NO_TOPIC, "topicId": NO_ID}],
                    "allowAutoTopicCreation": false}),
        ))
    }),
    ("produce to an unknown topic", |t| {
        codes(&produce(t.leader(), NO_TOPIC, &batch(-1, -1, -1)))
    }),
    ("fetch of an unknown topic", |t| {
        let unknown = json!(UNKNOWN_ID);
        codes(&fetch(
            t.leader(),
            NO_TOPIC,
            &unknown,
            json!({"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": 0,
                   "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1024}),
        ))
    }),
    (
        "produce to a broker that does not lead the partition (codes, then KIP-951's leader, epoch, endpoint are Metadata's)",
        |t| {
            let follower = t.follower_id();
            let answer = produce(t.node(follower), TOPIC, &batch(-1, -1, -1));
            let mut found = codes(&answer);
            let partition = &answer["responses"][0]["partitionResponses"][0];
            found.extend(current_leader(t, partition, &answer));
            found
        },
    ),
    (
        "fetch from a broker that does not lead the partition (codes, then KIP-951's leader, epoch, endpoint are Metadata's)",
        |t| {
            let follower = t.follower_id();
            let answer = fetch_from_start(t.node(follower));
            let mut found = codes(&answer);
            let partition = &answer["responses"][0]["partitions"][0];
            found.extend(current_leader(t, partition, &answer));
            found
        },
    ),
    ("fetch past the log end", |t| {
        let session = t.leader();
        let id = topic_id(session, TOPIC);
        codes(&fetch(
            session,
            TOPIC,
            &id,
            json!({"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": 1000,
                   "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1024}),
        ))
    }),
    ("fetch with a leader epoch ahead of the broker's", |t| {
        let session = t.leader();
        let id = topic_id(session, TOPIC);
        codes(&fetch(
            session,
            TOPIC,
            &id,
            json!({"partition": 0, "currentLeaderEpoch": 1000, "fetchOffset": 0,
                   "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1024}),
        ))
    }),
    (
        "list offsets with a leader epoch ahead of the broker's",
        |t| {
            codes(&t.leader().json(
                ApiKey::ListOffsets,
                &json!({"replicaId": -1, "topics": [{"name": TOPIC, "partitions": [
                    {"partitionIndex": 0, "currentLeaderEpoch": 1000, "timestamp": -1,
                     "maxNumOffsets": 1}
                ]}]}),
            ))
        },
    ),
    ("an out-of-order sequence", |t| {
        let s = t.leader();
        let (mut found, id, epoch) = idempotent(s);
        found.extend(codes(&produce(s, TOPIC, &batch(id, epoch, 0))));
        found.extend(codes(&produce(s, TOPIC, &batch(id, epoch, 5))));
        found
    }),
    (
        "a new producer's first batch at sequence 5, on a partition never written",
        |t| {
            // KAFKA-15591: Kafka accepted any first sequence from a
            // producer it has no state for, so that a retried first batch
            // met OUT_OF_ORDER_SEQUENCE_NUMBER for ever once a later one
            // had gone in.
            let fresh = "errors-fresh";
            let mut found = create_topic(t.leader(), fresh);
            let leader = ready(t, fresh);
            let s = t.node(leader);
            let (init, id, epoch) = idempotent(s);
            found.extend(init);
            found.extend(codes(&produce(s, fresh, &batch(id, epoch, 5))));
            found
        },
    ),
    ("a producer behind its bumped epoch", |t| {
        let s = t.leader();
        let (mut found, id, epoch) = idempotent(s);
        found.extend(codes(&produce(s, TOPIC, &batch(id, epoch, 0))));
        let bumped = s.json(
            ApiKey::InitProducerId,
            &json!({"transactionalId": null, "transactionTimeoutMs": 60000,
                    "producerId": id, "producerEpoch": epoch}),
        );
        found.extend(codes(&bumped));
        found.extend(codes(&produce(s, TOPIC, &batch(id, epoch, 1))));
        found
    }),
    (
        "a transactional producer's second transaction after a commit by EndTxn v4 (no epoch bump) continues its sequence",
        |t| {
            let txn = "errors-txn-e";
            let (mut found, id, epoch) = transactional(t, txn);
            found.extend(add_partition(t, txn, id, epoch));
            let records = batch_of(id, epoch, 0, true);
            found.extend(codes(&produce_as(t.leader(), TOPIC, &records, Some(txn))));
            found.extend(codes(&t.coordinator(txn, 1).json_at(
                ApiKey::EndTxn,
                4,
                &json!({"transactionalId": txn, "producerId": id, "producerEpoch": epoch,
                        "committed": true}),
            )));
            // Kafka writes the markers after answering: until then it is
            // CONCURRENT_TRANSACTIONS, which clients retry.
            let mut added = add_partition(t, txn, id, epoch);
            for _ in 0..100 {
                if added != [51] {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
                added = add_partition(t, txn, id, epoch);
            }
            found.extend(added);
            let records = batch_of(id, epoch, 1, true);
            found.extend(codes(&produce_as(t.leader(), TOPIC, &records, Some(txn))));
            found
        },
    ),
    ("a fenced transactional producer's AddPartitionsToTxn", |t| {
        let txn = "errors-txn-a";
        let (mut found, id, old) = fenced(t, txn);
        found.extend(add_partition(t, txn, id, old));
        found
    }),
    ("a fenced transactional producer's Produce", |t| {
        let txn = "errors-txn-b";
        let (mut found, id, old) = fenced(t, txn);
        let records = batch_of(id, old, 0, true);
        found.extend(codes(&produce_as(t.leader(), TOPIC, &records, Some(txn))));
        found
    }),
    ("a fenced transactional producer's EndTxn", |t| {
        let txn = "errors-txn-c";
        let (mut found, id, old) = fenced(t, txn);
        found.extend(end_txn(t, txn, id, old));
        found
    }),
    (
        "a transactional producer fenced mid-transaction: its Produce, AddPartitionsToTxn and EndTxn",
        |t| {
            let txn = "errors-txn-d";
            let (mut found, id, old) = transactional(t, txn);
            found.extend(add_partition(t, txn, id, old));
            let records = batch_of(id, old, 0, true);
            found.extend(codes(&produce_as(t.leader(), TOPIC, &records, Some(txn))));
            let (again, _, _) = transactional(t, txn);
            found.extend(again);
            let records = batch_of(id, old, 1, true);
            found.extend(codes(&produce_as(t.leader(), TOPIC, &records, Some(txn))));
            found.extend(add_partition(t, txn, id, old));
            found.extend(end_txn(t, txn, id, old));
            found
        },
    ),
    ("a heartbeat from an unknown member", |t| {
        let _ = join(t, "errors-group-a");
        codes(&t.coordinator("errors-group-a", 0).json(
            ApiKey::Heartbeat,
            &json!({"groupId": "errors-group-a", "generationId": 1, "memberId": "nobody"}),
        ))
    }),
    ("a heartbeat of an illegal generation", |t| {
        let (member, generation) = join(t, "errors-group-b");
        codes(&t.coordinator("errors-group-b", 0).json(
            ApiKey::Heartbeat,
            &json!({"groupId": "errors-group-b", "generationId": generation + 5,
                    "memberId": member}),
        ))
    }),
    ("an offset commit of an illegal generation", |t| {
        let (member, generation) = join(t, "errors-group-c");
        let id = topic_id(t.leader(), TOPIC);
        codes(&t.coordinator("errors-group-c", 0).json(
            ApiKey::OffsetCommit,
            &json!({"groupId": "errors-group-c", "generationIdOrMemberEpoch": generation + 5,
            "memberId": member, "topics": [{"name": TOPIC, "topicId": id, "partitions": [
                {"partitionIndex": 0, "committedOffset": 0,
                 "committedLeaderEpoch": -1, "committedMetadata": ""}
            ]}]}),
        ))
    }),
    ("an offset commit from an unknown member", |t| {
        let _ = join(t, "errors-group-d");
        let id = topic_id(t.leader(), TOPIC);
        codes(&t.coordinator("errors-group-d", 0).json(
            ApiKey::OffsetCommit,
            &json!({"groupId": "errors-group-d", "generationIdOrMemberEpoch": 1,
            "memberId": "nobody", "topics": [{"name": TOPIC, "topicId": id, "partitions": [
                {"partitionIndex": 0, "committedOffset": 0,
                 "committedLeaderEpoch": -1, "committedMetadata": ""}
            ]}]}),
        ))
    }),
    (
        "FindCoordinator of the empty group id and the empty transactional id (v3, and v4 batched)",
        |t| {
            let s = t.leader();
            let mut found = Vec::new();
            for key_type in [0, 1] {
                found.extend(codes(&s.json_at(
                    ApiKey::FindCoordinator,
                    3,
                    &json!({"key": "", "keyType": key_type}),
                )));
                found.extend(codes(&s.json_at(
                    ApiKey::FindCoordinator,
                    4,
                    &json!({"keyType": key_type, "coordinatorKeys": [""]}),
                )));
            }
            found
        },
    ),
    (
        "the empty transactional id's AddOffsetsToTxn and EndTxn, the empty group's OffsetDelete, and DescribeTransactions of an id no producer has (then: its producer id, epoch and start time)",
        |t| {
            let s = t.leader();
            let mut found = codes(&s.json(
                ApiKey::AddOffsetsToTxn,
                &json!({"transactionalId": "", "producerId": 0, "producerEpoch": 0,
                        "groupId": "errors-group-a"}),
            ));
            found.extend(codes(&s.json(
                ApiKey::EndTxn,
                &json!({"transactionalId": "", "producerId": 0, "producerEpoch": 0,
                        "committed": false}),
            )));
            let session = t.coordinator("", 0);
            found.extend(codes(&session.json(
                ApiKey::OffsetDelete,
                &json!({"groupId": "", "topics": []}),
            )));
            let session = t.coordinator("errors-no-producer", 1);
            let described = session.json(
                ApiKey::DescribeTransactions,
                &json!({"transactionalIds": ["errors-no-producer"]}),
            );
            found.extend(codes(&described));
            let state = &described["transactionStates"][0];
            for field in ["producerId", "producerEpoch", "transactionStartTimeMs"] {
                found.push(state[field].as_i64().unwrap_or(i64::MIN));
            }
            found
        },
    ),
    (
        "a static member rejoining with no member id replaces its old id: the old id's heartbeat, sync, commit and leave are fenced (then: same generation, same assignment)",
        |t| {
            let group = "errors-static-a";
            let (old, generation) = static_member(t, group, "instance-a");
            let again = join_static(t, group, "instance-a", "");
            let mut found = codes(&again);
            let new = again["memberId"].as_str().unwrap_or_default().to_owned();
            found.push(i64::from(new != old && !new.is_empty()));
            found.push(i64::from(again["generationId"].as_i64() == Some(generation)));
            found.extend(as_static_member(t, group, "instance-a", &old, generation));
            let synced = t.coordinator(group, 0).json(
                ApiKey::SyncGroup,
                &json!({"groupId": group, "generationId": generation, "memberId": new,
                        "groupInstanceId": "instance-a", "protocolType": "consumer",
                        "protocolName": "range", "assignments": []}),
            );
            found.extend(codes(&synced));
            found.push(i64::from(synced["assignment"] == "AAE="));
            found
        },
    ),
    (
        "a static member's requests under an instance id the group does not know, and a join naming a member id under another's instance",
        |t| {
            let group = "errors-static-b";
            let (member, generation) = static_member(t, group, "instance-b");
            let mut found = as_static_member(t, group, "instance-unknown", &member, generation);
            found.extend(codes(&join_static(t, group, "instance-b", "someone-else")));
            found
        },
    ),
    (
        "a static member removed by its instance id alone (an admin's LeaveGroup), then its heartbeat",
        |t| {
            let group = "errors-static-c";
            let (member, generation) = static_member(t, group, "instance-c");
            let session = t.coordinator(group, 0);
            let mut found = codes(&session.json(
                ApiKey::LeaveGroup,
                &json!({"groupId": group, "members": [
                    {"memberId": "", "groupInstanceId": "instance-c", "reason": null},
                    {"memberId": "", "groupInstanceId": "instance-none", "reason": null}]}),
            ));
            found.extend(codes(&session.json(
                ApiKey::Heartbeat,
                &json!({"groupId": group, "generationId": generation, "memberId": member,
                        "groupInstanceId": "instance-c"}),
            )));
            found
        },
    ),
    ("a topic created twice", |t| {
        let create = json!({"topics": [{"name": "errors-twice", "numPartitions": 1,
                                        "replicationFactor": 1, "assignments": [],
                                        "configs": []}], "timeoutMs": 5000});
        let s = t.leader();
        let mut found = codes(&s.json(ApiKey::CreateTopics, &create));
        found.extend(codes(&s.json(ApiKey::CreateTopics, &create)));
        found
    }),
    ("partitions reduced", |t| {
        codes(&t.leader().json(
            ApiKey::CreatePartitions,
            &json!({"topics": [{"name": TOPIC, "count": 1, "assignments": null}],
                    "timeoutMs": 5000}),
        ))
    }),
    ("records deleted past the log end", |t| {
        codes(&t.leader().json(
            ApiKey::DeleteRecords,
            &json!({"topics": [{"name": TOPIC, "partitions": [
                {"partitionIndex": 0, "offset": 1000}
            ]}], "timeoutMs": 5000}),
        ))
    }),
    (
        "client quotas: none at first, two set (a default user's, a user and client's), read back by filters (counts), bad ones refused, removed",
        |t| {
            let s = t.leader();
            let describe = |s: &mut Session, components: Value, strict: bool, count: usize| {
                let answer = s.json_until(
                    ApiKey::DescribeClientQuotas,
                    &json!({"components": components, "strict": strict}),
                    // Kafka's brokers learn of quotas from the controller.
                    |a| a["entries"].as_array().map_or(0, Vec::len) == count,
                );
                let mut found = codes(&answer);
                found.push(answer["entries"].as_array().map_or(-1, |e| e.len() as i64));
                found
            };
            let default_user = json!([{"entityType": "user", "entityName": null}]);
            let user_client = json!([{"entityType": "user", "entityName": "sarama"},
                                     {"entityType": "client-id", "entityName": "sarama-consumer"}]);
            let mut found = describe(s, json!([]), false, 0);
            found.extend(codes(&s.json(
                ApiKey::AlterClientQuotas,
                &json!({"validateOnly": false, "entries": [
                    {"entity": default_user, "ops": [
                        {"key": "producer_byte_rate", "value": 1024000.0, "remove": false}]},
                    {"entity": user_client, "ops": [
                        {"key": "consumer_byte_rate", "value": 2048000.0, "remove": false}]}]}),
            )));
            found.extend(describe(
                s,
                json!([{"entityType": "user", "matchType": 1, "match": null}]),
                false,
                1,
            ));
            found.extend(describe(
                s,
                json!([{"entityType": "user", "matchType": 0, "match": "sarama"},
                       {"entityType": "client-id", "matchType": 0, "match": "sarama-consumer"}]),
                true,
                1,
            ));
            found.extend(describe(
                s,
                json!([{"entityType": "user", "matchType": 2, "match": null}]),
                false,
                2,
            ));
            found.extend(describe(
                s,
                json!([{"entityType": "user", "matchType": 2, "match": null}]),
                true,
                1,
            ));
            found.extend(describe(
                s,
                json!([{"entityType": "client-id", "matchType": 0, "match": "nobody"}]),
                false,
                0,
            ));
            found.extend(codes(&s.json(
                ApiKey::DescribeClientQuotas,
                &json!({"components": [{"entityType": "bogus", "matchType": 2, "match": null}],
                        "strict": false}),
            )));
            found.extend(codes(&s.json(
                ApiKey::AlterClientQuotas,
                &json!({"validateOnly": true, "entries": [
                    {"entity": default_user, "ops": [
                        {"key": "bogus_rate", "value": 1.0, "remove": false}]},
                    {"entity": [{"entityType": "bogus", "entityName": "x"}], "ops": [
                        {"key": "producer_byte_rate", "value": 1.0, "remove": false}]},
                    {"entity": default_user, "ops": [
                        {"key": "producer_byte_rate", "value": -1.0, "remove": false}]}]}),
            )));
            found.extend(codes(&s.json(
                ApiKey::AlterClientQuotas,
                &json!({"validateOnly": false, "entries": [
                    {"entity": default_user, "ops": [
                        {"key": "producer_byte_rate", "value": 0.0, "remove": true}]},
                    {"entity": user_client, "ops": [
                        {"key": "consumer_byte_rate", "value": 0.0, "remove": true}]}]}),
            )));
            found.extend(describe(s, json!([]), false, 0));
            found
        },
    ),
    (
        "leader elections: preferred (v0, v2) and unclean where the leader is already elected, and of an unknown topic",
        |t| {
            let s = t.leader();
            let elect = |s: &mut Session, version: i16, kind: i64, topic: &str| {
                codes(&s.json_at(
                    ApiKey::ElectLeaders,
                    version,
                    &json!({"electionType": kind, "timeoutMs": 5000,
                            "topicPartitions": [{"topic": topic, "partitions": [0]}]}),
                ))
            };
            let mut found = elect(s, 0, 0, TOPIC);
            found.extend(elect(s, 2, 0, TOPIC));
            found.extend(elect(s, 2, 1, TOPIC));
            found.extend(elect(s, 2, 0, NO_TOPIC));
            found
        },
    ),
    (
        "partition reassignments: none listed, a cancel with none under way, to a broker that does not exist, of an unknown topic, then one that grows a partition to both brokers (then: its replicas and ISR)",
        |t| {
            let topic = "errors-reassign";
            let mut found = create_topic(t.leader(), topic);
            let leader = ready(t, topic);
            let other = t.addresses.keys().copied().find(|n| *n != leader).unwrap_or(-1);
            let s = t.leader();
            let alter = |s: &mut Session, topic: &str, replicas: Value| {
                codes(&s.json(
                    ApiKey::AlterPartitionReassignments,
                    &json!({"timeoutMs": 5000, "topics": [{"name": topic, "partitions": [
                        {"partitionIndex": 0, "replicas": replicas}]}]}),
                ))
            };
            let list = |s: &mut Session| {
                s.json_until(
                    ApiKey::ListPartitionReassignments,
                    &json!({"timeoutMs": 5000, "topics": null}),
                    |a| a["topics"].as_array().is_some_and(Vec::is_empty),
                )
            };
            found.extend(codes(&list(s)));
            found.extend(alter(s, topic, Value::Null));
            found.extend(alter(s, topic, json!([leader, 1000])));
            found.extend(alter(s, topic, json!([leader, leader])));
            found.extend(alter(s, NO_TOPIC, json!([leader])));
            found.extend(alter(s, topic, json!([other, leader])));
            found.extend(codes(&list(s)));
            let metadata = s.json_until(ApiKey::Metadata, &metadata_of(topic), |m| {
                m["topics"][0]["partitions"][0]["isrNodes"]
                    .as_array()
                    .is_some_and(|isr| isr.len() == 2)
            });
            let partition = &metadata["topics"][0]["partitions"][0];
            found.push(i64::from(partition["replicaNodes"] == json!([other, leader])));
            found
        },
    ),
    (
        "log dirs of the topic at its leader and at the other broker (then: the partition listed at each, total and usable bytes given)",
        |t| {
            let follower = t.follower_id();
            let mut found = Vec::new();
            for node in [t.leader, follower] {
                let answer = t.node(node).json(
                    ApiKey::DescribeLogDirs,
                    &json!({"topics": [{"topic": TOPIC, "partitions": [0]}]}),
                );
                found.extend(codes(&answer));
                let dirs = answer["results"].as_array().cloned().unwrap_or_default();
                let listed = dirs.iter().any(|d| {
                    d["topics"].as_array().into_iter().flatten().any(|topic| {
                        topic["name"] == TOPIC && topic["partitions"][0]["partitionIndex"] == 0
                    })
                });
                found.push(i64::from(listed));
                found.push(i64::from(dirs.iter().all(|d| {
                    d["totalBytes"].as_i64().is_some_and(|b| b > 0)
                        && d["usableBytes"].as_i64().is_some_and(|b| b > 0)
                })));
            }
            found
        },
    ),
    (
        "feature updates (v0, as sarama sends them, and v1): an unknown feature, one above its highest level, one at its level, a downgrade validated only",
        |t| {
            let s = t.leader();
            let update = |s: &mut Session, version: i16, updates: Value, validate: bool| {
                codes(&s.json_at(
                    ApiKey::UpdateFeatures,
                    version,
                    &json!({"timeoutMs": 5000, "featureUpdates": updates, "validateOnly": validate}),
                ))
            };
            let unknown = json!([{"feature": "no.such.feature", "maxVersionLevel": 1,
                                  "allowDowngrade": false, "upgradeType": 1}]);
            let above = json!([{"feature": "group.version", "maxVersionLevel": 100,
                                "allowDowngrade": false, "upgradeType": 1}]);
            let same = json!([{"feature": "group.version", "maxVersionLevel": 1,
                               "allowDowngrade": false, "upgradeType": 1}]);
            let down = json!([{"feature": "group.version", "maxVersionLevel": 0,
                               "allowDowngrade": true, "upgradeType": 2}]);
            let mut found = Vec::new();
            for version in [0, 1] {
                found.extend(update(s, version, unknown.clone(), false));
                found.extend(update(s, version, above.clone(), false));
                found.extend(update(s, version, same.clone(), false));
            }
            found.extend(update(s, 1, down, true));
            found
        },
    ),
    ("a SaslHandshake on a listener without SASL", |t| {
        maybe(
            t.leader(),
            ApiKey::SaslHandshake,
            &json!({"mechanism": "PLAIN"}),
        )
    }),
    ("a SaslAuthenticate on a listener without SASL", |t| {
        let token = plain(USER, PASSWORD);
        let mut found = maybe(t.leader(), ApiKey::SaslAuthenticate, &json!({"authBytes": token}));
        found.extend(maybe(t.leader(), ApiKey::Metadata, &metadata_request()));
        found
    }),
    (
        "a request before SASL authentication (no handshake)",
        |t| {
            let mut session = unauthenticated(t);
            maybe(&mut session, ApiKey::Metadata, &metadata_request())
        },
    ),
    (
        "a request after the SASL handshake, before SaslAuthenticate",
        |t| {
            let mut session = unauthenticated(t);
            let mut found = maybe(&mut session, ApiKey::SaslHandshake, &json!({"mechanism": "PLAIN"}));
            found.extend(maybe(&mut session, ApiKey::Metadata, &metadata_request()));
            found.extend(maybe(&mut session, ApiKey::Metadata, &metadata_request()));
            found
        },
    ),
    ("a second SASL handshake during the exchange", |t| {
        let mut session = unauthenticated(t);
        let handshake = json!({"mechanism": "PLAIN"});
        let mut found = maybe(&mut session, ApiKey::SaslHandshake, &handshake);
        found.extend(maybe(&mut session, ApiKey::SaslHandshake, &handshake));
        found.extend(maybe(&mut session, ApiKey::Metadata, &metadata_request()));
        found
    }),
    ("a SASL handshake of a mechanism not enabled", |t| {
        let mut session = unauthenticated(t);
        let mut found = maybe(&mut session, ApiKey::SaslHandshake, &json!({"mechanism": "GSSAPI"}));
        found.extend(maybe(&mut session, ApiKey::Metadata, &metadata_request()));
        found
    }),
    (
        "SASL PLAIN with a wrong password, then a request",
        |t| {
            let mut session = unauthenticated(t);
            let mut found = maybe(&mut session, ApiKey::SaslHandshake, &json!({"mechanism": "PLAIN"}));
            found.extend(maybe(
                &mut session,
                ApiKey::SaslAuthenticate,
                &json!({"authBytes": plain(USER, "wrong")}),
            ));
            found.extend(maybe(&mut session, ApiKey::Metadata, &metadata_request()));
            found
        },
    ),
    ("SASL PLAIN authenticated, then a request", |t| {
        let mut session = unauthenticated(t);
        let mut found = maybe(&mut session, ApiKey::SaslHandshake, &json!({"mechanism": "PLAIN"}));
        found.extend(maybe(
            &mut session,
            ApiKey::SaslAuthenticate,
            &json!({"authBytes": plain(USER, PASSWORD)}),
        ));
        found.extend(maybe(&mut session, ApiKey::Metadata, &metadata_request()));
        found
    }),
];

/// Creates `topic` with one partition: the answer's error codes.
fn create_topic(session: &mut Session, topic: &str) -> Vec<i64> {
    codes(&session.json(
        ApiKey::CreateTopics,
        &json!({"topics": [{"name": topic, "numPartitions": 1, "replicationFactor": 1,
                             "assignments": [], "configs": []}],
                "timeoutMs": 5000}),
    ))
}

/// A Metadata request for `topic` alone, creating nothing.
fn metadata_of(topic: &str) -> Value {
    json!({"topics": [{"name": topic, "topicId": NO_ID}], "allowAutoTopicCreation": false})
}

/// Whether a Metadata answer names a leader for the partition, without
/// an error.
fn led(answer: &Value) -> bool {
    let partition = &answer["topics"][0]["partitions"][0];
    codes(answer).iter().all(|&code| code == 0) && partition["leaderId"].as_i64() >= Some(0)
}

/// Waits, as a client does, until every broker knows `topic` (Kafka's
/// follow the metadata a moment later, and one that does not know it
/// answers UNKNOWN_TOPIC_OR_PARTITION) and its leader serves it; returns
/// the leader's node id.
fn ready(target: &mut Target, topic: &str) -> i64 {
    let mut leader = -1;
    for id in target.addresses.keys().copied().collect::<Vec<_>>() {
        let metadata = target
            .node(id)
            .json_until(ApiKey::Metadata, &metadata_of(topic), led);
        leader = metadata["topics"][0]["partitions"][0]["leaderId"]
            .as_i64()
            .unwrap_or(-1);
    }
    target.node(leader).json_until(
        ApiKey::ListOffsets,
        &json!({"replicaId": -1, "topics": [{"name": topic, "partitions": [
            {"partitionIndex": 0, "currentLeaderEpoch": -1, "timestamp": -1, "maxNumOffsets": 1}
        ]}]}),
        |answer| codes(answer).iter().all(|&code| code == 0),
    );
    leader
}

/// Runs every case against the brokers behind `bootstrap`, after creating
/// the topic; the cases before authentication go to `sasl`.
fn run_cases(bootstrap: &str, sasl: &str) -> Vec<Vec<i64>> {
    let mut session = Session::connect(bootstrap, "fake-errors");
    let created = create_topic(&mut session, TOPIC);
    assert!(created.iter().all(|&code| code == 0), "{created:?}");
    // Until its partition has a leader, as a client waits.
    let metadata = session.json_until(ApiKey::Metadata, &metadata_of(TOPIC), led);
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
    let mut target = Target {
        leader: -1,
        leader_epoch: -1,
        addresses,
        sessions: BTreeMap::new(),
        sasl: sasl.to_owned(),
    };
    assert!(target.addresses.len() >= 2, "{metadata}");
    target.leader = ready(&mut target, TOPIC);
    let metadata = target.leader().json(ApiKey::Metadata, &metadata_of(TOPIC));
    target.leader_epoch = metadata["topics"][0]["partitions"][0]["leaderEpoch"]
        .as_i64()
        .unwrap_or(-1);
    CASES.iter().map(|(_, case)| case(&mut target)).collect()
}

#[test]
fn the_fake_answers_errors_as_kafka_does() {
    let _one = one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let (fake, sasl_fake) = runtime.block_on(async {
        let fake = FakeCluster::builder().brokers(2).start().await;
        let sasl = FakeCluster::builder()
            .brokers(1)
            .sasl_user(SaslMechanism::Plain, USER, PASSWORD)
            .sasl_user(SaslMechanism::ScramSha256, USER, PASSWORD)
            .start()
            .await;
        (fake, sasl)
    });
    let fake = fake.unwrap_or_else(|e| panic!("the fake cluster: {e}"));
    let sasl_fake = sasl_fake.unwrap_or_else(|e| panic!("the SASL fake cluster: {e}"));
    // One address of each (`bootstrap` lists every broker's).
    let first = |cluster: &FakeCluster| {
        let bootstrap = cluster.bootstrap();
        bootstrap.split(',').next().unwrap_or_default().to_owned()
    };
    let (bootstrap, sasl) = (first(&fake), first(&sasl_fake));
    let fake_codes = std::thread::scope(|scope| {
        scope
            .spawn(|| run_cases(&bootstrap, &sasl))
            .join()
            .unwrap_or_else(|_| panic!("the cases against the fake panicked"))
    });
    runtime.block_on(async {
        fake.shutdown().await.ok();
        sasl_fake.shutdown().await.ok();
    });

    let credentials = format!("{USER}:{PASSWORD}");
    let options = ["--brokers", "2", "--sasl", &credentials];
    let Some(kafka) = Kafka::start("fake-errors", &pinned_version(), &options) else {
        return;
    };
    let kafka_codes = run_cases(kafka.bootstrap(), kafka.get("sasl_bootstrap"));
    drop(kafka);

    let mut differ = Vec::new();
    for (((name, _), kafka), fake) in CASES.iter().zip(&kafka_codes).zip(&fake_codes) {
        let line = format!("{name}: kafka {}, fake {}", show(kafka), show(fake));
        println!("{line}");
        if kafka != fake {
            differ.push(line);
        }
    }
    let line = format!(
        "errors: {} cases; same {}; differ {}",
        CASES.len(),
        CASES.len() - differ.len(),
        differ.len()
    );
    kafka_wire_tests::clients::say(&line);
    assert!(differ.is_empty(), "{line}\n{}", differ.join("\n"));
}
