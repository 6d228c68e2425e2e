use super::*;
use serde_json::json;

fn knowledge() -> Knowledge {
    let mut k = Knowledge::default();
    k.learn_metadata(&json!({
        "brokers": [
            {"nodeId": 1, "host": "127.0.0.1", "port": 9092, "rack": null},
            {"nodeId": 2, "host": "127.0.0.1", "port": 9093, "rack": null}
        ],
        "clusterId": "cluster-a",
        "controllerId": 1,
        "topics": [{"errorCode": 0, "name": "kwc-1-r-sweep", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
                    "partitions": [{"errorCode": 0, "partitionIndex": 0, "leaderId": 2, "leaderEpoch": 0}]}]
    }));
    k.learn_coordinator(
        &json!({"key": "kwc-1-r-g", "keyType": 0}),
        &json!({"errorCode": 0, "nodeId": 1}),
    );
    k
}

fn run(api: ApiKey, request: Value, mut answer: Value) -> Value {
    let names = RunNames::new("kwc-1");
    let knowledge = knowledge();
    let cx = Context {
        side: Side::Reference,
        names: &names,
        knowledge: &knowledge,
        api,
        version: 12,
        request: &request,
        window_start_ms: 1_800_000_000_000,
        answered_ms: 1_800_000_010_000,
        run_start_ms: 1_799_000_000_000,
        timeout_ms: 10_000,
    };
    normalize(&mut answer, &cx, &mut Mapper::new());
    answer
}

#[test]
fn node_ids_are_mapped_by_role_and_brokers_count_once() {
    let answer = run(
        ApiKey::Metadata,
        json!({"topics": [{"name": "kwc-1-r-sweep"}]}),
        json!({
            "throttleTimeMs": 0,
            "brokers": [
                {"nodeId": 2, "host": "127.0.0.1", "port": 9093, "rack": null},
                {"nodeId": 1, "host": "127.0.0.1", "port": 9092, "rack": null}
            ],
            "clusterId": "cluster-a",
            "controllerId": 1,
            "topics": [{"errorCode": 0, "name": "kwc-1-r-sweep", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
                        "partitions": [{"errorCode": 0, "partitionIndex": 0, "leaderId": 2,
                                        "leaderEpoch": 0, "replicaNodes": [2], "isrNodes": [2, 7],
                                        "offlineReplicas": []}]}]
        }),
    );
    assert_eq!(
        answer,
        json!({
            "throttleTimeMs": "<throttle within bounds>",
            "brokers": [{"nodeId": "<a broker>", "host": "<its host>", "port": "<its port>", "rack": null}],
            "clusterId": "<cluster id>",
            "controllerId": "<a broker>",
            "topics": [{"errorCode": 0, "name": "<run>-sweep", "topicId": "<id of <run>-sweep>",
                        "partitions": [{"errorCode": 0, "partitionIndex": 0,
                                        "leaderId": "<leader of <run>-sweep/0>", "leaderEpoch": 0,
                                        "replicaNodes": ["<leader of <run>-sweep/0>"],
                                        "isrNodes": ["<leader of <run>-sweep/0>", 7],
                                        "offlineReplicas": []}]}]
        })
    );
}

#[test]
fn a_value_failing_its_rule_stays() {
    let answer = run(
        ApiKey::Metadata,
        json!({"topics": []}),
        json!({
            "throttleTimeMs": 99_999,
            "brokers": [{"nodeId": 1, "host": "10.0.0.9", "port": 9092, "rack": null}],
            "clusterId": "other",
            "controllerId": -1,
            "topics": []
        }),
    );
    assert_eq!(answer["throttleTimeMs"], 99_999);
    assert_eq!(answer["brokers"][0]["host"], "10.0.0.9");
    assert_eq!(answer["brokers"][0]["port"], 9092);
    assert_eq!(answer["brokers"][0]["nodeId"], "<a broker>");
    assert_eq!(answer["clusterId"], "other");
    assert_eq!(answer["controllerId"], -1);
}

