//! Answers held to Kafka 4.4.0's, field by field, where `kafka-protocol
//! compat` found the fake's differing. Each test names what Kafka 4.4.0
//! answers (seen with `kafka-protocol request` against
//! `tests/kafka/broker.sh`) and checks that the fake answers the same, in
//! the JSON form the codec writes (Kafka's JsonConverter's).

mod common;

use common::connect;
use kafka_wire::{ApiKey, RequestBody};
use kafka_wire_fake::probe::Probe;
use kafka_wire_fake::FakeCluster;
use serde_json::{json, Value};

/// Kafka's message for INVALID_REQUEST (its `Errors.INVALID_REQUEST`).
const INVALID_REQUEST_MESSAGE: &str = "This most likely occurs because of a request being \
     malformed by the client library or the message was sent to an incompatible broker. See the \
     broker logs for more details.";

async fn brokers(count: usize) -> FakeCluster {
    FakeCluster::builder()
        .brokers(count)
        .start()
        .await
        .expect("start")
}

/// Sends `request` (the JSON form; its top-level fields over the default
/// body's, those the version lacks left out) as `api` at `version`: the
/// answer's JSON form.
async fn ask(probe: &mut Probe, api: ApiKey, version: i16, request: Value) -> Value {
    let mut body = RequestBody::default_for(api).to_json(version);
    if let (Some(fields), Some(given)) = (body.as_object_mut(), request.as_object()) {
        for (key, value) in given {
            if let Some(field) = fields.get_mut(key) {
                *field = value.clone();
            }
        }
    }
    let body = RequestBody::from_json(&body, api, version)
        .unwrap_or_else(|e| panic!("{} v{version} {request}: {e}", api.name()));
    let answer = probe
        .request(body, version)
        .await
        .unwrap_or_else(|e| panic!("{} v{version}: no answer: {e:?}", api.name()));
    answer.to_json(version)
}

/// FindCoordinator of `key` of `key_type` at `version`: the key's
/// coordinator entry (from v4), or the whole answer (v0-3), without its
/// throttle time.
async fn find_coordinator(probe: &mut Probe, key: &str, key_type: i8, version: i16) -> Value {
    let request = match version {
        0 => json!({"key": key}),
        1..=3 => json!({"key": key, "keyType": key_type}),
        _ => json!({"keyType": key_type, "coordinatorKeys": [key]}),
    };
    let mut answer = ask(probe, ApiKey::FindCoordinator, version, request).await;
    if version >= 4 {
        answer = answer["coordinators"][0].clone();
    }
    if let Some(fields) = answer.as_object_mut() {
        fields.remove("throttleTimeMs");
    }
    answer
}

/// Kafka 4.4.0 answers a FindCoordinator of the empty group or
/// transactional id with a coordinator, as of any other key (it hashes ""
/// as any string); the requests that name the empty group then reach the
/// coordinator, which refuses them in their own terms (INVALID_GROUP_ID,
/// ...). From v1 to v3 its errorMessage on success is "NONE" (the name of
/// `Errors.NONE`, which has no exception to give a message); from v4 each
/// key's is "".
#[tokio::test]
async fn find_coordinator_answers_the_empty_key_and_says_none_on_success() {
    for count in [1, 3] {
        let cluster = brokers(count).await;
        let mut probe = connect(&cluster, 0).await;
        for key_type in [0, 1] {
            for version in 0..=6 {
                let found = find_coordinator(&mut probe, "", key_type, version).await;
                let at = format!("{count} brokers, key type {key_type}, v{version}: {found}");
                let node = found["nodeId"].as_i64().unwrap_or(-1);
                let address = i32::try_from(node)
                    .ok()
                    .and_then(|node| cluster.broker_address(node))
                    .unwrap_or_else(|| panic!("no coordinator: {at}"));
                let (host, port) = address.rsplit_once(':').unwrap_or_default();
                let mut expected = json!({"errorCode": 0, "nodeId": node, "host": host,
                                          "port": port.parse::<i64>().unwrap_or(-1)});
                match version {
                    0 => {}
                    1..=3 => expected["errorMessage"] = json!("NONE"),
                    _ => {
                        expected["key"] = json!("");
                        expected["errorMessage"] = json!("");
                    }
                }
                assert_eq!(found, expected, "{at}");
            }
        }
        cluster.shutdown().await.ok();
    }
}

/// A key type Kafka 4.4.0 does not know (5) is INVALID_REQUEST with its
/// message, at every version; a share key (type 2, `group:topicId:partition`)
/// is INVALID_REQUEST below v6 (with the message below v4, without from
/// v4), and from v6 has a coordinator when it parses, else INVALID_REQUEST
/// without a message.
#[tokio::test]
async fn find_coordinator_of_unknown_and_share_key_types() {
    let cluster = brokers(1).await;
    let mut probe = connect(&cluster, 0).await;
    let share_key = "g:AAAAAAAAAAAAAAAAAAAAAQ:0";
    let refused = |key: &str, version: i16, message: &str| {
        let mut refused =
            json!({"errorCode": 42, "errorMessage": message, "nodeId": -1, "host": "", "port": -1});
        if version >= 4 {
            refused["key"] = json!(key);
        }
        refused
    };
    for version in 1..=6 {
        let found = find_coordinator(&mut probe, "g", 5, version).await;
        assert_eq!(
            found,
            refused("g", version, INVALID_REQUEST_MESSAGE),
            "key type 5, v{version}"
        );

        let found = find_coordinator(&mut probe, share_key, 2, version).await;
        match version {
            1..=3 => assert_eq!(found, refused(share_key, version, INVALID_REQUEST_MESSAGE)),
            4 | 5 => assert_eq!(found, refused(share_key, version, "")),
            _ => assert_eq!(
                (
                    &found["errorCode"],
                    &found["nodeId"],
                    &found["errorMessage"]
                ),
                (&json!(0), &json!(0), &json!("")),
                "{found}"
            ),
        }
    }
    for bad in ["g", "g:x:0", "g:AAAAAAAAAAAAAAAAAAAAAQ:x", "::"] {
        let found = find_coordinator(&mut probe, bad, 2, 6).await;
        assert_eq!(found, refused(bad, 6, ""), "{bad}");
    }
    cluster.shutdown().await.ok();
}

/// A cluster of one broker with topic `t1` of one partition.
async fn with_topic() -> FakeCluster {
    FakeCluster::builder()
        .brokers(1)
        .topic(kafka_wire_fake::TopicSpec::new("t1", 1))
        .start()
        .await
        .expect("start")
}

/// `ask` without the throttle time.
async fn answer(probe: &mut Probe, api: ApiKey, version: i16, request: Value) -> Value {
    let mut answer = ask(probe, api, version, request).await;
    if let Some(fields) = answer.as_object_mut() {
        fields.remove("throttleTimeMs");
    }
    answer
}

/// The classic group APIs refuse the empty group id with INVALID_GROUP_ID
/// before anything else (JoinGroup before its session timeout, with no
/// protocol name: null from v7), except SyncGroup from v5 without a
/// protocol type or name, which Kafka refuses first with
/// INCONSISTENT_GROUP_PROTOCOL. OffsetCommit and OffsetFetch take the
/// empty group as any other, as Kafka keeps it for simple consumers: it is
/// then listed, described and deleted as any group.
#[tokio::test]
async fn the_empty_group_id_in_the_classic_group_apis() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let join = |group: &str| {
        json!({"groupId": group, "sessionTimeoutMs": 0, "rebalanceTimeoutMs": 0,
               "memberId": "m1", "protocolType": "consumer", "protocols": []})
    };
    assert_eq!(
        answer(p, ApiKey::JoinGroup, 5, join("")).await,
        json!({"errorCode": 24, "generationId": -1, "protocolName": "", "leader": "",
               "memberId": "m1", "members": []})
    );
    for (group, code) in [("", 24), ("x", 26)] {
        assert_eq!(
            answer(p, ApiKey::JoinGroup, 9, join(group)).await,
            json!({"errorCode": code, "generationId": -1, "protocolType": null,
                   "protocolName": null, "leader": "", "skipAssignment": false,
                   "memberId": "m1", "members": []}),
            "{group:?}"
        );
    }
    assert_eq!(
        answer(
            p,
            ApiKey::Heartbeat,
            4,
            json!({"groupId": "", "generationId": 1, "memberId": "m"})
        )
        .await,
        json!({"errorCode": 24})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::LeaveGroup,
            2,
            json!({"groupId": "", "memberId": "m"})
        )
        .await,
        json!({"errorCode": 24})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::LeaveGroup,
            5,
            json!({"groupId": "", "members": []})
        )
        .await,
        json!({"errorCode": 24, "members": []})
    );
    let sync = |group: &str, protocol_type: Value, protocol_name: Value| {
        json!({"groupId": group, "generationId": 1, "memberId": "m", "groupInstanceId": null,
               "protocolType": protocol_type, "protocolName": protocol_name, "assignments": []})
    };
    assert_eq!(
        answer(p, ApiKey::SyncGroup, 4, sync("", json!(null), json!(null))).await,
        json!({"errorCode": 24, "assignment": ""})
    );
    for (group, protocol_type, protocol_name, code) in [
        ("", json!("consumer"), json!("range"), 24),
        ("", json!(null), json!(null), 23),
        ("x", json!(null), json!("range"), 23),
        ("x", json!("consumer"), json!(null), 23),
    ] {
        assert_eq!(
            answer(
                p,
                ApiKey::SyncGroup,
                5,
                sync(group, protocol_type, protocol_name)
            )
            .await,
            json!({"errorCode": code, "protocolType": null, "protocolName": null,
                   "assignment": ""}),
            "{group:?}"
        );
    }
    for topics in [
        json!([]),
        json!([{"name": "t1", "partitions": [{"partitionIndex": 0}]}]),
    ] {
        assert_eq!(
            answer(
                p,
                ApiKey::OffsetDelete,
                0,
                json!({"groupId": "", "topics": topics})
            )
            .await,
            json!({"errorCode": 24, "topics": []})
        );
    }

    // A simple consumer's commit in the empty group, and the group it makes.
    assert_eq!(
        answer(
            p,
            ApiKey::OffsetCommit,
            8,
            json!({"groupId": "", "generationIdOrMemberEpoch": -1, "memberId": "",
                   "groupInstanceId": null, "topics": [{"name": "t1", "partitions": [
                       {"partitionIndex": 0, "committedOffset": 1, "committedLeaderEpoch": -1,
                        "committedMetadata": ""}]}]})
        )
        .await,
        json!({"topics": [{"name": "t1", "partitions": [{"partitionIndex": 0, "errorCode": 0}]}]})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::OffsetFetch,
            7,
            json!({"groupId": "", "topics": [{"name": "t1", "partitionIndexes": [0]}],
                   "requireStable": false})
        )
        .await,
        json!({"topics": [{"name": "t1", "partitions": [{"partitionIndex": 0,
               "committedOffset": 1, "committedLeaderEpoch": -1, "metadata": "",
               "errorCode": 0}]}], "errorCode": 0})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::DescribeGroups,
            5,
            json!({"groups": [""],
               "includeAuthorizedOperations": false})
        )
        .await,
        json!({"groups": [{"errorCode": 0, "groupId": "", "groupState": "Empty",
               "protocolType": "", "protocolData": "", "members": [],
               "authorizedOperations": -2147483648i64}]})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::ListGroups,
            5,
            json!({"statesFilter": [], "typesFilter": []})
        )
        .await,
        json!({"errorCode": 0, "groups": [{"groupId": "", "protocolType": "",
               "groupState": "Empty", "groupType": "classic"}]})
    );
    assert_eq!(
        answer(p, ApiKey::DeleteGroups, 2, json!({"groupsNames": [""]})).await,
        json!({"results": [{"groupId": "", "errorCode": 0}]})
    );
    cluster.shutdown().await.ok();
}

