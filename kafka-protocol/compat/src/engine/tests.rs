//! The engine driven by hand: answers built here stand for two brokers,
//! no socket involved.

use std::time::{Duration, Instant};

use kafka_wire::frame::ResponseFrame;
use kafka_wire::messages::ResponseHeader;
use kafka_wire::ApiKey;
use serde_json::{json, Value};

use super::*;
use crate::body::fit_response;

/// A broker written as answers: one cluster of `brokers` nodes from
/// `first_node`, on ports from `first_port`.
#[derive(Clone)]
struct Mock {
    cluster: &'static str,
    first_node: i64,
    brokers: i64,
    first_port: i64,
    topic_id: &'static str,
    /// Extra apis advertised: (key, min, max).
    extra: Vec<(i16, i16, i16)>,
    /// Metadata's `isInternal` for every topic.
    internal: bool,
}

impl Mock {
    fn kafka() -> Mock {
        Mock {
            cluster: "cluster-a",
            first_node: 1,
            brokers: 1,
            first_port: 9001,
            topic_id: "AAAAAAAAAAAAAAAAAAAAAQ",
            extra: Vec::new(),
            internal: false,
        }
    }

    fn three_brokers() -> Mock {
        Mock {
            cluster: "cluster-b",
            first_node: 4,
            brokers: 3,
            first_port: 9101,
            topic_id: "AAAAAAAAAAAAAAAAAAAAAg",
            ..Mock::kafka()
        }
    }

    fn leader(&self) -> i64 {
        self.first_node + self.brokers - 1
    }

    fn answer(&self, x: &Exchange) -> Outcome {
        let request = x.body.to_json(x.version);
        let brokers: Vec<Value> = (0..self.brokers)
            .map(|i| {
                json!({"nodeId": self.first_node + i, "host": "127.0.0.1",
                       "port": self.first_port + i, "rack": null})
            })
            .collect();
        let leader = self.leader();
        let given = match x.api {
            ApiKey::ApiVersions => {
                let mut keys = vec![
                    json!({"apiKey": 18, "minVersion": 0, "maxVersion": 3}),
                    json!({"apiKey": 3, "minVersion": 12, "maxVersion": 12}),
                    json!({"apiKey": 19, "minVersion": 7, "maxVersion": 7}),
                    json!({"apiKey": 2, "minVersion": 9, "maxVersion": 9}),
                    json!({"apiKey": 20, "minVersion": 6, "maxVersion": 6}),
                ];
                for (key, min, max) in &self.extra {
                    keys.push(json!({"apiKey": key, "minVersion": min, "maxVersion": max}));
                }
                json!({"errorCode": 0, "apiKeys": keys, "throttleTimeMs": 0,
                       "finalizedFeaturesEpoch": if self.brokers == 1 { 12 } else { 40 }})
            }
            ApiKey::Metadata => {
                let topics: Vec<Value> = request["topics"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| {
                        json!({"errorCode": 0, "name": t["name"], "topicId": self.topic_id,
                               "isInternal": self.internal, "topicAuthorizedOperations": -2147483648i64,
                               "partitions": [{"errorCode": 0, "partitionIndex": 0, "leaderId": leader,
                                               "leaderEpoch": 0, "replicaNodes": [leader],
                                               "isrNodes": [leader], "offlineReplicas": []}]})
                    })
                    .collect();
                json!({"throttleTimeMs": 0, "brokers": brokers, "clusterId": self.cluster,
                       "controllerId": self.first_node, "topics": topics})
            }
            ApiKey::CreateTopics => {
                let topics: Vec<Value> = request["topics"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| {
                        json!({"name": t["name"], "topicId": self.topic_id, "errorCode": 0,
                               "errorMessage": null, "numPartitions": 1, "replicationFactor": 1,
                               "configs": []})
                    })
                    .collect();
                json!({"throttleTimeMs": 0, "topics": topics})
            }
            ApiKey::ListOffsets => json!({"throttleTimeMs": 0, "topics": [{
                "name": request["topics"][0]["name"],
                "partitions": [{"partitionIndex": 0, "errorCode": 0, "timestamp": -1,
                                "offset": 0, "leaderEpoch": 0}]}]}),
            ApiKey::DeleteTopics => json!({"throttleTimeMs": 0, "responses": []}),
            _ => json!({}),
        };
        let body = fit_response(x.api, x.version, &given).unwrap_or_else(|e| panic!("{e}"));
        let frame = ResponseFrame {
            header: ResponseHeader {
                correlation_id: 0,
                ..Default::default()
            },
            body,
            version: x.version,
        };
        let mut bytes = Vec::new();
        frame.encode(&mut bytes).unwrap_or_else(|e| panic!("{e}"));
        Outcome::Answer(bytes)
    }
}

