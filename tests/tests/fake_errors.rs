//! The fake cluster's error paths beside real Kafka 4.4.0 (issue 43): the
//! same requests, written once as JSON, go to a one-broker fake cluster
//! (`kafka-wire-fake`, in this process) and to a real broker
//! (`tests/kafka/broker.sh`), and the error codes of their answers, every
//! `errorCode` at any depth in order, must be the same.
//!
//! Prints `errors: N cases; same S; differ D`. Skips without Java, Maven or
//! the broker's jars in ~/.m2, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire::ApiKey;
use kafka_wire_fake::FakeCluster;
use kafka_wire_records::RecordBatchBuilder;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::broker::Session;
use serde_json::{json, Value};

/// The topic every case that needs one uses: one partition.
const TOPIC: &str = "errors";

/// The zero topic id, which stands for "no id" in Metadata requests.
const NO_ID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// A topic id no topic has.
const UNKNOWN_ID: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

/// Every `errorCode` in `value`, at any depth, in document order.
fn error_codes(value: &Value, found: &mut Vec<i64>) {
    match value {
        Value::Object(map) => {
            for (key, field) in map {
                match (key.as_str(), field.as_i64()) {
                    ("errorCode", Some(code)) => found.push(code),
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

/// A batch of one record, base64 as the JSON form writes `records`.
fn batch(producer_id: i64, epoch: i16, sequence: i32) -> String {
    let mut builder = RecordBatchBuilder::new(0)
        .producer_id(producer_id)
        .producer_epoch(epoch)
        .base_sequence(sequence);
    builder
        .append(1_700_000_000_000, Some(b"k"), Some(b"v"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    STANDARD.encode(builder.build().unwrap_or_else(|e| panic!("{e}")))
}

/// Produces `records` to partition 0 of `topic`, named by its name and
/// (from Produce v13 on, where it is the only name) its id: the one
/// Metadata gives, or an id no topic has.
fn produce(session: &mut Session, topic: &str, records: &str) -> Value {
    let id = match topic {
        TOPIC => topic_id(session, topic),
        _ => json!(UNKNOWN_ID),
    };
    session.json(
        ApiKey::Produce,
        &json!({"acks": -1, "timeoutMs": 5000, "topicData": [
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

/// A classic group with one member: its member id and generation.
fn join(session: &mut Session, group: &str) -> (String, i64) {
    let join = |session: &mut Session, member: &str| {
        session.json(
            ApiKey::JoinGroup,
            &json!({"groupId": group, "sessionTimeoutMs": 30000, "rebalanceTimeoutMs": 30000,
                    "memberId": member, "protocolType": "consumer",
                    "protocols": [{"name": "range", "metadata": ""}]}),
        )
    };
    // Kafka's group coordinator loads its partition first: wait for it,
    // as a client does.
    session.json_until(
        ApiKey::FindCoordinator,
        &json!({"key": group, "keyType": 0, "coordinatorKeys": [group]}),
        |answer| codes(answer).iter().all(|&code| code == 0),
    );
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

/// The cases: a name, and the error codes a step sequence ends with.
type Case = (&'static str, fn(&mut Session) -> Vec<i64>);

const CASES: &[Case] = &[
    ("metadata of an unknown topic", |s| {
        codes(&s.json(
            ApiKey::Metadata,
            &json!({"topics": [{"name": "no-such-topic", "topicId": NO_ID}],
                    "allowAutoTopicCreation": false}),
        ))
    }),
    ("produce to an unknown topic", |s| {
        codes(&produce(s, "no-such-topic", &batch(-1, -1, -1)))
    }),
    ("fetch of an unknown topic", |s| {
        let unknown = json!(UNKNOWN_ID);
        codes(&fetch(
            s,
            "no-such-topic",
            &unknown,
            json!({"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": 0,
                   "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1024}),
        ))
    }),
    ("fetch past the log end", |s| {
        let id = topic_id(s, TOPIC);
        codes(&fetch(
            s,
            TOPIC,
            &id,
            json!({"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": 1000,
                   "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1024}),
        ))
    }),
    ("fetch with a leader epoch ahead of the broker's", |s| {
        let id = topic_id(s, TOPIC);
        codes(&fetch(
            s,
            TOPIC,
            &id,
            json!({"partition": 0, "currentLeaderEpoch": 1000, "fetchOffset": 0,
                   "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1024}),
        ))
    }),
    (
        "list offsets with a leader epoch ahead of the broker's",
        |s| {
            codes(&s.json(
                ApiKey::ListOffsets,
                &json!({"replicaId": -1, "topics": [{"name": TOPIC, "partitions": [
                    {"partitionIndex": 0, "currentLeaderEpoch": 1000, "timestamp": -1,
                     "maxNumOffsets": 1}
                ]}]}),
            ))
        },
    ),
    ("an out-of-order sequence", |s| {
        let (mut found, id, epoch) = idempotent(s);
        found.extend(codes(&produce(s, TOPIC, &batch(id, epoch, 0))));
        found.extend(codes(&produce(s, TOPIC, &batch(id, epoch, 5))));
        found
    }),
    ("a producer behind its bumped epoch", |s| {
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
    ("a heartbeat from an unknown member", |s| {
        let _ = join(s, "errors-group-a");
        codes(&s.json(
            ApiKey::Heartbeat,
            &json!({"groupId": "errors-group-a", "generationId": 1, "memberId": "nobody"}),
        ))
    }),
    ("a heartbeat of an illegal generation", |s| {
        let (member, generation) = join(s, "errors-group-b");
        codes(&s.json(
            ApiKey::Heartbeat,
            &json!({"groupId": "errors-group-b", "generationId": generation + 5,
                    "memberId": member}),
        ))
    }),
    ("an offset commit of an illegal generation", |s| {
        let (member, generation) = join(s, "errors-group-c");
        let id = topic_id(s, TOPIC);
        codes(&s.json(
            ApiKey::OffsetCommit,
            &json!({"groupId": "errors-group-c", "generationIdOrMemberEpoch": generation + 5,
            "memberId": member, "topics": [{"name": TOPIC, "topicId": id, "partitions": [
                {"partitionIndex": 0, "committedOffset": 0,
                 "committedLeaderEpoch": -1, "committedMetadata": ""}
            ]}]}),
        ))
    }),
    ("an offset commit from an unknown member", |s| {
        let _ = join(s, "errors-group-d");
        let id = topic_id(s, TOPIC);
        codes(&s.json(
            ApiKey::OffsetCommit,
            &json!({"groupId": "errors-group-d", "generationIdOrMemberEpoch": 1,
            "memberId": "nobody", "topics": [{"name": TOPIC, "topicId": id, "partitions": [
                {"partitionIndex": 0, "committedOffset": 0,
                 "committedLeaderEpoch": -1, "committedMetadata": ""}
            ]}]}),
        ))
    }),
    ("a topic created twice", |s| {
        let create = json!({"topics": [{"name": "errors-twice", "numPartitions": 1,
                                        "replicationFactor": 1, "assignments": [],
                                        "configs": []}], "timeoutMs": 5000});
        let mut found = codes(&s.json(ApiKey::CreateTopics, &create));
        found.extend(codes(&s.json(ApiKey::CreateTopics, &create)));
        found
    }),
    ("partitions reduced", |s| {
        codes(&s.json(
            ApiKey::CreatePartitions,
            &json!({"topics": [{"name": TOPIC, "count": 1, "assignments": null}],
                    "timeoutMs": 5000}),
        ))
    }),
    ("records deleted past the log end", |s| {
        codes(&s.json(
            ApiKey::DeleteRecords,
            &json!({"topics": [{"name": TOPIC, "partitions": [
                {"partitionIndex": 0, "offset": 1000}
            ]}], "timeoutMs": 5000}),
        ))
    }),
];

/// Runs every case against `address`, after creating the topic.
fn run_cases(address: &str) -> Vec<Vec<i64>> {
    let mut session = Session::connect(address, "fake-errors");
    let created = session.json(
        ApiKey::CreateTopics,
        &json!({"topics": [{"name": TOPIC, "numPartitions": 1, "replicationFactor": 1,
                             "assignments": [], "configs": []}],
                "timeoutMs": 5000}),
    );
    assert_eq!(codes(&created), [0], "{created}");
    // Until its partition has a leader, as a client waits.
    session.json_until(
        ApiKey::Metadata,
        &json!({"topics": [{"name": TOPIC, "topicId": NO_ID}], "allowAutoTopicCreation": false}),
        |answer| {
            let partition = &answer["topics"][0]["partitions"][0];
            codes(answer).iter().all(|&code| code == 0) && partition["leaderId"].as_i64() >= Some(0)
        },
    );
    // ... and its leader serves it (Kafka's replica manager follows the
    // metadata a moment later).
    session.json_until(
        ApiKey::ListOffsets,
        &json!({"replicaId": -1, "topics": [{"name": TOPIC, "partitions": [
            {"partitionIndex": 0, "currentLeaderEpoch": -1, "timestamp": -1, "maxNumOffsets": 1}
        ]}]}),
        |answer| codes(answer).iter().all(|&code| code == 0),
    );
    CASES.iter().map(|(_, case)| case(&mut session)).collect()
}

#[test]
fn the_fake_answers_errors_as_kafka_does() {
    let _one = one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let fake = runtime
        .block_on(FakeCluster::builder().brokers(1).start())
        .unwrap_or_else(|e| panic!("the fake cluster: {e}"));
    let bootstrap = fake.bootstrap();
    let fake_codes = std::thread::scope(|scope| {
        scope
            .spawn(|| run_cases(&bootstrap))
            .join()
            .unwrap_or_else(|_| panic!("the cases against the fake panicked"))
    });
    runtime.block_on(async { fake.shutdown().await.ok() });

    let Some(kafka) = Kafka::start("fake-errors", &pinned_version(), &[]) else {
        return;
    };
    let kafka_codes = run_cases(kafka.bootstrap());
    drop(kafka);

    let mut differ = Vec::new();
    for (((name, _), kafka), fake) in CASES.iter().zip(&kafka_codes).zip(&fake_codes) {
        let line = format!("{name}: kafka {kafka:?}, fake {fake:?}");
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