/// The transaction APIs refuse the empty transactional id with
/// INVALID_REQUEST (on any broker: Kafka's transaction coordinator checks
/// it before it looks whether it coordinates the id); TxnOffsetCommit
/// refuses the empty group id first, with INVALID_GROUP_ID.
#[tokio::test]
async fn the_empty_transactional_id_is_an_invalid_request() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let txn_commit = |tid: &str, group: &str| {
        json!({"transactionalId": tid, "groupId": group, "producerId": 1, "producerEpoch": 0,
               "generationIdOrMemberEpoch": -1, "memberId": "", "groupInstanceId": null,
               "topics": [{"name": "t1", "partitions": [{"partitionIndex": 0,
                   "committedOffset": 1, "committedLeaderEpoch": -1,
                   "committedMetadata": ""}]}]})
    };
    for (version, tid, group, code) in [
        (3, "", "", 24),
        (3, "", "g", 42),
        (5, "", "g", 42),
        (3, "x", "", 24),
    ] {
        assert_eq!(
            answer(p, ApiKey::TxnOffsetCommit, version, txn_commit(tid, group)).await,
            json!({"topics": [{"name": "t1", "partitions": [
                {"partitionIndex": 0, "errorCode": code}]}]}),
            "v{version} {tid:?} {group:?}"
        );
    }
    assert_eq!(
        answer(
            p,
            ApiKey::AddPartitionsToTxn,
            3,
            json!({"v3AndBelowTransactionalId": "", "v3AndBelowProducerId": 1,
                   "v3AndBelowProducerEpoch": 0,
                   "v3AndBelowTopics": [{"name": "t1", "partitions": [0]}]})
        )
        .await,
        json!({"resultsByTopicV3AndBelow": [{"name": "t1", "resultsByPartition": [
            {"partitionIndex": 0, "partitionErrorCode": 42}]}]})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::AddPartitionsToTxn,
            5,
            json!({"transactions": [
                {"transactionalId": "", "producerId": 1, "producerEpoch": 0,
                 "verifyOnly": false, "topics": [{"name": "t1", "partitions": [0]}]},
                {"transactionalId": "zz", "producerId": 1, "producerEpoch": 0,
                 "verifyOnly": false, "topics": [{"name": "t1", "partitions": [0]}]}]})
        )
        .await,
        json!({"errorCode": 0, "resultsByTransaction": [
            {"transactionalId": "", "topicResults": [{"name": "t1", "resultsByPartition": [
                {"partitionIndex": 0, "partitionErrorCode": 42}]}]},
            {"transactionalId": "zz", "topicResults": [{"name": "t1", "resultsByPartition": [
                {"partitionIndex": 0, "partitionErrorCode": 49}]}]}]})
    );
    let add_offsets = json!({"transactionalId": "", "producerId": 1, "producerEpoch": 0,
                             "groupId": "g"});
    for version in [0, 4] {
        assert_eq!(
            answer(p, ApiKey::AddOffsetsToTxn, version, add_offsets.clone()).await,
            json!({"errorCode": 42}),
            "v{version}"
        );
    }
    let end = json!({"transactionalId": "", "producerId": 1, "producerEpoch": 0,
                     "committed": true});
    assert_eq!(
        answer(p, ApiKey::EndTxn, 0, end.clone()).await,
        json!({"errorCode": 42})
    );
    assert_eq!(
        answer(p, ApiKey::EndTxn, 5, end).await,
        json!({"errorCode": 42, "producerId": -1, "producerEpoch": -1})
    );
    cluster.shutdown().await.ok();
}

/// DescribeTransactions of an id Kafka 4.4.0 refuses leaves the producer
/// id, its epoch and the start time at 0 (the schema's defaults): the empty
/// id is INVALID_REQUEST, an unknown one TRANSACTIONAL_ID_NOT_FOUND.
#[tokio::test]
async fn describe_transactions_of_ids_it_refuses() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let refused = |code: i64, tid: &str| {
        json!({"errorCode": code, "transactionalId": tid, "transactionState": "",
               "transactionTimeoutMs": 0, "transactionStartTimeMs": 0, "producerId": 0,
               "producerEpoch": 0, "topics": []})
    };
    assert_eq!(
        answer(
            &mut probe,
            ApiKey::DescribeTransactions,
            0,
            json!({"transactionalIds": ["", "nope"]})
        )
        .await,
        json!({"transactionStates": [refused(42, ""), refused(105, "nope")]})
    );
    cluster.shutdown().await.ok();
}

/// A member id of 22 characters, as clients make them.
const MEMBER: &str = "mmmmmmmmmmmmmmmmmmmmmm";

/// A ConsumerGroupHeartbeat body: a join of `MEMBER` to `group` at
/// `epoch`, subscribed to `t1`, with `changes` over it.
fn consumer_beat(group: &str, epoch: i32, changes: Value) -> Value {
    let mut body = json!({"groupId": group, "memberId": MEMBER, "memberEpoch": epoch,
        "instanceId": null, "rackId": null, "rebalanceTimeoutMs": 30000,
        "subscribedTopicNames": ["t1"], "subscribedTopicRegex": null, "serverAssignor": null,
        "topicPartitions": []});
    if let (Some(fields), Some(changes)) = (body.as_object_mut(), changes.as_object()) {
        fields.extend(changes.clone());
    }
    body
}

/// A heartbeat's refusal, as Kafka answers it.
fn beat_refused(code: i64, message: Option<&str>) -> Value {
    json!({"errorCode": code, "errorMessage": message, "memberId": null, "memberEpoch": 0,
           "heartbeatIntervalMs": 0, "assignment": null})
}

/// Kafka 4.4.0 checks a ConsumerGroupHeartbeat before it looks at the
/// group, in this order: the member id (from v1, or to heartbeat or
/// leave), the group id, instance and rack ids (empty once trimmed), then
/// for a join the rebalance timeout, the owned partitions (an empty list)
/// and a subscription (names or a regex; no names is fine), for a static
/// leave the instance id, any other negative epoch; then the assignor,
/// then the regex's syntax (INVALID_REGULAR_EXPRESSION, with what RE2 says).
#[tokio::test]
async fn consumer_group_heartbeat_checks_its_request_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let invalid = |message: &str| beat_refused(42, Some(message));
    let cases = [
        (
            1,
            consumer_beat("", 0, json!({"memberId": ""})),
            invalid("MemberId can't be empty."),
        ),
        (
            0,
            consumer_beat("", 0, json!({"memberId": ""})),
            invalid("GroupId can't be empty."),
        ),
        (
            0,
            consumer_beat("c", 5, json!({"memberId": ""})),
            invalid("MemberId can't be empty."),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"memberId": " "})),
            invalid("MemberId can't be empty."),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"instanceId": " "})),
            invalid("InstanceId can't be empty."),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"rackId": ""})),
            invalid("RackId can't be empty."),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"rebalanceTimeoutMs": -1})),
            invalid("RebalanceTimeoutMs must be provided in first request."),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"topicPartitions": null})),
            invalid("TopicPartitions must be empty when (re-)joining."),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"subscribedTopicNames": null})),
            invalid(
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when \
                 (re-)joining.",
            ),
        ),
        (
            1,
            consumer_beat("c", -2, json!({})),
            invalid("InstanceId can't be null."),
        ),
        (
            1,
            consumer_beat("c", -3, json!({})),
            invalid("MemberEpoch is invalid."),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"serverAssignor": "foo"})),
            beat_refused(
                112,
                Some("ServerAssignor foo is not supported. Supported assignors: uniform, range."),
            ),
        ),
        (
            1,
            consumer_beat(
                "c",
                0,
                json!({"subscribedTopicNames": null, "subscribedTopicRegex": "(unclosed"}),
            ),
            beat_refused(
                128,
                Some(
                    "SubscribedTopicRegex `(unclosed` is not a valid regular expression: \
                     missing closing ).",
                ),
            ),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"subscribedTopicRegex": "a)|[b"})),
            beat_refused(
                128,
                Some("SubscribedTopicRegex `a)|[b` is not a valid regular expression: unexpected )."),
            ),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"subscribedTopicRegex": "[(x"})),
            beat_refused(
                128,
                Some("SubscribedTopicRegex `[(x` is not a valid regular expression: missing closing ]."),
            ),
        ),
        (
            1,
            consumer_beat("c", 0, json!({"subscribedTopicNames": []})),
            json!({"errorCode": 0, "errorMessage": null, "memberId": MEMBER, "memberEpoch": 1,
                   "heartbeatIntervalMs": 5000, "assignment": {"topicPartitions": []}}),
        ),
    ];
    for (version, request, expected) in cases {
        let at = format!("v{version} {request}");
        assert_eq!(
            answer(&mut probe, ApiKey::ConsumerGroupHeartbeat, version, request).await,
            expected,
            "{at}"
        );
    }
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0 checks a ShareGroupHeartbeat's member id at the broker (1
/// to 36 characters, else INVALID_REQUEST without a message), then, as its
/// coordinator does, the member, group and rack ids (empty once trimmed),
/// a join's subscription (some names) and the epoch (-1 or more).
#[tokio::test]
async fn share_group_heartbeat_checks_its_request_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let beat = |group: &str, member: &str, epoch: i32, names: Value| {
        json!({"groupId": group, "memberId": member, "memberEpoch": epoch, "rackId": null,
               "subscribedTopicNames": names})
    };
    let invalid = |message: Option<&str>| beat_refused(42, message);
    let long = "m".repeat(37);
    let cases = [
        (beat("", "", 0, json!(null)), invalid(None)),
        (beat("s", &long, 0, json!(["t1"])), invalid(None)),
        (
            beat("s", " ", 0, json!([])),
            invalid(Some("MemberId can't be empty.")),
        ),
        (
            beat(" ", MEMBER, 0, json!([])),
            invalid(Some("GroupId can't be empty.")),
        ),
        (
            json!({"groupId": "s", "memberId": MEMBER, "memberEpoch": 0, "rackId": "",
                   "subscribedTopicNames": []}),
            invalid(Some("RackId can't be empty.")),
        ),
        (
            beat("s", MEMBER, 0, json!([])),
            invalid(Some("SubscribedTopicNames must be set in first request.")),
        ),
        (
            beat("s", MEMBER, -2, json!(null)),
            invalid(Some("MemberEpoch is invalid.")),
        ),
    ];
    for (request, expected) in cases {
        let at = format!("{request}");
        assert_eq!(
            answer(&mut probe, ApiKey::ShareGroupHeartbeat, 1, request).await,
            expected,
            "{at}"
        );
    }
    // No refusal left a group behind.
    assert_eq!(
        answer(
            &mut probe,
            ApiKey::ListGroups,
            5,
            json!({"statesFilter": [], "typesFilter": []})
        )
        .await,
        json!({"errorCode": 0, "groups": []})
    );
    cluster.shutdown().await.ok();
}