/// Runs `engine` to the end, each side answered by its own function;
/// returns the exchanges each side was sent, by api name.
fn drive(
    engine: &mut Engine,
    mut answer: impl FnMut(&Exchange) -> Outcome,
    start: Instant,
) -> (Vec<String>, Instant) {
    let mut sent = Vec::new();
    let mut now = start;
    for _ in 0..100_000 {
        match engine.poll(now) {
            Action::Send(x) => {
                sent.push(format!("{} {}", x.side, x.api.name()));
                assert!(x.deadline > now);
                let outcome = answer(&x);
                now += Duration::from_millis(1);
                engine.deliver(x.id, outcome, now);
            }
            Action::Release { .. } => {}
            Action::Wait(at) => now = at,
            Action::Idle => panic!("idle with nothing in flight"),
            Action::Done => return (sent, now),
        }
    }
    panic!("the run does not end")
}

fn config() -> Config {
    let mut config = Config::new("ref:1", "cand:1");
    config.scenarios = Vec::new();
    config.names = RunNames::new("kwc-t");
    config.apis = vec![
        ApiKey::Metadata,
        ApiKey::ApiVersions,
        ApiKey::DescribeCluster,
    ];
    config
}

#[test]
fn two_clusters_of_different_shapes_compare_the_same() {
    let start = Instant::now();
    let mut engine = Engine::new(config(), start, 1_800_000_000_000);
    let (reference, candidate) = (Mock::kafka(), Mock::three_brokers());
    let (sent, end) = drive(
        &mut engine,
        |x| match x.side {
            Side::Reference => reference.answer(x),
            Side::Candidate => candidate.answer(x),
        },
        start,
    );
    let report = engine.finish(end).unwrap();
    let names: Vec<&str> = report.cases.iter().map(|c| c.case.as_str()).collect();
    assert_eq!(
        names,
        [
            "surface/api/Metadata",
            "surface/api/ApiVersions",
            "surface/feature/epoch",
            "sweep/Metadata/v12/default",
            "sweep/Metadata/v12/realistic",
            "sweep/ApiVersions/v0/default",
            "sweep/ApiVersions/v0/realistic",
            "sweep/ApiVersions/v1/default",
            "sweep/ApiVersions/v1/realistic",
            "sweep/ApiVersions/v2/default",
            "sweep/ApiVersions/v2/realistic",
            "sweep/ApiVersions/v3/default",
            "sweep/ApiVersions/v3/realistic",
        ]
    );
    for case in &report.cases {
        assert_eq!(case.verdict, Verdict::Same, "{case:?}");
    }
    // Bootstrap, setup (a Metadata per broker), cases, teardown.
    let candidate_sent: Vec<&str> = sent
        .iter()
        .filter_map(|s| s.strip_prefix("candidate "))
        .collect();
    assert_eq!(
        candidate_sent,
        [
            "ApiVersions",
            "Metadata",
            "CreateTopics",
            "Metadata",
            "Metadata",
            "Metadata",
            "ListOffsets",
            "Metadata",
            "Metadata",
            "ApiVersions",
            "ApiVersions",
            "ApiVersions",
            "ApiVersions",
            "ApiVersions",
            "ApiVersions",
            "ApiVersions",
            "ApiVersions",
            "DeleteTopics",
        ]
    );
    assert_eq!(report.reference.brokers, 1);
    assert_eq!(report.candidate.brokers, 3);
    // Each answer came 1 ms after its request, and none was retried.
    for side in [&report.reference, &report.candidate] {
        assert_eq!(side.waited, Duration::from_millis(side.exchanges));
        assert_eq!(side.retried, Duration::ZERO);
    }
    assert_eq!(report.remaining(), 0);
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    let request = report.cases[4].request.as_ref().unwrap();
    assert_eq!(request["topics"][0]["name"], "<run>-sweep");
}

