//! Groups driven by kafka-wire against the real group coordinator, each a
//! real exchange whose answers are checked:
//!
//! - a classic consumer group: FindCoordinator, JoinGroup (twice: the
//!   broker first hands out the member id), SyncGroup with a consumer
//!   protocol assignment, Heartbeat, OffsetCommit, OffsetFetch, LeaveGroup;
//! - a KIP-848 consumer group: ConsumerGroupHeartbeat until the partition
//!   is assigned, OffsetCommit and OffsetFetch at the member epoch, and a
//!   leaving heartbeat;
//! - a share group: ShareGroupHeartbeat until the partition is assigned,
//!   ShareFetch until records are acquired, ShareAcknowledge accepting
//!   them, and a leaving heartbeat.
//!
//! Kafka 4.4.0 formats storage with share groups enabled (share.version 2)
//! by default, so nothing needs enabling.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire::messages::{
    consumer_protocol_assignment, ConsumerProtocolAssignment, ConsumerProtocolSubscription,
};
use kafka_wire::runtime::Message;
use kafka_wire::ApiKey;
use kafka_wire_records::{Batch, Batches, DecodeOptions};
use kafka_wire_test_support::kafka::Kafka;
use kafka_wire_tests::broker::Session;
use serde_json::{json, Value};

/// How many exchanges each group made, for the summary line.
#[derive(Debug, Default)]
pub struct Counts {
    pub classic: usize,
    pub consumer: usize,
    pub share: usize,
    pub share_records: usize,
}

/// Runs the three groups on `topic` (one partition, holding `records`
/// records from offset 0), whose id is `topic_id`.
pub fn run(kafka: &Kafka, topic: &str, topic_id: &str) -> Counts {
    Counts {
        classic: classic(kafka, topic, topic_id),
        consumer: consumer(kafka, topic, topic_id),
        ..share(kafka, topic, topic_id)
    }
}

/// A consumer protocol message: its version as an int16, then its body.
fn consumer_protocol<'a, M: Message<'a>>(message: &M, version: i16) -> String {
    let mut bytes = version.to_be_bytes().to_vec();
    bytes.extend_from_slice(&message.to_bytes(version).unwrap());
    STANDARD.encode(bytes)
}

fn find_coordinator(session: &mut Session, group: &str) -> usize {
    let found = session.json_until(
        ApiKey::FindCoordinator,
        &json!({"key": group, "keyType": 0, "coordinatorKeys": [group]}),
        |answer| answer["coordinators"][0]["errorCode"] == 0,
    );
    assert_eq!(found["coordinators"][0]["nodeId"], 1, "{found}");
    1
}

