//! The fake cluster's error paths beside real Kafka 4.4.0 (issue 43): the
//! same requests go to a two-broker fake cluster (`kafka-wire-fake`, in
//! this process) and to two real brokers (`tests/kafka/broker.sh --brokers
//! 2`), and the error codes of their answers must be the same.
//!
//! Most cases are data now, the `errors` scenario of kafka-wire-compat
//! (`kafka-protocol/compat/scenarios/errors.json`), run here by its engine
//! with the fake as the candidate: every error code of every answer
//! (`errorCode`, or a name ending in `ErrorCode`, at any depth) must match,
//! and so must whether a step got an answer at all. The cases below are
//! the ones the data cannot hold: those before authentication go to a SASL
//! listener (Kafka's SASL_PLAINTEXT listener of `--sasl`, a fake cluster
//! with SASL users), where a refusal is a closed connection, written
//! `closed`; client quotas of the default user, which are the cluster's;
//! a reassignment that names brokers by their ids; the log dirs of a
//! broker that does not lead the partition; and feature updates at v0.
//!
//! Prints `errors: N cases; same S; differ D`. Skips without Java, Maven or
//! the broker's jars in ~/.m2, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire::frame::ResponseFrame;
use kafka_wire::ApiKey;
use kafka_wire_compat::case::error_codes as codes_in;
use kafka_wire_compat::driver::{run_blocking, unix_ms, DriverConfig};
use kafka_wire_compat::engine::{Config, Engine};
use kafka_wire_compat::report::Verdict;
use kafka_wire_fake::{FakeCluster, SaslMechanism};
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::broker::{fit, Session};
use serde_json::{json, Value};

/// The topic every case that needs one uses: one partition.
const TOPIC: &str = "errors";

/// A topic no broker has.
const NO_TOPIC: &str = "no-such-topic";

/// The zero topic id, which stands for "no id" in Metadata requests.
const NO_ID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

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

/// The `errors` scenario of kafka-wire-compat, Kafka as the reference and
/// the fake as the candidate: for each case, its name and whether the
/// error codes (and whether each step was answered) agree, with the
/// differing paths.
fn scenario_cases(kafka: &str, fake: &str) -> Vec<(String, Vec<String>)> {
    let mut config = Config::new(kafka, fake);
    config.surface = false;
    config.sweep = false;
    config.scenarios = vec!["errors".to_owned()];
    let engine = Engine::new(config, std::time::Instant::now(), unix_ms());
    let report = std::thread::scope(|scope| {
        scope
            .spawn(|| run_blocking(engine, &DriverConfig::default(), |_| {}))
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
    .unwrap_or_else(|e| panic!("a runtime: {e}"))
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    report
        .cases
        .iter()
        .map(|case| {
            let differing = case
                .differences
                .iter()
                .filter(|d| {
                    let leaf = d.path.rsplit(['.', ' ']).next().unwrap_or_default();
                    let code = leaf == "errorCode" || leaf.ends_with("ErrorCode");
                    // A step one side answered and the other did not, or
                    // an element with codes one side lacks.
                    let composite = |v: &Value| v.is_object() || v.is_array();
                    let unanswered = |v: &Value| v.as_str().is_some_and(|t| t.starts_with('<'));
                    let whole = (composite(&d.reference) || composite(&d.candidate))
                        && (codes_in(&d.reference) != codes_in(&d.candidate)
                            || unanswered(&d.reference)
                            || unanswered(&d.candidate));
                    code || whole
                })
                .map(|d| format!("{}: kafka {}, fake {}", d.path, d.reference, d.candidate))
                .collect();
            let differing = match case.verdict {
                Verdict::OnlyReference | Verdict::OnlyCandidate => {
                    vec!["(advertised by one side)".into()]
                }
                _ => differing,
            };
            (case.case.clone(), differing)
        })
        .collect()
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

    let credentials = format!("{USER}:{PASSWORD}");
    let options = ["--brokers", "2", "--sasl", &credentials];
    let Some(kafka) = Kafka::start("fake-errors", &pinned_version(), &options) else {
        return;
    };
    let kafka_codes = run_cases(kafka.bootstrap(), kafka.get("sasl_bootstrap"));
    let scenario = scenario_cases(kafka.bootstrap(), &bootstrap);
    drop(kafka);
    runtime.block_on(async {
        fake.shutdown().await.ok();
        sasl_fake.shutdown().await.ok();
    });

    let mut differ = Vec::new();
    for (((name, _), kafka), fake) in CASES.iter().zip(&kafka_codes).zip(&fake_codes) {
        let line = format!("{name}: kafka {}, fake {}", show(kafka), show(fake));
        println!("{line}");
        if kafka != fake {
            differ.push(line);
        }
    }
    for (name, differing) in &scenario {
        let line = format!(
            "{name}: {}",
            if differing.is_empty() {
                "same codes".to_owned()
            } else {
                differing.join("; ")
            }
        );
        println!("{line}");
        if !differing.is_empty() {
            differ.push(line);
        }
    }
    let total = CASES.len() + scenario.len();
    let line = format!(
        "errors: {} cases; same {}; differ {}",
        total,
        total - differ.len(),
        differ.len()
    );
    kafka_wire_tests::clients::say(&line);
    assert!(differ.is_empty(), "{line}\n{}", differ.join("\n"));
}
