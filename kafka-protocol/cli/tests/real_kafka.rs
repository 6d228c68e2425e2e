//! The command line against real Apache Kafka (started by
//! `tests/kafka/broker.sh`): `versions` and `request` on a combined node's
//! client and controller listeners. Skips without Java, Maven or the
//! broker's jars in ~/.m2, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use kafka_wire::ApiKey;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use serde_json::Value;

mod common;
use common::{check_versions, request, try_kafka_protocol};

/// `request`, where the connection itself may fail: `Err` with the tool's
/// message when it could not connect, or the controller closed or reset
/// the connection; any other failure panics as in `request`.
fn request_unless_cut(address: &str, api: &str, body: &str) -> Result<Value, String> {
    let args = ["request", "--bootstrap", address, "--api", api];
    match try_kafka_protocol(&args, body) {
        Ok(out) => Ok(serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))),
        Err(stderr)
            if [
                " failed: ",
                "closed the connection before answering",
                "cannot connect to ",
            ]
            .iter()
            .any(|cut| stderr.contains(cut)) =>
        {
            Err(stderr)
        }
        Err(stderr) => panic!("kafka-protocol {args:?}: {stderr}"),
    }
}

#[test]
fn versions_and_request_against_a_real_broker() {
    let _one = one_at_a_time();
    let Some(kafka) = Kafka::start("cli", &pinned_version(), &[]) else {
        return;
    };
    let client_apis = check_versions(kafka.bootstrap());
    let controller_apis = check_versions(kafka.controller());
    assert!(
        client_apis > 50 && controller_apis > 20,
        "{client_apis} {controller_apis}"
    );

    let created = request(
        kafka.bootstrap(),
        "CreateTopics",
        r#"{"topics": [{"name": "cli-topic", "numPartitions": 2, "replicationFactor": 1,
                        "assignments": [], "configs": []}]}"#,
    );
    assert_eq!(created["topics"][0]["name"], "cli-topic");
    assert_eq!(created["topics"][0]["errorCode"], 0, "{created}");
    assert_eq!(created["topics"][0]["numPartitions"], 2);

    let metadata = request(kafka.bootstrap(), "Metadata", r#"{"topics": null}"#);
    let port: i64 = kafka
        .bootstrap()
        .rsplit_once(':')
        .unwrap()
        .1
        .parse()
        .unwrap();
    assert_eq!(metadata["brokers"][0]["port"], port, "{metadata}");
    assert_eq!(metadata["clusterId"], kafka.cluster_id());
    let topics = metadata["topics"].as_array().unwrap();
    assert!(
        topics.iter().any(|t| t["name"] == "cli-topic"),
        "{metadata}"
    );

    // DescribeQuorum on the controller listener, by key.
    let key = ApiKey::DescribeQuorum.key().to_string();
    let quorum = request(
        kafka.controller(),
        &key,
        r#"{"topics": [{"topicName": "__cluster_metadata", "partitions": [{"partitionIndex": 0}]}]}"#,
    );
    let partition = &quorum["topics"][0]["partitions"][0];
    assert_eq!(partition["leaderId"], 1, "{quorum}");
    assert_eq!(partition["currentVoters"][0]["replicaId"], 1, "{quorum}");
}