#[test]
fn a_difference_is_reported_at_its_path_and_an_allow_entry_accepts_it() {
    let start = Instant::now();
    let mut config = config();
    config.allow = AllowList::parse(
        "surface/api/DescribeCluster * the candidate has more\n\
         sweep/Nothing/* * never used\n\
         sweep/ApiVersions/*  apiKeys[*]  it advertises what it has\n",
    )
    .unwrap();
    let mut engine = Engine::new(config, start, 1_800_000_000_000);
    let reference = Mock::kafka();
    let candidate = Mock {
        internal: true,
        extra: vec![(60, 0, 1)],
        ..Mock::three_brokers()
    };
    let (_, end) = drive(
        &mut engine,
        |x| match x.side {
            Side::Reference => reference.answer(x),
            Side::Candidate => candidate.answer(x),
        },
        start,
    );
    let report = engine.finish(end).unwrap();
    let verdicts: Vec<(&str, Verdict)> = report
        .cases
        .iter()
        .filter(|c| c.verdict != Verdict::Same)
        .map(|c| (c.case.as_str(), c.verdict))
        .collect();
    assert_eq!(verdicts.len(), 10);
    assert_eq!(
        verdicts[..2],
        [
            ("surface/api/DescribeCluster", Verdict::Allowed),
            ("sweep/Metadata/v12/realistic", Verdict::Differ),
        ]
    );
    // Each ApiVersions answer lists the extra api, which the list allows.
    assert!(verdicts[2..]
        .iter()
        .all(|(case, verdict)| case.starts_with("sweep/ApiVersions/")
            && *verdict == Verdict::Allowed));
    let realistic = report
        .cases
        .iter()
        .find(|c| c.case == "sweep/Metadata/v12/realistic")
        .unwrap();
    assert_eq!(realistic.differences.len(), 1);
    assert_eq!(realistic.differences[0].path, "topics[0].isInternal");
    assert_eq!(realistic.differences[0].reference, json!(false));
    assert_eq!(realistic.differences[0].candidate, json!(true));
    assert_eq!(report.remaining(), 1);
    assert_eq!(report.unused_allow.len(), 1);
    assert_eq!(report.unused_allow[0].line, 2);
}

#[test]
fn a_side_that_cannot_be_reached_ends_the_run() {
    let start = Instant::now();
    let mut engine = Engine::new(config(), start, 1_800_000_000_000);
    let reference = Mock::kafka();
    let (sent, end) = drive(
        &mut engine,
        |x| match x.side {
            Side::Reference => reference.answer(x),
            Side::Candidate => Outcome::Failed(Failure::Connect("connection refused".into())),
        },
        start,
    );
    assert!(sent.len() <= 3, "{sent:?}");
    let error = engine.finish(end).unwrap_err();
    assert_eq!(error.side, Side::Candidate);
    assert_eq!(
        error.to_string(),
        "the candidate (cand:1) cannot be reached: cannot connect: connection refused"
    );
}

#[test]
fn a_hostile_answer_is_a_difference_of_its_case_and_the_run_goes_on() {
    let start = Instant::now();
    let mut engine = Engine::new(config(), start, 1_800_000_000_000);
    let (reference, candidate) = (Mock::kafka(), Mock::kafka());
    let mut metadata_cases = 0;
    let (_, end) = drive(
        &mut engine,
        |x| match (x.side, x.api) {
            (Side::Candidate, ApiKey::Metadata) if x.target == Target::Bootstrap => {
                // Bootstrap's Metadata, then each case's.
                metadata_cases += 1;
                match metadata_cases {
                    1 => candidate.answer(x),
                    2 => Outcome::Answer(vec![0, 0, 0, 0, 0xff]),
                    _ => Outcome::Failed(Failure::TimedOut),
                }
            }
            (Side::Candidate, _) => candidate.answer(x),
            (Side::Reference, _) => reference.answer(x),
        },
        start,
    );
    let report = engine.finish(end).unwrap();
    let differing: Vec<(&str, &Value)> = report
        .cases
        .iter()
        .filter(|c| c.verdict != Verdict::Same)
        .map(|c| (c.case.as_str(), &c.differences[0].candidate))
        .collect();
    assert_eq!(differing.len(), 2, "{differing:?}");
    assert_eq!(differing[0].0, "sweep/Metadata/v12/default");
    assert!(
        differing[0]
            .1
            .as_str()
            .is_some_and(|s| s.starts_with("<an answer that does not decode")),
        "{differing:?}"
    );
    assert_eq!(differing[1].0, "sweep/Metadata/v12/realistic");
    assert_eq!(differing[1].1, &json!("<no answer in time>"));
    // The cases after them ran, and compare the same.
    assert!(report.cases.len() > 5);
    assert!(report.cases[5..].iter().all(|c| c.verdict == Verdict::Same));
}

#[test]
fn answers_from_every_broker_merge_into_one_listing() {
    let mut merged = Value::Null;
    super::merge_listing(
        &mut merged,
        json!({"errorCode": 0, "throttleTimeMs": 1, "groups": [{"groupId": "b"}]}),
    );
    super::merge_listing(
        &mut merged,
        json!({"errorCode": 15, "throttleTimeMs": 2, "groups": [{"groupId": "a"}]}),
    );
    super::merge_listing(
        &mut merged,
        json!({"errorCode": 16, "groups": [], "extra": true}),
    );
    assert_eq!(
        merged,
        json!({"errorCode": 15, "throttleTimeMs": 1,
               "groups": [{"groupId": "b"}, {"groupId": "a"}], "extra": true})
    );
}