/// The consumer and share group APIs name a group they cannot find as
/// Kafka 4.4.0 does: "not a consumer (share) group" when a group of
/// another type has the id (a classic group made by a commit, or a share
/// group), else "Consumer (Share) group X not found." to a heartbeat and
/// "Group X not found." to a leave or a describe; both GROUP_ID_NOT_FOUND.
/// A describe of the empty id is INVALID_GROUP_ID without a message.
#[tokio::test]
async fn consumer_and_share_group_apis_name_missing_groups_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let committed = answer(
        p,
        ApiKey::OffsetCommit,
        8,
        json!({"groupId": "classic", "generationIdOrMemberEpoch": -1, "memberId": "",
               "groupInstanceId": null, "topics": [{"name": "t1", "partitions": [
                   {"partitionIndex": 0, "committedOffset": 1, "committedLeaderEpoch": -1,
                    "committedMetadata": ""}]}]}),
    )
    .await;
    assert_eq!(
        committed["topics"][0]["partitions"][0]["errorCode"], 0,
        "{committed}"
    );
    let joined = answer(
        p,
        ApiKey::ShareGroupHeartbeat,
        1,
        json!({"groupId": "share", "memberId": MEMBER, "memberEpoch": 0, "rackId": null,
               "subscribedTopicNames": ["t1"]}),
    )
    .await;
    assert_eq!(joined["errorCode"], 0, "{joined}");

    let not_found = |message: String| beat_refused(69, Some(&message));
    for (group, consumer_beat_message, consumer_leave_message) in [
        (
            "classic",
            "Group classic is not a consumer group.",
            "Group classic is not a consumer group.",
        ),
        (
            "share",
            "Group share is not a consumer group.",
            "Group share is not a consumer group.",
        ),
        (
            "unknown",
            "Consumer group unknown not found.",
            "Group unknown not found.",
        ),
    ] {
        for (epoch, message) in [
            (0, consumer_beat_message),
            (3, consumer_beat_message),
            (-1, consumer_leave_message),
        ] {
            if epoch == 0 && group != "share" {
                continue; // A join makes (or converts) the group.
            }
            assert_eq!(
                answer(
                    p,
                    ApiKey::ConsumerGroupHeartbeat,
                    1,
                    consumer_beat(group, epoch, json!({}))
                )
                .await,
                not_found(message.to_owned()),
                "{group} {epoch}"
            );
        }
    }
    for (group, epoch, message) in [
        ("classic", 4, "Group classic is not a share group."),
        ("classic", -1, "Group classic is not a share group."),
        ("unknown", 4, "Share group unknown not found."),
        ("unknown", -1, "Group unknown not found."),
    ] {
        assert_eq!(
            answer(
                p,
                ApiKey::ShareGroupHeartbeat,
                1,
                json!({"groupId": group, "memberId": MEMBER, "memberEpoch": epoch,
                       "rackId": null, "subscribedTopicNames": null})
            )
            .await,
            not_found(message.to_owned()),
            "{group} {epoch}"
        );
    }
    let described = |code: i64, group: &str, message: Option<String>| {
        json!({"groups": [{"errorCode": code, "errorMessage": message, "groupId": group,
               "groupState": "", "groupEpoch": 0, "assignmentEpoch": 0, "assignorName": "",
               "members": [], "authorizedOperations": -2147483648i64}]})
    };
    for (api, kind, own) in [
        (ApiKey::ConsumerGroupDescribe, "consumer", None),
        (ApiKey::ShareGroupDescribe, "share", Some("share")),
    ] {
        for group in ["classic", "share", "unknown", ""] {
            if Some(group) == own {
                continue;
            }
            let expected = match group {
                "" => described(24, group, None),
                "unknown" => described(69, group, Some(format!("Group {group} not found."))),
                _ => described(
                    69,
                    group,
                    Some(format!("Group {group} is not a {kind} group.")),
                ),
            };
            assert_eq!(
                answer(
                    p,
                    api,
                    1,
                    json!({"groupIds": [group], "includeAuthorizedOperations": false})
                )
                .await,
                expected,
                "{api:?} {group:?}"
            );
        }
    }
    cluster.shutdown().await.ok();
}

/// ShareFetch and ShareAcknowledge without a group id, or with a member id
/// Kafka 4.4.0 refuses (empty, or over 36 characters), are INVALID_REQUEST
/// without a message; any refusal of the whole request leaves
/// acquisitionLockTimeoutMs at 0 (Kafka's error answer sets nothing else).
#[tokio::test]
async fn share_fetch_and_acknowledge_refused_as_kafka_refuses_them() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let fetch = |group: Value, member: &str| {
        json!({"groupId": group, "memberId": member, "shareSessionEpoch": 0, "maxWaitMs": 0,
               "minBytes": 0, "maxBytes": 0, "maxRecords": 0, "batchSize": 0, "topics": [],
               "forgottenTopicsData": []})
    };
    let refused = |code: i64| {
        json!({"errorCode": code, "errorMessage": null, "acquisitionLockTimeoutMs": 0,
               "responses": [], "nodeEndpoints": []})
    };
    let long = "m".repeat(37);
    for (version, request) in [
        (1, fetch(json!(null), "")),
        (2, fetch(json!("g"), "")),
        (2, fetch(json!(null), MEMBER)),
        (2, fetch(json!("g"), &long)),
    ] {
        let at = format!("v{version} {request}");
        assert_eq!(
            answer(p, ApiKey::ShareFetch, version, request).await,
            refused(42),
            "{at}"
        );
    }
    let acknowledge = |group: Value, member: &str| json!({"groupId": group, "memberId": member, "shareSessionEpoch": 0, "topics": []});
    assert_eq!(
        answer(p, ApiKey::ShareAcknowledge, 1, acknowledge(json!(null), "")).await,
        json!({"errorCode": 42, "errorMessage": null, "responses": [], "nodeEndpoints": []})
    );
    for (request, code) in [
        (acknowledge(json!("g"), ""), 42),
        (acknowledge(json!(null), MEMBER), 42),
        // A valid request at epoch 0, which only a ShareFetch may open.
        (acknowledge(json!("g"), MEMBER), 123),
    ] {
        let at = format!("{request}");
        assert_eq!(
            answer(p, ApiKey::ShareAcknowledge, 2, request).await,
            refused(code),
            "{at}"
        );
    }
    cluster.shutdown().await.ok();
}

/// ApiVersions from v3 with a client software name or version Kafka 4.4.0
/// refuses (empty, or with characters outside letters, digits, `-` and
/// `.`, or not starting and ending with a letter or digit) is
/// INVALID_REQUEST with nothing else: no apis, no features, and
/// finalizedFeaturesEpoch -1.
#[tokio::test]
async fn api_versions_refused_lists_nothing() {
    let cluster = brokers(1).await;
    let mut probe = connect(&cluster, 0).await;
    for (version, name, software_version) in [
        (3, "", ""),
        (4, "a", "-x"),
        (3, "a b", "1"),
        (4, "kafka-wire", ""),
    ] {
        assert_eq!(
            answer(
                &mut probe,
                ApiKey::ApiVersions,
                version,
                json!({"clientSoftwareName": name, "clientSoftwareVersion": software_version})
            )
            .await,
            json!({"errorCode": 42, "apiKeys": [], "supportedFeatures": [],
                   "finalizedFeaturesEpoch": -1, "finalizedFeatures": [],
                   "zkMigrationReady": false}),
            "v{version} {name:?} {software_version:?}"
        );
    }
    let accepted = answer(
        &mut probe,
        ApiKey::ApiVersions,
        4,
        json!({"clientSoftwareName": "kafka-wire", "clientSoftwareVersion": "1.0"}),
    )
    .await;
    assert_eq!(accepted["errorCode"], 0, "{accepted}");
    assert!(accepted["apiKeys"]
        .as_array()
        .is_some_and(|keys| !keys.is_empty()));
    cluster.shutdown().await.ok();
}

/// The id Metadata gives `topic`.
async fn topic_id(probe: &mut Probe, topic: &str) -> Value {
    let metadata = answer(
        probe,
        ApiKey::Metadata,
        12,
        json!({"topics": [{"name": topic, "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}],
               "allowAutoTopicCreation": false, "includeTopicAuthorizedOperations": false}),
    )
    .await;
    metadata["topics"][0]["topicId"].clone()
}

/// DeleteTopics as Kafka 4.4.0's controller answers it: an unknown name is
/// UNKNOWN_TOPIC_OR_PARTITION and an unknown id UNKNOWN_TOPIC_ID, with
/// Kafka's messages; a topic named by neither or by both, or twice, is
/// INVALID_REQUEST with its words (a name given twice answered once); a
/// topic named both by id and by name is deleted by neither.
#[tokio::test]
async fn delete_topics_refuses_as_kafka_does() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .topic(kafka_wire_fake::TopicSpec::new("d1", 1))
        .topic(kafka_wire_fake::TopicSpec::new("d2", 1))
        .start()
        .await
        .expect("start");
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let zero = json!("AAAAAAAAAAAAAAAAAAAAAA");
    let unknown_id = json!("AAAAAAAAAAAAAAAAAAAAAQ");
    let (d1, d2) = (topic_id(p, "d1").await, topic_id(p, "d2").await);
    let outcome = |name: Value, id: &Value, code: i64, message: Value| json!({"name": name, "topicId": id, "errorCode": code, "errorMessage": message});
    let delete = |topics: Value| json!({"topics": topics, "timeoutMs": 5000});
    let not_hosted = json!("This server does not host this topic-partition.");

    assert_eq!(
        answer(
            p,
            ApiKey::DeleteTopics,
            4,
            json!({"topicNames": ["zz", "zz", "yy"], "timeoutMs": 5000})
        )
        .await,
        json!({"responses": [{"name": "zz", "errorCode": 42}, {"name": "yy", "errorCode": 3}]})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::DeleteTopics,
            5,
            json!({"topicNames": ["yy"], "timeoutMs": 5000})
        )
        .await,
        json!({"responses": [{"name": "yy", "errorCode": 3, "errorMessage": not_hosted}]})
    );
    let refusals = delete(json!([
        {"name": null, "topicId": zero},
        {"name": "x", "topicId": unknown_id},
        {"name": null, "topicId": unknown_id},
        {"name": "zz", "topicId": zero},
        {"name": null, "topicId": d2},
        {"name": null, "topicId": d2},
        {"name": null, "topicId": d1},
        {"name": "d1", "topicId": zero},
    ]));
    assert_eq!(
        answer(p, ApiKey::DeleteTopics, 6, refusals).await,
        json!({"responses": [
            outcome(json!(null), &zero, 42, json!("Neither topic name nor id were specified.")),
            outcome(json!("x"), &unknown_id, 42,
                    json!("You may not specify both topic name and topic id.")),
            outcome(json!(null), &d2, 42, json!("Duplicate topic id.")),
            outcome(json!(null), &unknown_id, 100,
                    json!("This server does not host this topic ID.")),
            outcome(json!("zz"), &zero, 3, not_hosted.clone()),
            outcome(json!("d1"), &d1, 42,
                    json!("The provided topic name maps to an ID that was already supplied.")),
        ]})
    );
    // Neither d1 nor d2 went: each is deleted once named once.
    assert_eq!(
        answer(
            p,
            ApiKey::DeleteTopics,
            6,
            delete(json!([{"name": "d2", "topicId": zero}, {"name": null, "topicId": d1}]))
        )
        .await,
        json!({"responses": [outcome(json!("d1"), &d1, 0, json!(null)),
                             outcome(json!("d2"), &d2, 0, json!(null))]})
    );
    cluster.shutdown().await.ok();
}