/// The seed's scenario, live: three KRaft controllers, each behind its own
/// `kafka-protocol proxy --log`, which forwards to that controller's
/// listener. Every address the quorum knows a controller by (the voters
/// given at format time, the bootstrap servers, each controller's
/// advertised listener, KIP-853) is its proxy's, so every exchange between
/// controllers passes through a proxy and is logged, decoded by kafka-wire.
///
/// Stop the leader: the other two hold a pre-vote (VoteRequest v2 with
/// `preVote: true`), then an election (`preVote: false`); DescribeQuorum,
/// through `kafka-protocol request`, shows the new leader; the old one
/// rejoins after a restart. Then the third controller is made leader too
/// (its proxy frozen while the leader is killed, so that only it can
/// gather votes), so that every proxy's log shows raft Fetch traffic: nothing went
/// around the proxies. Any frame on these links that the proxy cannot
/// decode, whatever its api, is a failure.
#[test]
fn quorum_pre_vote_through_proxies() {
    let _one = one_at_a_time();
    let binary = env!("CARGO_BIN_EXE_kafka-protocol");
    let options = ["--controllers", "3", "--heap", "256m", "--proxy", binary];
    let Some(kafka) = Kafka::start("quorum", &pinned_version(), &options) else {
        return;
    };
    let started = std::time::Instant::now();
    let quorum = Quorum::new(&kafka);
    let all = [1, 2, 3];
    let (first, first_epoch) = quorum.leader(&all, 0);
    quorum.caught_up(&all);

    // Stop the leader: a pre-vote, then an election.
    let marks = quorum.log_lengths();
    kafka.stop_node(first);
    let alive: Vec<u32> = all.iter().copied().filter(|&id| id != first).collect();
    let (second, second_epoch) = quorum.leader(&alive, first_epoch);
    let election = quorum.election(&marks, first, second, second_epoch);
    kafka.start_node(first);
    quorum.caught_up(&all);

    // The third one leads too, so that every proxy sees raft Fetch: with
    // its proxy frozen no one can win without its vote, and with the
    // leader killed (a clean stop would still answer votes) only it can
    // gather a majority.
    let third = all
        .iter()
        .copied()
        .find(|&id| id != first && id != second)
        .unwrap();
    kafka.pause_proxy(third);
    kafka.kill_node(second);
    let (leader, third_epoch) = quorum.leader(&[first, third], second_epoch);
    kafka.resume_proxy(third);
    assert_eq!(
        leader, third,
        "with its proxy frozen, only node {third} could win"
    );
    kafka.start_node(second);
    quorum.caught_up(&all);

    let summary = quorum.check_logs();
    let mut stderr = std::io::stderr();
    use std::io::Write as _;
    let _ = writeln!(
        stderr,
        "quorum: leader {first} (epoch {first_epoch}) stopped; pre-vote and vote elected {second} \
         (epoch {second_epoch}); {first} rejoined; {third} led from epoch {third_epoch}; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for line in &election {
        let _ = writeln!(stderr, "quorum log: {line}");
    }
    let _ = writeln!(stderr, "quorum: {summary}");
}

/// The three controllers of a `broker.sh start --controllers 3 --proxy`.
struct Quorum<'a> {
    kafka: &'a Kafka,
}

/// What the logs held, for the summary line.
type Logs = Vec<Vec<Value>>;

impl<'a> Quorum<'a> {
    fn new(kafka: &'a Kafka) -> Self {
        Quorum { kafka }
    }

    fn log_path(&self, id: u32) -> String {
        self.kafka.get(&format!("node.{id}.proxy_log")).to_owned()
    }

    fn logs(&self) -> Logs {
        (1..=3)
            .map(|id| {
                std::fs::read_to_string(self.log_path(id))
                    .unwrap_or_default()
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                    .collect()
            })
            .collect()
    }

    fn log_lengths(&self) -> Vec<usize> {
        self.logs().iter().map(Vec::len).collect()
    }

    /// DescribeQuorum of the metadata partition through `kafka-protocol
    /// request`, at controller `id`'s own listener; `None` when the
    /// connection failed (a controller that is starting or stopping may
    /// refuse or reset one, and the callers ask again until their
    /// deadline). Each such failure is reported on standard error, with
    /// that controller's last warnings, so that a run that then fails
    /// shows why.
    fn describe_quorum(&self, id: u32) -> Option<Value> {
        let body = r#"{"topics": [{"topicName": "__cluster_metadata", "partitions": [{"partitionIndex": 0}]}]}"#;
        let address = self.kafka.get(&format!("node.{id}.controller"));
        match request_unless_cut(address, "DescribeQuorum", body) {
            Ok(answer) => Some(answer),
            Err(cut) => {
                let log = std::fs::read_to_string(self.kafka.get(&format!("node.{id}.log")))
                    .unwrap_or_default();
                let warnings: Vec<&str> = log
                    .lines()
                    .filter(|l| l.contains("] WARN ") || l.contains("] ERROR "))
                    .collect();
                let mut stderr = std::io::stderr();
                use std::io::Write as _;
                let _ = writeln!(stderr, "quorum: node {id}: {cut}; asking again");
                for line in &warnings[warnings.len().saturating_sub(5)..] {
                    let _ = writeln!(stderr, "quorum: node {id} log: {line}");
                }
                None
            }
        }
    }

