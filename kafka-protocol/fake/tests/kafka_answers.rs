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

/// Sends `request` (the JSON form) as `api` at `version`: the answer's JSON
/// form.
async fn ask(probe: &mut Probe, api: ApiKey, version: i16, request: Value) -> Value {
    let body = RequestBody::from_json(&request, api, version)
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