/// CreateTopics v7 validate-only answers a fresh topic id for the topic it
/// would create, as Kafka 4.4.0 does (each time another), and creates
/// nothing.
#[tokio::test]
async fn create_topics_validate_only_answers_a_fresh_id() {
    let cluster = brokers(1).await;
    let mut probe = connect(&cluster, 0).await;
    let create = json!({"topics": [{"name": "vo", "numPartitions": 1, "replicationFactor": 1,
                                    "assignments": [], "configs": []}],
                        "timeoutMs": 5000, "validateOnly": true});
    let mut ids = Vec::new();
    for _ in 0..2 {
        let answer = answer(&mut probe, ApiKey::CreateTopics, 7, create.clone()).await;
        let topic = &answer["topics"][0];
        assert_eq!(topic["errorCode"], 0, "{answer}");
        ids.push(topic["topicId"].clone());
    }
    assert!(
        ids.iter().all(|id| id != "AAAAAAAAAAAAAAAAAAAAAA"),
        "{ids:?}"
    );
    assert_ne!(ids[0], ids[1]);
    assert_eq!(
        topic_id(&mut probe, "vo").await,
        json!("AAAAAAAAAAAAAAAAAAAAAA")
    );
    cluster.shutdown().await.ok();
}

/// `answer`'s time fields, when within a second of now, written `NOW`.
fn times_now(mut value: Value) -> Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    fn walk(value: &mut Value, now: i64) {
        match value {
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    let recent = field.as_i64().is_some_and(|t| (now - t).abs() < 60_000);
                    if key.ends_with("Timestamp") && recent {
                        *field = json!("NOW");
                    } else {
                        walk(field, now);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| walk(item, now)),
            _ => {}
        }
    }
    walk(&mut value, now);
    value
}

/// DescribeQuorum as Kafka 4.4.0 describes the quorum of a cluster whose
/// first node is a combined broker and controller: that node the only
/// voter and the leader (epoch 1), the other brokers observers, its
/// controller listener in `nodes` (v2); the replicas have fetched just
/// now. A request for anything but partition 0 of `__cluster_metadata`
/// (alone) gets UNKNOWN_TOPIC_OR_PARTITION for each partition it names.
#[tokio::test]
async fn describe_quorum_as_a_combined_controller_answers_it() {
    let cluster = brokers(3).await;
    let mut probe = connect(&cluster, 1).await;
    let p = &mut probe;
    let log = json!({"topics": [{"topicName": "__cluster_metadata",
                                  "partitions": [{"partitionIndex": 0}]}]});
    let answer2 = times_now(answer(p, ApiKey::DescribeQuorum, 2, log.clone()).await);
    let partition = &answer2["topics"][0]["partitions"][0];
    let directory = |replicas: &Value| -> Vec<Value> {
        replicas
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r["replicaDirectoryId"].clone())
            .collect()
    };
    let mut directories = directory(&partition["currentVoters"]);
    directories.extend(directory(&partition["observers"]));
    assert_eq!(directories.len(), 3, "{answer2}");
    assert!(
        directories
            .iter()
            .all(|d| d.as_str().is_some_and(|d| d != "AAAAAAAAAAAAAAAAAAAAAA")),
        "{answer2}"
    );
    let replica = |id: i64, directory: &Value| {
        json!({"replicaId": id, "replicaDirectoryId": directory, "logEndOffset": 1,
               "lastFetchTimestamp": "NOW", "lastCaughtUpTimestamp": "NOW"})
    };
    let address = cluster.broker_address(0).expect("broker 0");
    let (host, port) = address.rsplit_once(':').unwrap_or_default();
    assert_eq!(
        answer2,
        json!({"errorCode": 0, "errorMessage": "", "topics": [{"topicName": "__cluster_metadata",
            "partitions": [{"partitionIndex": 0, "errorCode": 0, "errorMessage": "",
                "leaderId": 0, "leaderEpoch": 1, "highWatermark": 1,
                "currentVoters": [replica(0, &directories[0])],
                "observers": [replica(1, &directories[1]), replica(2, &directories[2])]}]}],
            "nodes": [{"nodeId": 0, "listeners": [{"name": "CONTROLLER", "host": host,
                       "port": port.parse::<i64>().unwrap_or(-1)}]}]})
    );
    assert_eq!(
        answer(p, ApiKey::DescribeQuorum, 0, log).await,
        json!({"errorCode": 0, "topics": [{"topicName": "__cluster_metadata", "partitions": [
            {"partitionIndex": 0, "errorCode": 0, "leaderId": 0, "leaderEpoch": 1,
             "highWatermark": 1, "currentVoters": [{"replicaId": 0, "logEndOffset": 1}],
             "observers": [{"replicaId": 1, "logEndOffset": 1},
                           {"replicaId": 2, "logEndOffset": 1}]}]}]})
    );
    let unknown = |index: i64| {
        json!({"partitionIndex": index, "errorCode": 3, "leaderId": 0, "leaderEpoch": 0,
               "highWatermark": 0, "currentVoters": [], "observers": []})
    };
    assert_eq!(
        answer(
            p,
            ApiKey::DescribeQuorum,
            1,
            json!({"topics": [
                {"topicName": "__cluster_metadata",
                 "partitions": [{"partitionIndex": 0}, {"partitionIndex": 0}]},
                {"topicName": "__cluster_metadata", "partitions": []}]})
        )
        .await,
        json!({"errorCode": 0, "topics": [
            {"topicName": "__cluster_metadata", "partitions": [unknown(0), unknown(0)]},
            {"topicName": "__cluster_metadata", "partitions": []}]})
    );
    let mut elsewhere = unknown(1);
    elsewhere["errorMessage"] = json!("This server does not host this topic-partition.");
    assert_eq!(
        answer(
            p,
            ApiKey::DescribeQuorum,
            2,
            json!({"topics": [{"topicName": "__cluster_metadata",
                               "partitions": [{"partitionIndex": 1}]}]})
        )
        .await,
        json!({"errorCode": 0, "errorMessage": "", "topics": [
            {"topicName": "__cluster_metadata", "partitions": [elsewhere]}], "nodes": []})
    );
    cluster.shutdown().await.ok();
}

/// UnregisterBroker and UnregisterController as Kafka 4.4.0's controller
/// answers them: an id no broker has is BROKER_ID_NOT_REGISTERED, a
/// broker's is unregistered (0; the fake's broker registers again at
/// once); the active controller (the first broker) cannot unregister
/// itself, and no other controller is registered.
#[tokio::test]
async fn unregister_broker_and_controller_answer_as_kafka_does() {
    let cluster = brokers(3).await;
    let mut probe = connect(&cluster, 2).await;
    let p = &mut probe;
    let answered = |code: i64, message: &str| json!({"errorCode": code, "errorMessage": message});
    for (id, expected) in [
        (
            999,
            answered(102, "Broker ID 999 is not currently registered"),
        ),
        (
            -1,
            answered(102, "Broker ID -1 is not currently registered"),
        ),
        (1, answered(0, "")),
    ] {
        assert_eq!(
            answer(p, ApiKey::UnregisterBroker, 0, json!({"brokerId": id})).await,
            expected,
            "broker {id}"
        );
    }
    for (id, expected) in [
        (
            999,
            answered(136, "Controller ID 999 is not currently registered."),
        ),
        (
            2,
            answered(136, "Controller ID 2 is not currently registered."),
        ),
        (
            0,
            answered(
                42,
                "Controller cannot unregister itself while it is active.",
            ),
        ),
    ] {
        assert_eq!(
            answer(
                p,
                ApiKey::UnregisterController,
                0,
                json!({"controllerId": id})
            )
            .await,
            expected,
            "controller {id}"
        );
    }
    cluster.shutdown().await.ok();
}

/// ListConfigResources as Kafka 4.4.0 lists them: groups given configs,
/// client metrics subscriptions (none here), each broker as a broker's
/// loggers and as a broker, then every topic, in that order and each kind
/// by name; the types asked (none: all), client metrics alone at v0; a type
/// Kafka does not list is UNSUPPORTED_VERSION with nothing.
#[tokio::test]
async fn list_config_resources_lists_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let altered = answer(
        p,
        ApiKey::IncrementalAlterConfigs,
        1,
        json!({"resources": [{"resourceType": 32, "resourceName": "g1", "configs": [
            {"name": "consumer.session.timeout.ms", "configOperation": 0, "value": "50000"}]}],
               "validateOnly": false}),
    )
    .await;
    assert_eq!(altered["responses"][0]["errorCode"], 0, "{altered}");
    let resource = |name: &str, kind: i64| json!({"resourceName": name, "resourceType": kind});
    let listed = |resources: Vec<Value>| json!({"errorCode": 0, "configResources": resources});
    for (types, expected) in [
        (
            json!([]),
            listed(vec![
                resource("g1", 32),
                resource("0", 8),
                resource("0", 4),
                resource("t1", 2),
            ]),
        ),
        (
            json!([2, 32]),
            listed(vec![resource("g1", 32), resource("t1", 2)]),
        ),
        (json!([16]), listed(vec![])),
        (
            json!([2, 99]),
            json!({"errorCode": 35, "configResources": []}),
        ),
        (json!([1]), json!({"errorCode": 35, "configResources": []})),
    ] {
        assert_eq!(
            answer(
                p,
                ApiKey::ListConfigResources,
                1,
                json!({"resourceTypes": types})
            )
            .await,
            expected,
            "{types}"
        );
    }
    assert_eq!(
        answer(p, ApiKey::ListConfigResources, 0, json!({})).await,
        listed(vec![])
    );
    cluster.shutdown().await.ok();
}

/// The delegation token APIs refused as Kafka 4.4.0 refuses them with its
/// defaults: over a connection without SASL the request is not allowed
/// (64), naming the owner asked for, else the requester, ANONYMOUS.
#[tokio::test]
async fn delegation_tokens_are_refused_as_kafka_refuses_them() {
    let cluster = brokers(1).await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let refused = |owner_type: &str, owner: &str| {
        json!({"errorCode": 64, "principalType": owner_type, "principalName": owner,
               "tokenRequesterPrincipalType": "User", "tokenRequesterPrincipalName": "ANONYMOUS",
               "issueTimestampMs": -1, "expiryTimestampMs": -1, "maxTimestampMs": -1,
               "tokenId": "", "hmac": ""})
    };
    assert_eq!(
        answer(
            p,
            ApiKey::CreateDelegationToken,
            3,
            json!({"ownerPrincipalType": "User", "ownerPrincipalName": "bob", "renewers": [],
                   "maxLifetimeMs": -1})
        )
        .await,
        refused("User", "bob")
    );
    let mut v1 = refused("User", "ANONYMOUS");
    if let Some(fields) = v1.as_object_mut() {
        fields.remove("tokenRequesterPrincipalType");
        fields.remove("tokenRequesterPrincipalName");
    }
    assert_eq!(
        answer(
            p,
            ApiKey::CreateDelegationToken,
            1,
            json!({"renewers": [{"principalType": "User", "principalName": "x"}],
                   "maxLifetimeMs": -1})
        )
        .await,
        v1
    );
    let no_expiry = json!({"errorCode": 64, "expiryTimestampMs": -1});
    assert_eq!(
        answer(
            p,
            ApiKey::RenewDelegationToken,
            2,
            json!({"hmac": "AAEC", "renewPeriodMs": 1000})
        )
        .await,
        no_expiry
    );
    assert_eq!(
        answer(
            p,
            ApiKey::ExpireDelegationToken,
            2,
            json!({"hmac": "", "expiryTimePeriodMs": 1})
        )
        .await,
        no_expiry
    );
    assert_eq!(
        answer(
            p,
            ApiKey::DescribeDelegationToken,
            3,
            json!({"owners": null})
        )
        .await,
        json!({"errorCode": 64, "tokens": []})
    );
    cluster.shutdown().await.ok();
}