#[test]
fn coordinators_times_and_ids_by_first_appearance() {
    let found = run(
        ApiKey::FindCoordinator,
        json!({"key": "kwc-1-r-g", "keyType": 0}),
        json!({"errorCode": 0, "nodeId": 1, "host": "127.0.0.1", "port": 9092}),
    );
    assert_eq!(
        found,
        json!({"errorCode": 0, "nodeId": "<coordinator of <run>-g>", "host": "<its host>", "port": "<its port>"})
    );
    let names = RunNames::new("kwc-1");
    let knowledge = knowledge();
    let request = json!({});
    let cx = Context {
        side: Side::Reference,
        names: &names,
        knowledge: &knowledge,
        api: ApiKey::JoinGroup,
        version: 9,
        request: &request,
        window_start_ms: 1_800_000_000_000,
        answered_ms: 1_800_000_010_000,
        run_start_ms: 1_799_000_000_000,
        timeout_ms: 10_000,
    };
    let mut mapper = Mapper::new();
    let mut first = json!({"memberId": "consumer-abc", "leader": "consumer-abc", "members": [
        {"memberId": "consumer-abc"}, {"memberId": "consumer-def"}]});
    normalize(&mut first, &cx, &mut mapper);
    assert_eq!(
        first,
        json!({"memberId": "<member id 1>", "leader": "<member id 1>", "members": [
            {"memberId": "<member id 1>"}, {"memberId": "<member id 2>"}]})
    );
    let mut empty = json!({"memberId": ""});
    normalize(&mut empty, &cx, &mut mapper);
    assert_eq!(empty["memberId"], "");
    let init = Context {
        api: ApiKey::InitProducerId,
        ..cx
    };
    let mut answer = json!({"producerId": 5000, "producerEpoch": 0, "lastTimestamp": 1_800_000_005_000i64,
                            "other": [{"producerId": 4000}, {"producerId": 5000}, {"producerId": -1}],
                            "old": {"commitTimestamp": 1_700_000_000_000i64}, "none": {"timestamp": -1}});
    normalize(&mut answer, &init, &mut mapper);
    assert_eq!(
        answer,
        json!({"producerId": "<producer id 1>", "producerEpoch": 0, "lastTimestamp": "<time within the case>",
               "other": [{"producerId": "<producer id 2>"}, {"producerId": "<producer id 1>"}, {"producerId": -1}],
               "old": {"commitTimestamp": 1_700_000_000_000i64}, "none": {"timestamp": -1}})
    );
}

#[test]
fn listings_keep_the_runs_own_entries_in_name_order() {
    let answer = run(
        ApiKey::ListGroups,
        json!({}),
        json!({"groups": [
            {"groupId": "kwc-1-r-b", "protocolType": "consumer"},
            {"groupId": "someone-else"},
            {"groupId": "kwc-1-c-a", "protocolType": "consumer"},
            {"groupId": "kwc-1-r-a", "protocolType": "consumer"}
        ]}),
    );
    assert_eq!(
        answer,
        json!({"groups": [
            {"groupId": "<run>-a", "protocolType": "consumer"},
            {"groupId": "<run>-b", "protocolType": "consumer"}
        ]})
    );
    // Metadata of named topics is not a listing: an unknown topic stays.
    let named = run(
        ApiKey::Metadata,
        json!({"topics": [{"name": "no-such-topic"}]}),
        json!({"topics": [{"errorCode": 3, "name": "no-such-topic", "partitions": []}]}),
    );
    assert_eq!(named["topics"][0]["name"], "no-such-topic");
    let all = run(
        ApiKey::Metadata,
        json!({"topics": null}),
        json!({"topics": [{"errorCode": 0, "name": "__consumer_offsets", "partitions": []},
                          {"errorCode": 0, "name": "kwc-1-r-sweep", "partitions": []}]}),
    );
    assert_eq!(all["topics"].as_array().map(Vec::len), Some(1));
}

#[test]
fn records_are_compared_decoded() {
    let batches = crate::sweep::batches();
    let answer = run(
        ApiKey::Fetch,
        json!({}),
        json!({"responses": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [
            {"partitionIndex": 0, "records": batches["gzip"], "preferredReadReplica": -1}
        ]}]}),
    );
    let batch = &answer["responses"][0]["partitions"][0]["records"]["batches"][0];
    assert_eq!(batch["crc"], "<verified>");
    assert_eq!(batch["compression"], "gzip");
    assert_eq!(batch["records"][0]["timestamp"], 1_700_000_000_000i64);
    assert_eq!(answer["responses"][0]["topicId"], "<id of <run>-sweep>");
    // Bytes that are not records stay as they are.
    let raw = run(ApiKey::Fetch, json!({}), json!({"records": "not base64!"}));
    assert_eq!(raw["records"], "not base64!");
}

#[test]
fn a_transactions_start_is_bounded_by_the_run() {
    let answer = |start: i64| {
        run(
            ApiKey::DescribeTransactions,
            json!({"transactionalIds": ["kwc-1-r-a"]}),
            json!({"transactionStates": [{"transactionStartTimeMs": start}]}),
        )["transactionStates"][0]["transactionStartTimeMs"]
            .clone()
    };
    // Before the case, within the run: a token.
    assert_eq!(answer(1_799_500_000_000), "<time within the run>");
    // Before the run (beyond the skew), none, or after the answer: as it is.
    assert_eq!(answer(1_798_000_000_000), 1_798_000_000_000_i64);
    assert_eq!(answer(-1), -1);
    assert_eq!(answer(1_900_000_000_000), 1_900_000_000_000_i64);
}

#[test]
fn a_failed_entry_names_no_producer() {
    let answer = run(
        ApiKey::DescribeTransactions,
        json!({"transactionalIds": ["kwc-1-r-a", "kwc-1-r-b"]}),
        json!({"transactionStates": [
            {"errorCode": 105, "transactionalId": "kwc-1-r-a", "producerId": 0},
            {"errorCode": 0, "transactionalId": "kwc-1-r-b", "producerId": 0}
        ]}),
    );
    assert_eq!(answer["transactionStates"][0]["producerId"], 0);
    assert_eq!(
        answer["transactionStates"][1]["producerId"],
        "<producer id 1>"
    );
}