    /// DescribeQuorum through `kafka-protocol request`, at each of `ids`'
    /// own listener, until one of them leads at an epoch above `after`.
    fn leader(&self, ids: &[u32], after: i64) -> (u32, i64) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            for &id in ids {
                let Some(answer) = self.describe_quorum(id) else {
                    continue;
                };
                let partition = &answer["topics"][0]["partitions"][0];
                // Only the leader answers without NOT_LEADER_OR_FOLLOWER.
                if answer["errorCode"] != 0 || partition["errorCode"] != 0 {
                    continue;
                }
                let leader = partition["leaderId"].as_i64().unwrap();
                let epoch = partition["leaderEpoch"].as_i64().unwrap();
                if leader == i64::from(id) && epoch > after {
                    let voters = partition["currentVoters"].as_array().unwrap();
                    assert_eq!(voters.len(), 3, "{answer}");
                    return (id, epoch);
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no leader among {ids:?} above epoch {after}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// Waits until every voter of `ids` has fetched up to the high
    /// watermark the leader first reports (DescribeQuorum at whichever of
    /// `ids` leads: leadership may move meanwhile).
    fn caught_up(&self, ids: &[u32]) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut target = None;
        loop {
            for &leader in ids {
                let Some(answer) = self.describe_quorum(leader) else {
                    continue;
                };
                let partition = &answer["topics"][0]["partitions"][0];
                if partition["errorCode"] != 0 {
                    continue;
                }
                let high = partition["highWatermark"].as_i64().unwrap();
                let target = *target.get_or_insert(high.max(1));
                let voters = partition["currentVoters"].as_array().unwrap();
                let done = ids.iter().all(|&id| {
                    voters.iter().any(|v| {
                        v["replicaId"] == id && v["logEndOffset"].as_i64().unwrap() >= target
                    })
                });
                if done {
                    return;
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "voters {ids:?} did not catch up"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// The election after the leader stopped, in the proxies' logs after
    /// `marks`: VoteRequest v2 with `preVote: true` from the new leader,
    /// answered (granted), then its VoteRequest with `preVote: false` at
    /// `epoch`, answered, in the same log. Returns those lines, from the
    /// log of the voter that stays if it has them (the stopped one may
    /// still have answered while it shut down).
    fn election(&self, marks: &[usize], stopped: u32, leader: u32, epoch: i64) -> Vec<String> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let logs = self.logs();
            let mut order: Vec<usize> = (0..3).collect();
            order.sort_by_key(|&i| i + 1 == stopped as usize);
            for i in order {
                let (log, mark) = (&logs[i], marks[i]);
                let votes: Vec<(usize, &Value, &Value)> = log[mark.min(log.len())..]
                    .iter()
                    .enumerate()
                    .filter(|(_, line)| line["api"] == "Vote")
                    .filter_map(|(i, line)| {
                        let partition = &line["request"]["topics"][0]["partitions"][0];
                        (partition["replicaId"] == leader).then_some((i, line, partition))
                    })
                    .collect();
                let pre = votes.iter().find(|(_, line, p)| {
                    p["preVote"] == true
                        && line["version"] == 2
                        && line["response"]["topics"][0]["partitions"][0]["voteGranted"] == true
                });
                let real = votes.iter().find(|(i, line, p)| {
                    p["preVote"] == false
                        && p["replicaEpoch"] == epoch
                        && !line["response"].is_null()
                        && pre.is_some_and(|(j, _, _)| j < i)
                });
                if pre.is_some() && real.is_some() {
                    // Every Vote exchange since the stop, by the log it is in.
                    return logs
                        .iter()
                        .zip(marks)
                        .enumerate()
                        .flat_map(|(i, (log, &mark))| {
                            log[mark.min(log.len())..]
                                .iter()
                                .filter(|line| line["api"] == "Vote")
                                .map(move |line| format!("proxy-{}.log: {line}", i + 1))
                        })
                        .collect();
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no pre-vote then vote by {leader} for epoch {epoch} in the logs"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// Every proxy's log: raft Fetch traffic from both other controllers,
    /// every frame decoded (request and response present), no error but a
    /// stopped controller's (unreachable, or a connection cut), and every
    /// address in any message a proxy's.
    fn check_logs(&self) -> String {
        let proxies: Vec<i64> = (1..=3)
            .map(|id| {
                let quorum = self.kafka.get(&format!("node.{id}.quorum"));
                quorum.rsplit_once(':').unwrap().1.parse().unwrap()
            })
            .collect();
        let mut apis: std::collections::BTreeMap<String, usize> = Default::default();
        let (mut pre_votes, mut votes, mut errors, mut lines) = (0, 0, 0, 0);
        for (index, log) in self.logs().iter().enumerate() {
            let id = index as i64 + 1;
            let path = self.log_path(id as u32);
            let mut fetchers = std::collections::BTreeSet::new();
            for line in log {
                lines += 1;
                if let Some(error) = line.get("error") {
                    let error = error.as_str().unwrap();
                    let cut = error.starts_with("upstream ") && error.contains(" unreachable: ")
                        || error.contains(" connection failed: ");
                    assert!(cut, "{path}: a frame failed: {line}");
                    errors += 1;
                    continue;
                }
                let api = line["api"].as_str().unwrap();
                assert!(
                    api.parse::<i16>().is_err(),
                    "{path}: an api kafka-wire does not know: {line}"
                );
                assert!(
                    !line["request"].is_null() && !line["response"].is_null(),
                    "{path}: a frame kafka-wire could not decode: {line}"
                );
                *apis
                    .entry(format!("{api} v{}", line["version"]))
                    .or_default() += 1;
                if api == "Fetch" {
                    fetchers.insert(line["request"]["replicaState"]["replicaId"].as_i64());
                }
                if api == "Vote" {
                    let partition = &line["request"]["topics"][0]["partitions"][0];
                    if partition["preVote"] == true {
                        pre_votes += 1;
                    } else {
                        votes += 1;
                    }
                }
                addresses(line, &mut |host, port| {
                    assert!(
                        host == "127.0.0.1" && proxies.contains(&port),
                        "{path}: {host}:{port} is not a proxy's address: {line}"
                    );
                });
            }
            let others: std::collections::BTreeSet<Option<i64>> =
                (1..=3).filter(|&o| o != id).map(Some).collect();
            // A controller that does not know the leader (a restarted one)
            // fetches from the bootstrap servers, its own proxy included.
            assert!(
                others.is_subset(&fetchers),
                "{path}: raft Fetch from the other controllers (from {fetchers:?})"
            );
        }
        let apis: Vec<String> = apis.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        format!(
            "{lines} log lines, every frame decoded; {pre_votes} VoteRequests with preVote true, \
             {votes} with preVote false; {errors} connections cut or refused by stopped \
             controllers; {}",
            apis.join(", ")
        )
    }
}

/// Calls `found(host, port)` for every object in `value` with both.
fn addresses(value: &Value, found: &mut impl FnMut(&str, i64)) {
    match value {
        Value::Object(map) => {
            if let (Some(Value::String(host)), Some(port)) = (map.get("host"), map.get("port")) {
                found(host, port.as_i64().unwrap());
            }
            map.values().for_each(|v| addresses(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| addresses(v, found)),
        _ => {}
    }
}