fn classic(kafka: &Kafka, topic: &str, topic_id: &str) -> usize {
    let group = "kw-classic";
    let mut session = Session::connect(kafka.bootstrap(), "kw-classic-member");
    let mut exchanges = find_coordinator(&mut session, group);
    let subscription = ConsumerProtocolSubscription {
        topics: vec![topic.into()],
        ..Default::default()
    };
    let join = |member: &str| {
        json!({
            "groupId": group,
            "sessionTimeoutMs": 30_000,
            "rebalanceTimeoutMs": 30_000,
            "memberId": member,
            "groupInstanceId": null,
            "protocolType": "consumer",
            "protocols": [{"name": "range", "metadata": consumer_protocol(&subscription, 3)}],
            "reason": "kafka-wire joins"
        })
    };
    // The first join of a member without id is answered with its id and
    // MEMBER_ID_REQUIRED (79), once the coordinator has loaded the group's
    // offsets partition: until then it answers COORDINATOR_LOAD_IN_PROGRESS
    // (14), which clients retry.
    let first = session.json_until(ApiKey::JoinGroup, &join(""), |answer| {
        answer["errorCode"] != 14
    });
    assert_eq!(first["errorCode"], 79, "{first}");
    let member = first["memberId"].as_str().unwrap().to_owned();
    assert!(member.starts_with("kw-classic-member-"), "{first}");
    let joined = session.json(ApiKey::JoinGroup, &join(&member));
    exchanges += 2;
    assert_eq!(joined["errorCode"], 0, "{joined}");
    assert_eq!(joined["leader"], member.as_str());
    assert_eq!(joined["protocolName"], "range");
    let generation = joined["generationId"].as_i64().unwrap();
    assert!(generation >= 1);
    let members = joined["members"].as_array().unwrap();
    assert_eq!(members.len(), 1, "{joined}");
    assert_eq!(members[0]["memberId"], member.as_str());
    let metadata = STANDARD
        .decode(members[0]["metadata"].as_str().unwrap())
        .unwrap();
    let version = i16::from_be_bytes([metadata[0], metadata[1]]);
    let echoed = ConsumerProtocolSubscription::decode(&metadata[2..], version).unwrap();
    assert_eq!(echoed.topics, [topic]);

    let assignment = ConsumerProtocolAssignment {
        assigned_partitions: vec![consumer_protocol_assignment::TopicPartition {
            topic: topic.into(),
            partitions: vec![0].into(),
        }]
        .into(),
        ..Default::default()
    };
    let assignment = consumer_protocol(&assignment, 3);
    let synced = session.json(
        ApiKey::SyncGroup,
        &json!({
            "groupId": group,
            "generationId": generation,
            "memberId": member,
            "groupInstanceId": null,
            "protocolType": "consumer",
            "protocolName": "range",
            "assignments": [{"memberId": member, "assignment": assignment}]
        }),
    );
    assert_eq!(synced["errorCode"], 0, "{synced}");
    assert_eq!(synced["assignment"], assignment.as_str());

    let beat = session.json(
        ApiKey::Heartbeat,
        &json!({"groupId": group, "generationId": generation, "memberId": member,
                "groupInstanceId": null}),
    );
    assert_eq!(beat["errorCode"], 0, "{beat}");
    exchanges += 2;

    exchanges += commit_and_fetch(&mut session, group, &member, generation, topic, topic_id, 3);

    let left = session.json(
        ApiKey::LeaveGroup,
        &json!({"groupId": group, "memberId": member,
                "members": [{"memberId": member, "groupInstanceId": null, "reason": "done"}]}),
    );
    assert_eq!(left["errorCode"], 0, "{left}");
    assert_eq!(left["members"][0]["errorCode"], 0, "{left}");
    let described = session.json(ApiKey::DescribeGroups, &json!({"groups": [group]}));
    assert_eq!(described["groups"][0]["groupState"], "Empty", "{described}");
    exchanges + 2
}

/// OffsetCommit then OffsetFetch of `offset` on partition 0, as `member` at
/// `epoch` (a classic generation, or a KIP-848 member epoch).
fn commit_and_fetch(
    session: &mut Session,
    group: &str,
    member: &str,
    epoch: i64,
    topic: &str,
    topic_id: &str,
    offset: i64,
) -> usize {
    let committed = session.json(
        ApiKey::OffsetCommit,
        &json!({
            "groupId": group,
            "generationIdOrMemberEpoch": epoch,
            "memberId": member,
            "groupInstanceId": null,
            "topics": [{"name": topic, "topicId": topic_id, "partitions": [{
                "partitionIndex": 0,
                "committedOffset": offset,
                "committedLeaderEpoch": -1,
                "committedMetadata": format!("{group} was here")
            }]}]
        }),
    );
    assert_eq!(
        committed["topics"][0]["partitions"][0]["errorCode"], 0,
        "{committed}"
    );
    let fetched = session.json(
        ApiKey::OffsetFetch,
        &json!({
            "groupId": group,
            "topics": [{"name": topic, "partitionIndexes": [0]}],
            "groups": [{
                "groupId": group,
                "memberId": member,
                "memberEpoch": epoch,
                "topics": [{"name": topic, "topicId": topic_id, "partitionIndexes": [0]}]
            }],
            "requireStable": true
        }),
    );
    let group_answer = &fetched["groups"][0];
    assert_eq!(group_answer["errorCode"], 0, "{fetched}");
    let partition = &group_answer["topics"][0]["partitions"][0];
    assert_eq!(partition["errorCode"], 0, "{fetched}");
    assert_eq!(partition["committedOffset"], offset, "{fetched}");
    assert_eq!(partition["metadata"], format!("{group} was here"));
    2
}