/// The last stable offset of partition 0 of `topic` (ListOffsets, latest,
/// read_committed).
async fn last_stable_offset(probe: &mut Probe, topic: &str) -> Value {
    let request = json!({"replicaId": -1, "isolationLevel": 1, "topics": [{"name": topic,
        "partitions": [{"partitionIndex": 0, "currentLeaderEpoch": -1, "timestamp": -1}]}]});
    let listed = answer(probe, ApiKey::ListOffsets, 7, request).await;
    listed["topics"][0]["partitions"][0]["offset"].clone()
}

/// WriteTxnMarkers, as an admin ending a hanging transaction sends it:
/// the abort marker ends the producer's open transaction (the last stable
/// offset moves past it); an unknown partition or topic is
/// UNKNOWN_TOPIC_OR_PARTITION (listed before the written partitions of its
/// topic), an epoch older than the partition's producer
/// INVALID_PRODUCER_EPOCH, and a marker naming nothing gets no answer.
#[tokio::test]
async fn write_txn_markers_end_a_hanging_transaction() {
    use base64::Engine as _;
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    // Twice: the producer's epoch is then 1, and a marker may be older.
    let mut init = Value::Null;
    for _ in 0..2 {
        init = answer(
            p,
            ApiKey::InitProducerId,
            5,
            json!({"transactionalId": "hanging", "transactionTimeoutMs": 600000,
                   "producerId": -1, "producerEpoch": -1}),
        )
        .await;
    }
    let (id, epoch) = (
        init["producerId"].as_i64().unwrap_or(-1),
        init["producerEpoch"].as_i64().unwrap_or(-1),
    );
    let added = answer(
        p,
        ApiKey::AddPartitionsToTxn,
        3,
        json!({"v3AndBelowTransactionalId": "hanging", "v3AndBelowProducerId": id,
               "v3AndBelowProducerEpoch": epoch,
               "v3AndBelowTopics": [{"name": "t1", "partitions": [0]}]}),
    )
    .await;
    assert_eq!(
        added["resultsByTopicV3AndBelow"][0]["resultsByPartition"][0]["partitionErrorCode"], 0,
        "{added}"
    );
    let producer = (id, i16::try_from(epoch).unwrap_or(0), 0);
    let records = common::transactional_batch(producer, &[b"a"]);
    let produced = answer(
        p,
        ApiKey::Produce,
        9,
        json!({"transactionalId": "hanging", "acks": -1, "timeoutMs": 1000, "topicData": [
            {"name": "t1", "partitionData": [{"index": 0,
             "records": base64::engine::general_purpose::STANDARD.encode(records)}]}]}),
    )
    .await;
    assert_eq!(
        produced["responses"][0]["partitionResponses"][0]["errorCode"], 0,
        "{produced}"
    );
    assert_eq!(last_stable_offset(p, "t1").await, json!(0));

    let marker = |epoch: i64, topics: Value| {
        json!({"producerId": id, "producerEpoch": epoch, "transactionResult": false,
               "topics": topics, "coordinatorEpoch": -1})
    };
    let written = answer(
        p,
        ApiKey::WriteTxnMarkers,
        1,
        json!({"markers": [
            marker(epoch, json!([{"name": "t1", "partitionIndexes": [0, 5]},
                                 {"name": "nosuch", "partitionIndexes": [0]}])),
            marker(epoch, json!([])),
        ]}),
    )
    .await;
    assert_eq!(
        written,
        json!({"markers": [{"producerId": id, "topics": [
            {"name": "t1", "partitions": [{"partitionIndex": 5, "errorCode": 3},
                                          {"partitionIndex": 0, "errorCode": 0}]},
            {"name": "nosuch", "partitions": [{"partitionIndex": 0, "errorCode": 3}]}]}]})
    );
    // The record and the marker are behind the last stable offset now.
    assert_eq!(last_stable_offset(p, "t1").await, json!(2));
    assert_eq!(epoch, 1, "{init}");
    {
        let older = answer(
            p,
            ApiKey::WriteTxnMarkers,
            2,
            json!({"markers": [{"producerId": id, "producerEpoch": epoch - 1,
                   "transactionResult": true, "coordinatorEpoch": -1, "transactionVersion": 0,
                   "topics": [{"name": "t1", "partitionIndexes": [0]}]}]}),
        )
        .await;
        assert_eq!(
            older["markers"][0]["topics"][0]["partitions"][0]["errorCode"], 47,
            "{older}"
        );
    }
    cluster.shutdown().await.ok();
}

/// Over SASL, Kafka 4.4.0 lets a client ask for tokens but has token
/// authentication disabled (no secret key set): DELEGATION_TOKEN_AUTH_DISABLED,
/// naming the authenticated user as owner and requester, its times 0 (seen
/// through `kafka-protocol compat --sasl` beside broker.sh `--sasl`).
#[tokio::test]
async fn delegation_tokens_over_sasl_are_disabled() {
    use base64::Engine as _;
    let cluster = FakeCluster::builder()
        .brokers(1)
        .sasl_user(kafka_wire_fake::SaslMechanism::Plain, "alice", "secret")
        .start()
        .await
        .expect("start");
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let shaken = answer(p, ApiKey::SaslHandshake, 1, json!({"mechanism": "PLAIN"})).await;
    assert_eq!(shaken["errorCode"], 0, "{shaken}");
    let token = base64::engine::general_purpose::STANDARD.encode(b"\0alice\0secret");
    let authenticated = answer(p, ApiKey::SaslAuthenticate, 2, json!({"authBytes": token})).await;
    assert_eq!(authenticated["errorCode"], 0, "{authenticated}");
    assert_eq!(
        answer(
            p,
            ApiKey::CreateDelegationToken,
            3,
            json!({"ownerPrincipalType": null, "ownerPrincipalName": null, "renewers": [],
                   "maxLifetimeMs": -1})
        )
        .await,
        json!({"errorCode": 61, "principalType": "User", "principalName": "alice",
               "tokenRequesterPrincipalType": "User", "tokenRequesterPrincipalName": "alice",
               "issueTimestampMs": 0, "expiryTimestampMs": 0, "maxTimestampMs": 0,
               "tokenId": "", "hmac": ""})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::DescribeDelegationToken,
            3,
            json!({"owners": null})
        )
        .await,
        json!({"errorCode": 61, "tokens": []})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::RenewDelegationToken,
            2,
            json!({"hmac": "", "renewPeriodMs": 1})
        )
        .await,
        json!({"errorCode": 61, "expiryTimestampMs": 0})
    );
    cluster.shutdown().await.ok();
}

/// An OffsetCommit or TxnOffsetCommit partition `index` (offset 1).
fn committed_partition(index: i64) -> Value {
    json!({"partitionIndex": index, "committedOffset": 1, "committedLeaderEpoch": -1,
           "committedMetadata": ""})
}

/// OffsetCommit, TxnOffsetCommit and AddPartitionsToTxn answer a partition
/// Kafka 4.4.0 does not have (an unknown topic, or a partition past the
/// topic's) UNKNOWN_TOPIC_OR_PARTITION before anything else, whatever the
/// group or transaction would answer, and first: each topic's unknown
/// partitions, then the others (AddPartitionsToTxn then OPERATION_NOT_ATTEMPTED
/// for these). An OffsetCommit of unknown partitions only leaves no group.
#[tokio::test]
async fn unknown_partitions_are_answered_first_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let topics = json!([
        {"name": "t1", "partitions": [committed_partition(0), committed_partition(7)]},
        {"name": "nosuch", "partitions": [committed_partition(0)]}
    ]);
    let answered = |known: i64| {
        json!({"topics": [
            {"name": "t1", "partitions": [{"partitionIndex": 7, "errorCode": 3},
                                          {"partitionIndex": 0, "errorCode": known}]},
            {"name": "nosuch", "partitions": [{"partitionIndex": 0, "errorCode": 3}]}]})
    };
    let commit = |generation: i64, member: &str, topics: &Value| {
        json!({"groupId": "uk", "generationIdOrMemberEpoch": generation, "memberId": member,
               "groupInstanceId": null, "topics": topics})
    };
    // Only unknown partitions: nothing reaches the group, which is not made.
    let unknown_only = json!([{"name": "nosuch", "partitions": [committed_partition(0)]}]);
    assert_eq!(
        answer(p, ApiKey::OffsetCommit, 8, commit(-1, "", &unknown_only)).await,
        json!({"topics": [{"name": "nosuch", "partitions": [{"partitionIndex": 0,
                                                             "errorCode": 3}]}]})
    );
    assert_eq!(
        answer(
            p,
            ApiKey::ListGroups,
            5,
            json!({"statesFilter": [], "typesFilter": []})
        )
        .await,
        json!({"errorCode": 0, "groups": []})
    );
    assert_eq!(
        answer(p, ApiKey::OffsetCommit, 8, commit(-1, "", &topics)).await,
        answered(0)
    );
    // A member the group does not have.
    assert_eq!(
        answer(p, ApiKey::OffsetCommit, 8, commit(5, "zz", &topics)).await,
        answered(25)
    );
    assert_eq!(
        answer(
            p,
            ApiKey::TxnOffsetCommit,
            3,
            json!({"transactionalId": "tx", "groupId": "uk", "producerId": 1,
                   "producerEpoch": 0, "generationIdOrMemberEpoch": -1, "memberId": "",
                   "groupInstanceId": null, "topics": topics})
        )
        .await,
        answered(49)
    );
    let add = json!({"v3AndBelowTransactionalId": "tx", "v3AndBelowProducerId": 1,
                     "v3AndBelowProducerEpoch": 0, "v3AndBelowTopics": [
                         {"name": "t1", "partitions": [0, 7]},
                         {"name": "nosuch", "partitions": [0]}]});
    assert_eq!(
        answer(p, ApiKey::AddPartitionsToTxn, 3, add).await,
        json!({"resultsByTopicV3AndBelow": [
            {"name": "t1", "resultsByPartition": [
                {"partitionIndex": 7, "partitionErrorCode": 3},
                {"partitionIndex": 0, "partitionErrorCode": 55}]},
            {"name": "nosuch", "resultsByPartition": [
                {"partitionIndex": 0, "partitionErrorCode": 3}]}]})
    );
    cluster.shutdown().await.ok();
}

/// An OffsetCommit with a generation (or member epoch) to a group that
/// does not exist is ILLEGAL_GENERATION below v9 and GROUP_ID_NOT_FOUND
/// from v9, as Kafka 4.4.0 answers it, and makes no group; only a simple
/// commit (generation -1) makes one.
#[tokio::test]
async fn an_offset_commit_to_no_group_with_a_generation_makes_none() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    for (version, code) in [(2, 22), (8, 22), (9, 69)] {
        let mut partition = committed_partition(0);
        if version < 6 {
            if let Some(fields) = partition.as_object_mut() {
                fields.remove("committedLeaderEpoch");
            }
        }
        let request = json!({"groupId": "nx", "generationIdOrMemberEpoch": 0, "memberId": "",
                             "groupInstanceId": null, "retentionTimeMs": -1,
                             "topics": [{"name": "t1", "partitions": [partition]}]});
        assert_eq!(
            answer(p, ApiKey::OffsetCommit, version, request).await,
            json!({"topics": [{"name": "t1", "partitions": [{"partitionIndex": 0,
                                                             "errorCode": code}]}]}),
            "v{version}"
        );
    }
    let described = answer(
        p,
        ApiKey::DescribeGroups,
        5,
        json!({"groups": ["nx"], "includeAuthorizedOperations": false}),
    )
    .await;
    assert_eq!(described["groups"][0]["groupState"], "Dead", "{described}");
    cluster.shutdown().await.ok();
}

/// An idempotent producer's InitProducerId (no transactional id) always
/// gets a new producer id at epoch 0 from Kafka 4.4.0, also when it names
/// its producer id and epoch to ask for a bump (KIP-360): only a
/// transactional id's producer keeps its id and bumps its epoch.
#[tokio::test]
async fn an_idempotent_producer_gets_a_new_id_for_every_init() {
    let cluster = brokers(1).await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let init = |producer_id: i64, epoch: i64| {
        json!({"transactionalId": null, "transactionTimeoutMs": 60000,
               "producerId": producer_id, "producerEpoch": epoch})
    };
    let first = answer(p, ApiKey::InitProducerId, 5, init(-1, -1)).await;
    let id = first["producerId"].as_i64().unwrap_or(-1);
    assert_eq!(first["producerEpoch"], 0, "{first}");
    let mut seen = vec![id];
    for (version, epoch) in [(5, 0), (5, 3), (3, 0)] {
        let again = answer(p, ApiKey::InitProducerId, version, init(id, epoch)).await;
        let next = again["producerId"].as_i64().unwrap_or(-1);
        assert_eq!(
            (&again["errorCode"], &again["producerEpoch"]),
            (&json!(0), &json!(0)),
            "{again}"
        );
        assert!(!seen.contains(&next), "{next} given twice: {seen:?}");
        seen.push(next);
    }
    cluster.shutdown().await.ok();
}

/// A Fetch partition Kafka 4.4.0 refuses has no offsets (high watermark,
/// last stable offset and log start -1); those its broker refuses before
/// reading (an unknown topic id, topic or partition) list no aborted
/// transactions ([]), those its log refuses (a leader epoch ahead, an
/// offset out of range) none at all (null).
#[tokio::test]
async fn a_refused_fetch_partition_has_no_offsets() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let produced = answer(
        p,
        ApiKey::Produce,
        9,
        json!({"transactionalId": null, "acks": -1, "timeoutMs": 1000, "topicData": [
            {"name": "t1", "partitionData": [{"index": 0, "records":
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD,
                                       common::batch(None, &[b"a", b"b"]))}]}]}),
    )
    .await;
    assert_eq!(
        produced["responses"][0]["partitionResponses"][0]["errorCode"],
        0
    );
    let fetch = |topic: &str, partition: i64, epoch: i64, offset: i64| {
        json!({"replicaId": -1, "maxWaitMs": 0, "minBytes": 0, "maxBytes": 1048576,
               "isolationLevel": 1, "sessionId": 0, "sessionEpoch": -1, "topics": [
                   {"topic": topic, "partitions": [{"partition": partition,
                    "currentLeaderEpoch": epoch, "fetchOffset": offset, "lastFetchedEpoch": -1,
                    "logStartOffset": -1, "partitionMaxBytes": 1024}]}],
               "forgottenTopicsData": [], "rackId": ""})
    };
    let refused = |code: i64, aborted: Value| {
        json!({"errorCode": code, "highWatermark": -1, "lastStableOffset": -1,
               "logStartOffset": -1, "abortedTransactions": aborted, "records": ""})
    };
    for (request, expected) in [
        (fetch("t1", 5, -1, 0), refused(3, json!([]))),
        (fetch("nosuch", 0, -1, 0), refused(3, json!([]))),
        (fetch("t1", 0, 1000, 0), refused(75, json!(null))),
        (fetch("t1", 0, -1, 1000), refused(1, json!(null))),
    ] {
        let answered = answer(p, ApiKey::Fetch, 12, request.clone()).await;
        let partition = &answered["responses"][0]["partitions"][0];
        let got: serde_json::Map<String, Value> = expected
            .as_object()
            .into_iter()
            .flatten()
            .map(|(key, _)| (key.clone(), partition[key].clone()))
            .collect();
        assert_eq!(Value::Object(got), expected, "{request}");
    }
    cluster.shutdown().await.ok();
}

/// Committed metadata over Kafka 4.4.0's `offset.metadata.max.bytes`
/// (4096) is OFFSET_METADATA_TOO_LARGE and not stored; null metadata is
/// kept as "", as OffsetFetch then reads it.
#[tokio::test]
async fn committed_metadata_as_kafka_keeps_it() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let commit = |offset: i64, metadata: Value| {
        json!({"groupId": "meta", "generationIdOrMemberEpoch": -1, "memberId": "",
               "groupInstanceId": null, "topics": [{"name": "t1", "partitions": [
                   {"partitionIndex": 0, "committedOffset": offset, "committedLeaderEpoch": -1,
                    "committedMetadata": metadata}]}]})
    };
    let code = |answer: Value| answer["topics"][0]["partitions"][0]["errorCode"].clone();
    assert_eq!(
        code(answer(p, ApiKey::OffsetCommit, 8, commit(2, json!(null))).await),
        0
    );
    let long = "m".repeat(4097);
    assert_eq!(
        code(answer(p, ApiKey::OffsetCommit, 8, commit(3, json!(long))).await),
        12
    );
    let fits = "m".repeat(4096);
    let fetched = answer(
        p,
        ApiKey::OffsetFetch,
        8,
        json!({"groups": [{"groupId": "meta", "topics": null}], "requireStable": false}),
    )
    .await;
    assert_eq!(
        fetched["groups"][0]["topics"][0]["partitions"][0],
        json!({"partitionIndex": 0, "committedOffset": 2, "committedLeaderEpoch": -1,
               "metadata": "", "errorCode": 0})
    );
    assert_eq!(
        code(answer(p, ApiKey::OffsetCommit, 8, commit(4, json!(fits))).await),
        0
    );
    cluster.shutdown().await.ok();
}

/// CreatePartitions that would not add a partition is INVALID_PARTITIONS
/// in Kafka 4.4.0's words.
#[tokio::test]
async fn create_partitions_says_why_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    for (count, message) in [
        (1, "Topic already has 1 partition(s)."),
        (
            0,
            "The topic t1 currently has 1 partition(s); 0 would not be an increase.",
        ),
    ] {
        assert_eq!(
            answer(
                &mut probe,
                ApiKey::CreatePartitions,
                3,
                json!({"topics": [{"name": "t1", "count": count, "assignments": null}],
                       "timeoutMs": 5000, "validateOnly": false})
            )
            .await,
            json!({"results": [{"name": "t1", "errorCode": 37, "errorMessage": message}]})
        );
    }
    cluster.shutdown().await.ok();
}

/// Partition 0 of `topic` listed by `timestamp` (ListOffsets v9): its
/// timestamp, offset and leader epoch.
async fn listed_by_time(probe: &mut Probe, topic: &str, timestamp: i64) -> Value {
    let request = json!({"replicaId": -1, "isolationLevel": 0, "topics": [{"name": topic,
        "partitions": [{"partitionIndex": 0, "currentLeaderEpoch": -1,
                        "timestamp": timestamp}]}]});
    let listed = answer(probe, ApiKey::ListOffsets, 9, request).await;
    let p = &listed["topics"][0]["partitions"][0];
    json!([p["timestamp"], p["offset"], p["leaderEpoch"]])
}

/// A gzip batch of a record for each timestamp.
fn timed_batch(timestamps: &[i64]) -> String {
    use base64::Engine as _;
    let mut b = kafka_wire_records::RecordBatchBuilder::new(0)
        .compression(kafka_wire_records::Compression::Gzip);
    for ts in timestamps {
        assert!(b.append(*ts, None, Some(b"v"), &[]).is_ok());
    }
    base64::engine::general_purpose::STANDARD.encode(b.build().unwrap_or_default())
}

/// Kafka 4.4.0 answers a ListOffsets by time with the first record (not
/// batch) whose timestamp reaches the target: that record's timestamp and
/// offset, and its batch's leader epoch. The max timestamp (-3) is the
/// first record holding the largest timestamp, which in a log-append-time
/// batch is its first. When no record is found, the timestamp, the offset
/// and the leader epoch are all -1.
#[tokio::test]
async fn list_offsets_by_time_finds_the_record() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .topic(kafka_wire_fake::TopicSpec::new("t1", 1))
        .topic(
            kafka_wire_fake::TopicSpec::new("appended", 1)
                .config("message.timestamp.type", "LogAppendTime"),
        )
        .topic(kafka_wire_fake::TopicSpec::new("empty", 1))
        .start()
        .await
        .expect("start");
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    for (topic, timestamps) in [
        ("t1", &[1000, 1002, 1001][..]),
        ("t1", &[2000, 1500][..]),
        ("appended", &[1000, 1001, 1002][..]),
    ] {
        let produced = answer(
            p,
            ApiKey::Produce,
            9,
            json!({"acks": -1, "timeoutMs": 1000, "topicData": [{"name": topic,
                   "partitionData": [{"index": 0, "records": timed_batch(timestamps)}]}]}),
        )
        .await;
        assert_eq!(
            produced["responses"][0]["partitionResponses"][0]["errorCode"], 0,
            "{produced}"
        );
    }
    assert_eq!(listed_by_time(p, "t1", 1001).await, json!([1002, 1, 0]));
    assert_eq!(listed_by_time(p, "t1", 1000).await, json!([1000, 0, 0]));
    assert_eq!(listed_by_time(p, "t1", 1003).await, json!([2000, 3, 0]));
    assert_eq!(listed_by_time(p, "t1", 1600).await, json!([2000, 3, 0]));
    assert_eq!(listed_by_time(p, "t1", 2001).await, json!([-1, -1, -1]));
    assert_eq!(listed_by_time(p, "t1", -3).await, json!([2000, 3, 0]));
    let appended = listed_by_time(p, "appended", -3).await;
    assert_eq!(appended[1], 0, "{appended}");
    assert_eq!(listed_by_time(p, "empty", -3).await, json!([-1, -1, -1]));
    assert_eq!(listed_by_time(p, "empty", 1000).await, json!([-1, -1, -1]));
    assert_eq!(listed_by_time(p, "empty", -1).await, json!([-1, 0, 0]));
    cluster.shutdown().await.ok();
}

/// A Fetch v12 of partition 0 of `topic` from `offset` at `isolation`:
/// the base offsets of the batches read and the aborted transactions'
/// first offsets (null when none is listed).
async fn fetched_batches(probe: &mut Probe, topic: &str, offset: i64, isolation: i8) -> Value {
    use base64::Engine as _;
    let request = json!({"replicaId": -1, "maxWaitMs": 0, "minBytes": 0, "maxBytes": 1048576,
        "isolationLevel": isolation, "sessionId": 0, "sessionEpoch": -1,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "currentLeaderEpoch": -1,
            "fetchOffset": offset, "lastFetchedEpoch": -1, "logStartOffset": -1,
            "partitionMaxBytes": 1048576}]}],
        "forgottenTopicsData": [], "rackId": ""});
    let fetched = answer(probe, ApiKey::Fetch, 12, request).await;
    let p = &fetched["responses"][0]["partitions"][0];
    let records = base64::engine::general_purpose::STANDARD
        .decode(p["records"].as_str().unwrap_or_default())
        .unwrap_or_default();
    let mut bases = Vec::new();
    let mut rest = &records[..];
    while rest.len() >= 12 {
        let base = i64::from_be_bytes(rest[..8].try_into().unwrap_or_default());
        let len = u32::from_be_bytes(rest[8..12].try_into().unwrap_or_default());
        bases.push(base);
        rest = rest.get(12 + len as usize..).unwrap_or_default();
    }
    let aborted = p["abortedTransactions"].as_array().map(|a| {
        a.iter()
            .map(|t| t["firstOffset"].clone())
            .collect::<Vec<_>>()
    });
    json!([bases, aborted])
}