/// A member id as KIP-848 clients make one: a random uuid, here fixed.
fn member_id(seed: u8) -> String {
    let bytes: Vec<u8> = (0..16u8)
        .map(|i| i.wrapping_mul(31).wrapping_add(seed))
        .collect();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn assigned(answer: &Value, topic_id: &str) -> bool {
    answer["assignment"]["topicPartitions"]
        .as_array()
        .is_some_and(|topics| {
            topics
                .iter()
                .any(|t| t["topicId"] == topic_id && t["partitions"] == json!([0]))
        })
}

fn consumer(kafka: &Kafka, topic: &str, topic_id: &str) -> usize {
    let group = "kw-consumer";
    let member = member_id(1);
    let mut session = Session::connect(kafka.bootstrap(), "kw-848-member");
    let mut exchanges = find_coordinator(&mut session, group);
    let mut epoch = 0;
    let mut owned = json!([]);
    let mut beats = 0;
    let answer = loop {
        let answer = session.json(
            ApiKey::ConsumerGroupHeartbeat,
            &json!({
                "groupId": group,
                "memberId": member,
                "memberEpoch": epoch,
                "rackId": null,
                "rebalanceTimeoutMs": 30_000,
                "subscribedTopicNames": [topic],
                "serverAssignor": "uniform",
                "topicPartitions": owned
            }),
        );
        beats += 1;
        assert_eq!(answer["errorCode"], 0, "{answer}");
        assert_eq!(answer["memberId"], member.as_str(), "{answer}");
        epoch = answer["memberEpoch"].as_i64().unwrap();
        assert!(epoch >= 1, "{answer}");
        if assigned(&answer, topic_id) {
            break answer;
        }
        assert!(beats < 100, "no assignment: {answer}");
        if !answer["assignment"].is_null() {
            owned = answer["assignment"]["topicPartitions"].clone();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        answer["heartbeatIntervalMs"].as_i64().unwrap() > 0,
        "{answer}"
    );
    exchanges += beats;
    exchanges += commit_and_fetch(&mut session, group, &member, epoch, topic, topic_id, 5);
    let left = session.json(
        ApiKey::ConsumerGroupHeartbeat,
        &json!({"groupId": group, "memberId": member, "memberEpoch": -1}),
    );
    assert_eq!(left["errorCode"], 0, "{left}");
    assert_eq!(left["memberEpoch"], -1, "{left}");
    let described = session.json(
        ApiKey::ConsumerGroupDescribe,
        &json!({"groupIds": [group], "includeAuthorizedOperations": false}),
    );
    let described = &described["groups"][0];
    assert_eq!(described["errorCode"], 0, "{described}");
    assert_eq!(described["members"], json!([]), "{described}");
    exchanges + 2
}

fn share(kafka: &Kafka, topic: &str, topic_id: &str) -> Counts {
    let group = "kw-share";
    let member = member_id(2);
    let mut session = Session::connect(kafka.bootstrap(), "kw-share-member");
    // A share group starts at the latest offset unless told otherwise.
    let altered = session.json(
        ApiKey::IncrementalAlterConfigs,
        &json!({"resources": [{"resourceType": 32, "resourceName": group, "configs": [
            {"name": "share.auto.offset.reset", "configOperation": 0, "value": "earliest"}
        ]}], "validateOnly": false}),
    );
    assert_eq!(altered["responses"][0]["errorCode"], 0, "{altered}");
    // The change reaches the broker through the metadata log, a moment
    // later: a share partition that starts before it would start at the
    // latest offset. Wait until the broker describes it.
    let described = session.json_until(
        ApiKey::DescribeConfigs,
        &json!({"resources": [{"resourceType": 32, "resourceName": group,
                               "configurationKeys": ["share.auto.offset.reset"]}],
                "includeSynonyms": false, "includeDocumentation": false}),
        |answer| answer["results"][0]["configs"][0]["value"] == "earliest",
    );
    assert_eq!(described["results"][0]["errorCode"], 0, "{described}");
    let mut exchanges = 2 + find_coordinator(&mut session, group);
    let mut epoch = 0;
    for beats in 1.. {
        let answer = session.json(
            ApiKey::ShareGroupHeartbeat,
            &json!({"groupId": group, "memberId": member, "memberEpoch": epoch,
                    "rackId": null, "subscribedTopicNames": [topic]}),
        );
        assert_eq!(answer["errorCode"], 0, "{answer}");
        epoch = answer["memberEpoch"].as_i64().unwrap();
        assert!(epoch >= 1, "{answer}");
        if assigned(&answer, topic_id) {
            exchanges += beats;
            break;
        }
        assert!(beats < 100, "no assignment: {answer}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // ShareFetch until records are acquired: the share partition starts
    // when first fetched. Each request of the session bumps its epoch.
    let mut session_epoch = 0;
    let (acquired, records) = loop {
        let answer = session.json(
            ApiKey::ShareFetch,
            &json!({
                "groupId": group,
                "memberId": member,
                "shareSessionEpoch": session_epoch,
                "maxWaitMs": 1000,
                "minBytes": 1,
                "maxBytes": 8 << 20,
                "maxRecords": 500,
                "batchSize": 500,
                "topics": [{"topicId": topic_id, "partitions": [
                    {"partitionIndex": 0, "partitionMaxBytes": 8 << 20, "acknowledgementBatches": []}
                ]}],
                "forgottenTopicsData": []
            }),
        );
        session_epoch += 1;
        exchanges += 1;
        assert_eq!(answer["errorCode"], 0, "{answer}");
        let partition = &answer["responses"][0]["partitions"][0];
        assert_eq!(partition["errorCode"], 0, "{answer}");
        let acquired = partition["acquiredRecords"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !acquired.is_empty() {
            let records = STANDARD
                .decode(partition["records"].as_str().unwrap())
                .unwrap();
            break (acquired, records);
        }
        assert!(session_epoch < 30, "nothing acquired: {answer}");
    };
    // The records acquired are in the batches sent, and decode.
    let mut offsets = Vec::new();
    for batch in Batches::new(&records, &DecodeOptions::default()) {
        let Batch::V2(batch) = batch.unwrap() else {
            panic!("a legacy batch")
        };
        if batch.header().is_control() {
            continue;
        }
        for record in batch.records() {
            offsets.push(record.unwrap().offset);
        }
    }
    let first = acquired[0]["firstOffset"].as_i64().unwrap();
    let last = acquired[acquired.len() - 1]["lastOffset"].as_i64().unwrap();
    assert_eq!(first, 0, "{acquired:?}");
    assert!(
        offsets.contains(&first) && offsets.contains(&last),
        "{offsets:?} {acquired:?}"
    );
    let batches: Vec<Value> = acquired
        .iter()
        .map(|a| json!({"firstOffset": a["firstOffset"], "lastOffset": a["lastOffset"], "acknowledgeTypes": [1]}))
        .collect();
    let acknowledged = session.json(
        ApiKey::ShareAcknowledge,
        &json!({
            "groupId": group,
            "memberId": member,
            "shareSessionEpoch": session_epoch,
            "topics": [{"topicId": topic_id, "partitions": [
                {"partitionIndex": 0, "acknowledgementBatches": batches}
            ]}]
        }),
    );
    assert_eq!(acknowledged["errorCode"], 0, "{acknowledged}");
    assert_eq!(
        acknowledged["responses"][0]["partitions"][0]["errorCode"], 0,
        "{acknowledged}"
    );
    let left = session.json(
        ApiKey::ShareGroupHeartbeat,
        &json!({"groupId": group, "memberId": member, "memberEpoch": -1}),
    );
    assert_eq!(left["errorCode"], 0, "{left}");
    assert_eq!(left["memberEpoch"], -1, "{left}");
    Counts {
        share: exchanges + 2,
        share_records: (last - first + 1) as usize,
        ..Counts::default()
    }
}