/// Kafka 4.4.0 rolls a new log segment when a batch's timestamp is more
/// than `segment.ms` (seven days) past the segment's first batch's, and a
/// fetch reads one segment: after a batch timestamped long ago, a marker
/// (timestamped now) starts a new segment and a fetch from the batch gets
/// the batch alone. A read_committed fetch lists the aborted transactions
/// that overlap what it read (up to the next segment), not those after
/// (an abort overlaps from its first offset to its marker).
#[tokio::test]
async fn a_fetch_reads_one_segment_as_kafka_rolls_them() {
    use base64::Engine as _;
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let init = answer(
        p,
        ApiKey::InitProducerId,
        5,
        json!({"transactionalId": "old", "transactionTimeoutMs": 600000,
               "producerId": -1, "producerEpoch": -1}),
    )
    .await;
    let id = init["producerId"].as_i64().unwrap_or(-1);
    for sequence in [0, 1] {
        let added = answer(
            p,
            ApiKey::AddPartitionsToTxn,
            3,
            json!({"v3AndBelowTransactionalId": "old", "v3AndBelowProducerId": id,
                   "v3AndBelowProducerEpoch": 0,
                   "v3AndBelowTopics": [{"name": "t1", "partitions": [0]}]}),
        )
        .await;
        assert_eq!(
            added["resultsByTopicV3AndBelow"][0]["resultsByPartition"][0]["partitionErrorCode"], 0,
            "{added}"
        );
        // Timestamp 1000: long before the marker's.
        let records = common::transactional_batch((id, 0, sequence), &[b"a"]);
        let produced = answer(
            p,
            ApiKey::Produce,
            9,
            json!({"transactionalId": "old", "acks": -1, "timeoutMs": 1000, "topicData": [
                {"name": "t1", "partitionData": [{"index": 0,
                 "records": base64::engine::general_purpose::STANDARD.encode(records)}]}]}),
        )
        .await;
        assert_eq!(
            produced["responses"][0]["partitionResponses"][0]["errorCode"], 0,
            "{produced}"
        );
        let ended = answer(
            p,
            ApiKey::EndTxn,
            3,
            json!({"transactionalId": "old", "producerId": id, "producerEpoch": 0,
                   "committed": false}),
        )
        .await;
        assert_eq!(ended["errorCode"], 0, "{ended}");
    }
    // Segments: [0], [1 (marker), 2, 3 (marker)].
    let mut read = Value::Null;
    for _ in 0..50 {
        read = fetched_batches(p, "t1", 0, 1).await;
        if read == json!([[0], [0]]) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(read, json!([[0], [0]]));
    assert_eq!(fetched_batches(p, "t1", 0, 0).await, json!([[0], null]));
    assert_eq!(
        fetched_batches(p, "t1", 1, 1).await,
        json!([[1, 2, 3], [0, 2]])
    );
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0 answers a duplicate of an idempotent producer's batch with
/// the batch's first offset and, as its log append time, the timestamp it
/// appended it with (its max timestamp), though the topic keeps the
/// producer's times (-1 for the first append).
#[tokio::test]
async fn a_duplicate_is_answered_with_its_timestamp() {
    use base64::Engine as _;
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let init = answer(
        p,
        ApiKey::InitProducerId,
        4,
        json!({"transactionalId": null, "transactionTimeoutMs": 60000,
               "producerId": -1, "producerEpoch": -1}),
    )
    .await;
    let id = init["producerId"].as_i64().unwrap_or(-1);
    // Timestamp 1000 for each record.
    let records = common::batch(Some((id, 0, 0)), &[b"a", b"b"]);
    let records = base64::engine::general_purpose::STANDARD.encode(records);
    let mut answers = Vec::new();
    for _ in 0..2 {
        let produced = answer(
            p,
            ApiKey::Produce,
            9,
            json!({"acks": -1, "timeoutMs": 1000, "topicData": [{"name": "t1",
                   "partitionData": [{"index": 0, "records": records}]}]}),
        )
        .await;
        let partition = &produced["responses"][0]["partitionResponses"][0];
        answers.push(json!([
            partition["errorCode"],
            partition["baseOffset"],
            partition["logAppendTimeMs"]
        ]));
    }
    assert_eq!(answers, vec![json!([0, 0, -1]), json!([0, 0, 1000])]);
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0 keeps a transaction's start time past its end: described
/// after an abort, the transactional id shows when the aborted
/// transaction began, until InitProducerId makes it -1 again.
#[tokio::test]
async fn an_ended_transaction_keeps_its_start_time() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let init = json!({"transactionalId": "kept", "transactionTimeoutMs": 600000,
                      "producerId": -1, "producerEpoch": -1});
    let started = answer(p, ApiKey::InitProducerId, 5, init.clone()).await;
    let id = started["producerId"].as_i64().unwrap_or(-1);
    let start_time = |described: Value| {
        described["transactionStates"][0]["transactionStartTimeMs"]
            .as_i64()
            .unwrap_or(i64::MIN)
    };
    let describe = json!({"transactionalIds": ["kept"]});
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0));
    let added = answer(
        p,
        ApiKey::AddPartitionsToTxn,
        3,
        json!({"v3AndBelowTransactionalId": "kept", "v3AndBelowProducerId": id,
               "v3AndBelowProducerEpoch": 0,
               "v3AndBelowTopics": [{"name": "t1", "partitions": [0]}]}),
    )
    .await;
    assert_eq!(
        added["resultsByTopicV3AndBelow"][0]["resultsByPartition"][0]["partitionErrorCode"], 0,
        "{added}"
    );
    let ongoing = start_time(answer(p, ApiKey::DescribeTransactions, 0, describe.clone()).await);
    assert!(ongoing >= before, "{ongoing} {before}");
    let ended = answer(
        p,
        ApiKey::EndTxn,
        3,
        json!({"transactionalId": "kept", "producerId": id, "producerEpoch": 0,
               "committed": false}),
    )
    .await;
    assert_eq!(ended["errorCode"], 0, "{ended}");
    let mut after = Value::Null;
    for _ in 0..50 {
        after = answer(p, ApiKey::DescribeTransactions, 0, describe.clone()).await;
        if after["transactionStates"][0]["transactionState"] == "CompleteAbort" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(start_time(after), ongoing);
    answer(p, ApiKey::InitProducerId, 5, init).await;
    let reinit = answer(p, ApiKey::DescribeTransactions, 0, describe).await;
    assert_eq!(start_time(reinit), -1);
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0 answers an OffsetDelete's unknown topics and unknown
/// partitions with UNKNOWN_TOPIC_OR_PARTITION, listed before what the group
/// coordinator answers for the others; a group it does not know refuses
/// the whole request (GROUP_ID_NOT_FOUND).
#[tokio::test]
async fn offset_delete_names_unknown_partitions_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let committed = answer(
        p,
        ApiKey::OffsetCommit,
        8,
        json!({"groupId": "simple", "generationIdOrMemberEpoch": -1, "memberId": "",
               "groupInstanceId": null, "topics": [{"name": "t1", "partitions": [
                   {"partitionIndex": 0, "committedOffset": 0, "committedLeaderEpoch": -1,
                    "committedMetadata": ""}]}]}),
    )
    .await;
    assert_eq!(
        committed["topics"][0]["partitions"][0]["errorCode"], 0,
        "{committed}"
    );
    let delete = |group: &str| {
        json!({"groupId": group, "topics": [
            {"name": "t1", "partitions": [{"partitionIndex": 0}, {"partitionIndex": 5}]},
            {"name": "nosuch", "partitions": [{"partitionIndex": 0}]}]})
    };
    assert_eq!(
        answer(p, ApiKey::OffsetDelete, 0, delete("simple")).await,
        json!({"errorCode": 0, "topics": [
            {"name": "t1", "partitions": [{"partitionIndex": 5, "errorCode": 3},
                                          {"partitionIndex": 0, "errorCode": 0}]},
            {"name": "nosuch", "partitions": [{"partitionIndex": 0, "errorCode": 3}]}]})
    );
    assert_eq!(
        answer(p, ApiKey::OffsetDelete, 0, delete("nobody")).await,
        json!({"errorCode": 69, "topics": []})
    );
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0 refuses a JoinGroup whose protocols none of the group's
/// members supports with INCONSISTENT_GROUP_PROTOCOL (member id ""), before
/// it would give a new member its id (MEMBER_ID_REQUIRED).
#[tokio::test]
async fn a_join_of_no_common_protocol_is_inconsistent_first() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let join = |protocol: &str| {
        json!({"groupId": "classic", "sessionTimeoutMs": 30000, "rebalanceTimeoutMs": 30000,
               "memberId": "", "groupInstanceId": null, "protocolType": "consumer",
               "protocols": [{"name": protocol, "metadata": ""}]})
    };
    let first = answer(p, ApiKey::JoinGroup, 3, join("range")).await;
    assert_eq!(first["errorCode"], 0, "{first}");
    let refused = answer(p, ApiKey::JoinGroup, 5, join("roundrobin-only")).await;
    assert_eq!(
        json!([refused["errorCode"], refused["memberId"]]),
        json!([23, ""])
    );
    let second = answer(p, ApiKey::JoinGroup, 5, join("range")).await;
    assert_eq!(second["errorCode"], 79, "{second}");
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0 says why it refuses a CreateTopics topic: an invalid name
/// (and why it is invalid), a topic that exists, a non-positive partition
/// count; a refused topic lists its configs as empty, not null.
#[tokio::test]
async fn create_topics_says_why_it_refuses_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let long = "x".repeat(250);
    let cases = [
        ("t1", 1, 36, "Topic 't1' already exists.".to_owned()),
        (
            "fresh",
            0,
            37,
            "Number of partitions was set to an invalid non-positive value.".to_owned(),
        ),
        (
            "bad/name",
            1,
            17,
            "Topic name is invalid: 'bad/name' contains one or more characters other than ASCII \
             alphanumerics, '.', '_' and '-'"
                .to_owned(),
        ),
        (
            "..",
            1,
            17,
            "Topic name is invalid: '..' is not allowed".to_owned(),
        ),
        (
            &long,
            1,
            17,
            format!(
                "Topic name is invalid: the length of '{long}' is longer than the max allowed \
                 length 249"
            ),
        ),
    ];
    for validate_only in [false, true] {
        for (name, partitions, code, message) in &cases {
            let created = answer(
                p,
                ApiKey::CreateTopics,
                7,
                json!({"topics": [{"name": name, "numPartitions": partitions,
                       "replicationFactor": 1, "assignments": [], "configs": []}],
                       "timeoutMs": 10000, "validateOnly": validate_only}),
            )
            .await;
            let topic = &created["topics"][0];
            assert_eq!(
                json!([topic["errorCode"], topic["errorMessage"], topic["configs"]]),
                json!([code, message, []]),
                "{name}"
            );
        }
    }
    cluster.shutdown().await.ok();
}

/// A classic JoinGroup of a new member to a consumer group with members:
/// Kafka 4.4.0 first gives the member its id (MEMBER_ID_REQUIRED), as to
/// any new member; the fake does too, then refuses the join with that id
/// (INCONSISTENT_GROUP_PROTOCOL), as it keeps no classic members in a
/// consumer group.
#[tokio::test]
async fn a_classic_join_of_a_consumer_group_gets_a_member_id_first() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let joined = answer(
        p,
        ApiKey::ConsumerGroupHeartbeat,
        1,
        consumer_beat("mixed", 0, json!({})),
    )
    .await;
    assert_eq!(joined["errorCode"], 0, "{joined}");
    let join = |member: &str| {
        json!({"groupId": "mixed", "sessionTimeoutMs": 30000, "rebalanceTimeoutMs": 30000,
               "memberId": member, "groupInstanceId": null, "protocolType": "consumer",
               "protocols": [{"name": "range", "metadata": ""}]})
    };
    let first = answer(p, ApiKey::JoinGroup, 5, join("")).await;
    assert_eq!(first["errorCode"], 79, "{first}");
    let id = first["memberId"].as_str().unwrap_or_default().to_owned();
    assert!(!id.is_empty(), "{first}");
    let again = answer(p, ApiKey::JoinGroup, 5, join(&id)).await;
    assert_eq!(again["errorCode"], 23, "{again}");
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0's DescribeConfigs refusals: an unknown topic by its code
/// alone (UNKNOWN_TOPIC_OR_PARTITION, message ""), a broker named by no
/// integer and another broker's id each with its own message.
#[tokio::test]
async fn describe_configs_refuses_as_kafka_does() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    for (kind, name, code, message) in [
        (2, "nosuch", 3, String::new()),
        (
            4,
            "not-a-number",
            42,
            "Broker id must be an integer, but it is: not-a-number".to_owned(),
        ),
        (
            4,
            "7",
            42,
            "Unexpected broker id, expected 0 or empty string, but received 7".to_owned(),
        ),
    ] {
        let described = answer(
            p,
            ApiKey::DescribeConfigs,
            4,
            json!({"resources": [{"resourceType": kind, "resourceName": name,
                   "configurationKeys": null}],
                   "includeSynonyms": false, "includeDocumentation": false}),
        )
        .await;
        let result = &described["results"][0];
        assert_eq!(
            json!([result["errorCode"], result["errorMessage"]]),
            json!([code, message]),
            "{name}"
        );
    }
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0 bounds a group's session timeout and heartbeat interval by
/// its coordinator's settings (45-60 s, 5-15 s by default): a value outside
/// is INVALID_CONFIG saying the range.
#[tokio::test]
async fn group_configs_are_bounded_as_kafka_bounds_them() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    for (name, value, expected) in [
        (
            "consumer.session.timeout.ms",
            "1",
            json!([
                40,
                "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."
            ]),
        ),
        (
            "share.heartbeat.interval.ms",
            "15001",
            json!([
                40,
                "share.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."
            ]),
        ),
        ("consumer.session.timeout.ms", "60000", json!([0, null])),
    ] {
        let altered = answer(
            p,
            ApiKey::IncrementalAlterConfigs,
            1,
            json!({"resources": [{"resourceType": 32, "resourceName": "g1", "configs": [
                {"name": name, "configOperation": 0, "value": value}]}],
                   "validateOnly": false}),
        )
        .await;
        let result = &altered["responses"][0];
        assert_eq!(
            json!([result["errorCode"], result["errorMessage"]]),
            expected,
            "{name}={value}"
        );
    }
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0's words for a ConsumerGroupHeartbeat it fences or does not
/// know: an epoch above the member's is "greater" (one below is
/// "smaller"); an unknown member is named with its group. A member
/// without a regex is described with "" for it.
#[tokio::test]
async fn consumer_group_heartbeat_refusals_say_what_kafka_says() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    let joined = answer(
        p,
        ApiKey::ConsumerGroupHeartbeat,
        1,
        consumer_beat("words", 0, json!({})),
    )
    .await;
    assert_eq!(joined["errorCode"], 0, "{joined}");
    let epoch = joined["memberEpoch"].as_i64().unwrap_or(0);
    let described = answer(
        p,
        ApiKey::ConsumerGroupDescribe,
        0,
        json!({"groupIds": ["words"], "includeAuthorizedOperations": false}),
    )
    .await;
    assert_eq!(
        described["groups"][0]["members"][0]["subscribedTopicRegex"], "",
        "{described}"
    );
    let greater = |sent: i64| {
        format!(
            "The consumer group member has a greater member epoch ({sent}) than the one known \
             by the group coordinator ({epoch}). The member must abandon all its partitions and \
             rejoin."
        )
    };
    let beat = |member: &str, sent: i64| {
        json!({"groupId": "words", "memberId": member, "memberEpoch": sent, "instanceId": null,
               "rackId": null, "rebalanceTimeoutMs": -1, "subscribedTopicNames": null,
               "subscribedTopicRegex": null, "serverAssignor": null, "topicPartitions": null})
    };
    for (member, sent, expected) in [
        (
            MEMBER,
            epoch + 5,
            beat_refused(110, Some(&greater(epoch + 5))),
        ),
        (
            "nobody",
            epoch,
            beat_refused(25, Some("Member nobody is not a member of group words.")),
        ),
    ] {
        let request = beat(member, sent);
        assert_eq!(
            answer(p, ApiKey::ConsumerGroupHeartbeat, 1, request).await,
            expected,
            "{member} {sent}"
        );
    }
    cluster.shutdown().await.ok();
}

/// A StreamsGroupHeartbeat v0 that Kafka 4.4.0 refuses (an unknown member)
/// leaves the int32 acceptable recovery lag at its default, 0.
#[tokio::test]
async fn a_refused_streams_heartbeat_v0_has_no_recovery_lag() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let refused = answer(
        &mut probe,
        ApiKey::StreamsGroupHeartbeat,
        0,
        json!({"groupId": "streams", "memberId": "nobody", "memberEpoch": 5,
               "endpointInformationEpoch": 0, "rebalanceTimeoutMs": -1}),
    )
    .await;
    assert_ne!(refused["errorCode"], 0, "{refused}");
    assert_eq!(refused["acceptableRecoveryLagLegacy"], 0, "{refused}");
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0's messages for the controller's refusals: an election not
/// needed or of an unknown topic; a reassignment cancel with none under way
/// (none), of an unknown topic (its own), and no top-level message ("" for
/// a request of no partitions); a
/// feature update refused, inside the words for a whole request failed;
/// "NONE" for a feature update that passes.
#[tokio::test]
async fn controller_refusals_say_what_kafka_says() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    for (topic, expected) in [
        (
            "t1",
            json!([84, "Leader election not needed for topic partition."]),
        ),
        ("nosuch", json!([3, "No such topic as nosuch"])),
    ] {
        let elected = answer(
            p,
            ApiKey::ElectLeaders,
            2,
            json!({"electionType": 0, "timeoutMs": 5000,
                   "topicPartitions": [{"topic": topic, "partitions": [0]}]}),
        )
        .await;
        let result = &elected["replicaElectionResults"][0]["partitionResult"][0];
        assert_eq!(
            json!([result["errorCode"], result["errorMessage"]]),
            expected,
            "{topic}"
        );
    }
    let moved = answer(
        p,
        ApiKey::AlterPartitionReassignments,
        0,
        json!({"timeoutMs": 5000, "topics": [
            {"name": "t1", "partitions": [{"partitionIndex": 0, "replicas": null}]},
            {"name": "nosuch", "partitions": [{"partitionIndex": 0, "replicas": [0]}]}]}),
    )
    .await;
    let partition = |i: usize| {
        let p = &moved["responses"][i]["partitions"][0];
        json!([p["errorCode"], p["errorMessage"]])
    };
    assert_eq!(moved["errorMessage"], Value::Null, "{moved}");
    let none = answer(
        p,
        ApiKey::AlterPartitionReassignments,
        0,
        json!({"timeoutMs": 5000, "topics": []}),
    )
    .await;
    assert_eq!(none["errorMessage"], "", "{none}");
    assert_eq!(partition(0), json!([85, null]));
    assert_eq!(
        partition(1),
        json!([3, "Unable to find a topic named nosuch."])
    );
    let update = |feature: &str, level: i64, upgrade_type: i64, validate_only: bool| {
        json!({"timeoutMs": 5000, "validateOnly": validate_only, "featureUpdates": [
            {"feature": feature, "maxVersionLevel": level, "upgradeType": upgrade_type}]})
    };
    let unknown = answer(
        p,
        ApiKey::UpdateFeatures,
        1,
        update("no.such.feature", 1, 1, false),
    )
    .await;
    assert_eq!(
        unknown["errorMessage"],
        "The update failed for all features since the following feature had an error: Invalid \
         update version 1 for feature no.such.feature. Local controller 0 does not support this \
         feature."
    );
    let above = answer(
        p,
        ApiKey::UpdateFeatures,
        1,
        update("group.version", 100, 1, false),
    )
    .await;
    assert_eq!(
        above["errorMessage"],
        "The update failed for all features since the following feature had an error: Invalid \
         update version 100 for feature group.version. Local controller 0 only supports versions \
         0-1"
    );
    let validated = answer(
        p,
        ApiKey::UpdateFeatures,
        1,
        update("group.version", 0, 2, true),
    )
    .await;
    assert_eq!(
        json!([
            validated["errorCode"],
            validated["results"][0]["errorMessage"]
        ]),
        json!([0, "NONE"])
    );
    cluster.shutdown().await.ok();
}

/// Kafka 4.4.0's CreateTopics (v5+) lists every config of the topic it
/// creates, or would create (validate-only), by name: the 37 topic
/// configs, those given as the topic's own (source 1), the others as the
/// broker resolves them (defaults: source 5; `min.insync.replicas` the
/// cluster's dynamic default: source 3).
#[tokio::test]
async fn create_topics_lists_the_new_topics_configs() {
    let cluster = with_topic().await;
    let mut probe = connect(&cluster, 0).await;
    let p = &mut probe;
    for (name, validate_only) in [("compacted", false), ("checked", true)] {
        let created = answer(
            p,
            ApiKey::CreateTopics,
            7,
            json!({"topics": [{"name": name, "numPartitions": 1, "replicationFactor": 1,
                   "assignments": [],
                   "configs": [{"name": "cleanup.policy", "value": "compact"}]}],
                   "timeoutMs": 10000, "validateOnly": validate_only}),
        )
        .await;
        let configs = created["topics"][0]["configs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let names: Vec<&str> = configs.iter().filter_map(|c| c["name"].as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!((names.len(), &names), (37, &sorted), "{created}");
        let config = |wanted: &str| {
            configs
                .iter()
                .find(|c| c["name"] == wanted)
                .cloned()
                .unwrap_or_default()
        };
        assert_eq!(
            config("cleanup.policy"),
            json!({"name": "cleanup.policy", "value": "compact", "readOnly": false,
                   "configSource": 1, "isSensitive": false})
        );
        assert_eq!(
            config("retention.ms"),
            json!({"name": "retention.ms", "value": "604800000", "readOnly": false,
                   "configSource": 5, "isSensitive": false})
        );
        assert_eq!(config("min.insync.replicas")["configSource"], 3);
    }
    cluster.shutdown().await.ok();
}
