//! The version sweep: for every (api, version) pair a real broker
//! advertises in ApiVersions, on its client listener and on its controller
//! listener, one well-formed request from kafka-wire, and its answer must
//! decode at that version, consume every byte, and re-encode to the bytes
//! the broker sent. An advertised api or version kafka-wire lacks is a
//! failure, with one exception named below (Produce v0-v2). Error codes in
//! the answers are fine: the point is the bytes.
//!
//! The requests must not wreck the node: every raft and controller api
//! carries a cluster id the node does not have (or, where it has no cluster
//! id field, a broker or controller id that does not exist), Produce uses
//! acks=-1, creating a topic is validate-only, and the sweep has a node of
//! its own.
//!
//! The same sweep runs against the fake cluster (`kafka-wire-fake`, one
//! broker, in this process; no Java needed): every api it advertises, at
//! every version, round-trips (issue 43).

use std::collections::BTreeSet;
use std::io;
use std::time::Instant;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use kafka_wire::frame::ResponseFrame;
use kafka_wire::messages::{
    create_topics_request, metadata_request, CreateTopicsRequest, MetadataRequest,
};
use kafka_wire::ApiKey;
use kafka_wire_fake::FakeCluster;
use kafka_wire_records::{Batches, Compression, DecodeOptions, Header, RecordBatchBuilder};
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, pom_property, Kafka};
use kafka_wire_tests::broker::{fit, Client};
use serde_json::{json, Value};

/// A cluster id no node has: raft and controller requests carry it, so
/// that the node answers INCONSISTENT_CLUSTER_ID and changes nothing.
const WRONG_CLUSTER_ID: &str = "kafka-wire-not-this-cluster";
/// A broker and controller id no node has.
const NO_SUCH_NODE: i32 = 999;
/// The topic id of `__cluster_metadata` (Kafka's `Uuid.METADATA_TOPIC_ID`).
const METADATA_TOPIC_ID: &str = "AAAAAAAAAAAAAAAAAAAAAQ";
const ZERO_UUID: &str = "AAAAAAAAAAAAAAAAAAAAAA";
/// The topic the client listener's Produce and Fetch requests use.
const TOPIC: &str = "sweep";

#[test]
fn version_sweep_against_the_pinned_release() {
    sweep_release(&pinned_version());
}

#[test]
fn version_sweep_against_an_older_release() {
    sweep_release(&pom_property("broker.old.version"));
}

#[test]
fn version_sweep_against_the_fake_cluster() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let fake = runtime
        .block_on(FakeCluster::builder().brokers(1).start())
        .unwrap_or_else(|e| panic!("the fake cluster: {e}"));
    let address = fake.bootstrap();
    let started = Instant::now();
    let mut report = Report::default();
    let context = Context::set_up(&address);
    sweep_listener(Listener::Client, &address, &context, &mut report);
    runtime.block_on(async { fake.shutdown().await.ok() });
    for note in &report.notes {
        say!("fake cluster: {note}");
    }
    let total = report.pairs[0];
    let exact = total - report.failures.len();
    say!(
        "fake cluster: {exact}/{total} (api, version) pairs of {} apis round-tripped exactly, \
         in {:.1} s",
        report.apis[0].len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        report.failures.is_empty() && report.unknown.is_empty(),
        "the fake cluster: {} failures, unknown apis {:?}:\n{}",
        report.failures.len(),
        report.unknown,
        report.failures.join("\n")
    );
}

fn sweep_release(version: &str) {
    let _one = one_at_a_time();
    let Some(kafka) = Kafka::start(&format!("sweep-{version}"), version, &[]) else {
        return;
    };
    let started = Instant::now();
    let mut report = Report::default();
    let context = Context::set_up(kafka.bootstrap());
    for listener in [Listener::Client, Listener::Controller] {
        let address = match listener {
            Listener::Client => kafka.bootstrap(),
            Listener::Controller => kafka.controller(),
        };
        sweep_listener(listener, address, &context, &mut report);
    }
    say!(
        "Kafka {version}: {} pairs of {} apis on the client listener, {} pairs of {} apis on \
         the controller listener, in {:.1} s",
        report.pairs[0],
        report.apis[0].len(),
        report.pairs[1],
        report.apis[1].len(),
        started.elapsed().as_secs_f64()
    );
    for note in &report.notes {
        say!("Kafka {version}: {note}");
    }
    let apis: BTreeSet<i16> = report.apis[0].union(&report.apis[1]).copied().collect();
    let total = report.pairs[0] + report.pairs[1];
    let exact = total - report.failures.len();
    let known = if report.unknown.is_empty() {
        "all known".to_owned()
    } else {
        format!("{} unknown: {:?}", report.unknown.len(), report.unknown)
    };
    say!(
        "real broker: {exact}/{total} (api, version) pairs round-tripped exactly; {} apis \
         advertised, {known}",
        apis.len()
    );
    assert!(
        report.failures.is_empty() && report.unknown.is_empty(),
        "Kafka {version}: {} failures:\n{}",
        report.failures.len(),
        report.failures.join("\n")
    );
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listener {
    Client,
    Controller,
}

impl Listener {
    fn index(self) -> usize {
        self as usize
    }

    fn name(self) -> &'static str {
        match self {
            Listener::Client => "client",
            Listener::Controller => "controller",
        }
    }
}

#[derive(Default)]
struct Report {
    /// Pairs advertised and sent, per listener.
    pairs: [usize; 2],
    /// Api keys advertised, per listener.
    apis: [BTreeSet<i16>; 2],
    /// Advertised keys kafka-wire does not know.
    unknown: Vec<i16>,
    failures: Vec<String>,
    notes: Vec<String>,
}

/// What the requests refer to: a topic on the node, and batches to
/// produce, one per codec.
struct Context {
    topic_id: String,
    batches: Vec<(Compression, String)>,
}

impl Context {
    /// Creates the topic through the broker at `bootstrap`.
    fn set_up(bootstrap: &str) -> Context {
        let mut client = Client::connect(bootstrap, "sweep-setup").unwrap();
        let created = client.call(
            7,
            CreateTopicsRequest {
                topics: vec![create_topics_request::CreatableTopic {
                    name: TOPIC.into(),
                    num_partitions: 1,
                    replication_factor: 1,
                    ..Default::default()
                }]
                .into(),
                timeout_ms: 30_000,
                ..Default::default()
            },
        );
        let error = created.topics.iter().next().map(|t| t.error_code);
        assert_eq!(error, Some(0), "creating {TOPIC}: {created:?}");
        // Metadata until the topic has a leader (it just got one).
        let mut topic_id = None;
        for _ in 0..100 {
            let metadata = client.call(
                12,
                MetadataRequest {
                    topics: Some(
                        vec![metadata_request::MetadataRequestTopic {
                            name: Some(TOPIC.into()),
                            ..Default::default()
                        }]
                        .into(),
                    ),
                    ..Default::default()
                },
            );
            let topic = metadata.topics.iter().next().map(|t| t.into_owned());
            if let Some(topic) =
                topic.filter(|t| t.error_code == 0 && t.partitions.iter().all(|p| p.leader_id >= 0))
            {
                topic_id = Some(URL_SAFE_NO_PAD.encode(topic.topic_id.as_bytes()));
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let topic_id = topic_id.expect("the sweep topic has a leader");
        let codecs = [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ];
        let batches = codecs
            .into_iter()
            .map(|codec| {
                let mut builder = RecordBatchBuilder::new(0).compression(codec);
                for i in 0..3u8 {
                    let value = format!("{codec:?} record {i} ").repeat(20);
                    builder
                        .append(
                            1_700_000_000_000 + i64::from(i),
                            Some(&[b'k', i]),
                            Some(value.as_bytes()),
                            &[Header::new("codec", Some(format!("{codec:?}").as_bytes()))],
                        )
                        .unwrap();
                }
                (codec, STANDARD.encode(builder.build().unwrap()))
            })
            .collect();
        Context { topic_id, batches }
    }
}

fn sweep_listener(listener: Listener, address: &str, context: &Context, report: &mut Report) {
    let client_id = format!("sweep-{}", listener.name());
    let mut client = Client::connect(address, &client_id).unwrap();
    let advertised = client.api_versions();
    assert_eq!(advertised.error_code, 0, "{address}: {advertised:?}");
    let mut sent = 0usize;
    for range in advertised.api_keys.iter() {
        report.apis[listener.index()].insert(range.api_key);
        let Some(api) = ApiKey::from_key(range.api_key) else {
            report.unknown.push(range.api_key);
            continue;
        };
        for version in range.min_version..=range.max_version {
            if !api.supports_version(version) {
                if api == ApiKey::Produce && version < api.lowest_version() {
                    // Kafka 4 advertises Produce from v0 for librdkafka's
                    // sake (KAFKA-18659) but has no schema below v3, as
                    // kafka-wire has none: the broker must refuse them.
                    refused_produce(&mut client, address, &client_id, version, report);
                    continue;
                }
                report.pairs[listener.index()] += 1;
                report.failures.push(format!(
                    "{} listener advertises {} v{version}, which kafka-wire lacks",
                    listener.name(),
                    api.name()
                ));
                continue;
            }
            report.pairs[listener.index()] += 1;
            sent += 1;
            let codec = &context.batches[sent % context.batches.len()];
            let request = request(api, listener, context, &codec.1);
            let body = fit(api, version, &request);
            let outcome = client.exchange(version, body);
            if let Err(failure) = check(api, version, outcome) {
                report.failures.push(format!(
                    "{} listener, {} v{version}: {failure}",
                    listener.name(),
                    api.name()
                ));
                // The broker may have closed the connection.
                client = match Client::connect(address, &client_id) {
                    Ok(client) => client,
                    Err(e) => {
                        report.failures.push(format!(
                            "{} listener: cannot connect again after {} v{version}: {e}",
                            listener.name(),
                            api.name()
                        ));
                        return;
                    }
                };
            }
        }
    }
}

/// Checks one answer: present, decodes at `version` with every byte
/// consumed, and encodes back to the same bytes; the records of a Fetch
/// answer decode too.
fn check(api: ApiKey, version: i16, outcome: io::Result<Option<Vec<u8>>>) -> Result<(), String> {
    let frame = outcome
        .map_err(|e| format!("no answer: {e}"))?
        .ok_or("no answer expected")?;
    let response =
        ResponseFrame::decode(&frame, api, version).map_err(|e| format!("does not decode: {e}"))?;
    let mut again = Vec::new();
    response
        .encode(&mut again)
        .map_err(|e| format!("does not encode again: {e}"))?;
    if again != frame {
        let at = again
            .iter()
            .zip(&frame)
            .position(|(a, b)| a != b)
            .unwrap_or(again.len().min(frame.len()));
        return Err(format!(
            "encodes to other bytes: {} bytes against {}, first difference at byte {at}",
            again.len(),
            frame.len()
        ));
    }
    if let kafka_wire::ResponseBody::Fetch(fetch) = &response.body {
        for topic in &fetch.responses {
            for partition in topic.partitions.iter() {
                let Some(records) = partition.records.as_deref() else {
                    continue;
                };
                for batch in Batches::new(records, &DecodeOptions::default()) {
                    batch.map_err(|e| format!("its records do not decode: {e}"))?;
                }
            }
        }
    }
    Ok(())
}

/// Sends a hand-built Produce request at a version below kafka-wire's (and
/// Kafka's) lowest and expects the broker to close the connection without
/// answering.
fn refused_produce(
    client: &mut Client,
    address: &str,
    client_id: &str,
    version: i16,
    report: &mut Report,
) {
    // Header v1 (api 0, version, correlation id 1, null client id), then
    // acks -1, timeout 10 s and no topics.
    let mut frame = Vec::new();
    frame.extend_from_slice(&0i16.to_be_bytes());
    frame.extend_from_slice(&version.to_be_bytes());
    frame.extend_from_slice(&1i32.to_be_bytes());
    frame.extend_from_slice(&(-1i16).to_be_bytes());
    frame.extend_from_slice(&(-1i16).to_be_bytes());
    frame.extend_from_slice(&10_000i32.to_be_bytes());
    frame.extend_from_slice(&0i32.to_be_bytes());
    let mut sized = (frame.len() as i32).to_be_bytes().to_vec();
    sized.extend_from_slice(&frame);
    let mut fresh = Client::connect(address, client_id).unwrap();
    fresh.send_raw(&sized).unwrap();
    match fresh.read_frame() {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => report.notes.push(format!(
            "Produce v{version}: advertised for old clients (KAFKA-18659), refused by the broker \
             (connection closed), as kafka-wire has no such version either; not counted"
        )),
        other => report.failures.push(format!(
            "Produce v{version}: advertised without a schema, and the broker did not refuse it: \
             {other:?}"
        )),
    }
    let _ = client;
}

/// The request of `api` for the sweep, as JSON over all versions (`fit`
/// keeps the fields of the one sent). `batch` is base64 of a record batch.
fn request(api: ApiKey, listener: Listener, context: &Context, batch: &str) -> Value {
    let metadata_partition =
        |fields: Value| json!([{"topicName": "__cluster_metadata", "partitions": [fields]}]);
    let endpoint = json!([{"name": "CONTROLLER", "host": "127.0.0.1", "port": 1}]);
    match api {
        ApiKey::Produce => json!({
            "transactionalId": null,
            "acks": -1,
            "timeoutMs": 10_000,
            "topicData": [{
                "name": TOPIC,
                "topicId": context.topic_id,
                "partitionData": [{"index": 0, "records": batch}]
            }]
        }),
        ApiKey::Fetch => {
            let (topic, topic_id) = match listener {
                Listener::Client => (TOPIC, context.topic_id.as_str()),
                Listener::Controller => ("__cluster_metadata", METADATA_TOPIC_ID),
            };
            json!({
                "clusterId": if listener == Listener::Controller { Value::from(WRONG_CLUSTER_ID) } else { Value::Null },
                "replicaId": -1,
                "maxWaitMs": 0,
                "minBytes": 0,
                "maxBytes": 1 << 20,
                "topics": [{
                    "topic": topic,
                    "topicId": topic_id,
                    "partitions": [{
                        "partition": 0,
                        "currentLeaderEpoch": -1,
                        "fetchOffset": 0,
                        "lastFetchedEpoch": -1,
                        "logStartOffset": -1,
                        "partitionMaxBytes": 1 << 20
                    }]
                }],
                "forgottenTopicsData": [],
                "rackId": ""
            })
        }
        ApiKey::ListOffsets => json!({
            "replicaId": -1,
            "topics": [{"name": TOPIC, "partitions": [
                {"partitionIndex": 0, "currentLeaderEpoch": -1, "timestamp": -1}
            ]}],
            "timeoutMs": 10_000
        }),
        ApiKey::Metadata => json!({"topics": [{"name": TOPIC, "topicId": ZERO_UUID}]}),
        ApiKey::ApiVersions => json!({
            "clientSoftwareName": "kafka-wire",
            "clientSoftwareVersion": env!("CARGO_PKG_VERSION")
        }),
        ApiKey::CreateTopics => json!({
            "topics": [{
                "name": "sweep-validate-only",
                "numPartitions": 1,
                "replicationFactor": 1,
                "assignments": [],
                "configs": []
            }],
            "timeoutMs": 10_000,
            "validateOnly": true
        }),
        ApiKey::DeleteTopics => json!({
            "topics": [{"name": "sweep-absent", "topicId": ZERO_UUID}],
            "topicNames": ["sweep-absent"],
            "timeoutMs": 10_000
        }),
        // From v4 the brokers' batched form: the broker answers only once
        // every transaction listed is answered, so an empty list gets no
        // answer at all. One transaction to verify, which does not exist.
        ApiKey::AddPartitionsToTxn => json!({
            "transactions": [{
                "transactionalId": "sweep-no-such-transaction",
                "producerId": 0,
                "producerEpoch": 0,
                "verifyOnly": true,
                "topics": [{"name": TOPIC, "partitions": [0]}]
            }],
            "v3AndBelowTransactionalId": "sweep-no-such-transaction",
            "v3AndBelowProducerId": 0,
            "v3AndBelowProducerEpoch": 0,
            "v3AndBelowTopics": [{"name": TOPIC, "partitions": [0]}]
        }),
        // From v8 a batch of groups; Kafka 4.0.0 never answers an empty
        // batch.
        ApiKey::OffsetFetch => json!({
            "groupId": "sweep-group",
            "topics": [{"name": TOPIC, "partitionIndexes": [0]}],
            "groups": [{
                "groupId": "sweep-group",
                "memberId": null,
                "memberEpoch": -1,
                "topics": [{"name": TOPIC, "topicId": context.topic_id, "partitionIndexes": [0]}]
            }]
        }),
        ApiKey::InitProducerId => json!({"transactionalId": null, "transactionTimeoutMs": 60_000}),
        ApiKey::SaslHandshake => json!({"mechanism": "PLAIN"}),
        ApiKey::DescribeAcls => json!({
            "resourceTypeFilter": 1,
            "patternTypeFilter": 1,
            "operation": 1,
            "permissionType": 1
        }),
        ApiKey::ElectLeaders => {
            json!({"electionType": 0, "topicPartitions": [], "timeoutMs": 10_000})
        }
        ApiKey::UpdateFeatures => {
            json!({"featureUpdates": [], "validateOnly": true, "timeoutMs": 10_000})
        }
        ApiKey::DescribeQuorum => {
            json!({"topics": metadata_partition(json!({"partitionIndex": 0}))})
        }
        ApiKey::Vote => json!({
            "clusterId": WRONG_CLUSTER_ID,
            "voterId": 1,
            "topics": metadata_partition(json!({
                "partitionIndex": 0,
                "replicaEpoch": 0,
                "replicaId": NO_SUCH_NODE,
                "replicaDirectoryId": ZERO_UUID,
                "voterDirectoryId": ZERO_UUID,
                "lastOffsetEpoch": 0,
                "lastOffset": 0,
                "preVote": true
            }))
        }),
        ApiKey::BeginQuorumEpoch => json!({
            "clusterId": WRONG_CLUSTER_ID,
            "voterId": 1,
            "topics": metadata_partition(json!({
                "partitionIndex": 0,
                "voterDirectoryId": ZERO_UUID,
                "leaderId": NO_SUCH_NODE,
                "leaderEpoch": 0
            })),
            "leaderEndpoints": endpoint
        }),
        ApiKey::EndQuorumEpoch => json!({
            "clusterId": WRONG_CLUSTER_ID,
            "topics": metadata_partition(json!({
                "partitionIndex": 0,
                "leaderId": NO_SUCH_NODE,
                "leaderEpoch": 0,
                "preferredSuccessors": [],
                "preferredCandidates": []
            })),
            "leaderEndpoints": endpoint
        }),
        ApiKey::FetchSnapshot => json!({
            "clusterId": WRONG_CLUSTER_ID,
            "replicaId": -1,
            "topics": [{"name": "__cluster_metadata", "partitions": [{
                "partition": 0,
                "currentLeaderEpoch": 0,
                "snapshotId": {"endOffset": 0, "epoch": 0},
                "position": 0,
                "replicaDirectoryId": ZERO_UUID
            }]}]
        }),
        ApiKey::AddRaftVoter => json!({
            "clusterId": WRONG_CLUSTER_ID,
            "timeoutMs": 10_000,
            "voterId": NO_SUCH_NODE,
            "voterDirectoryId": METADATA_TOPIC_ID,
            "listeners": endpoint
        }),
        ApiKey::RemoveRaftVoter => json!({
            "clusterId": WRONG_CLUSTER_ID,
            "voterId": NO_SUCH_NODE,
            "voterDirectoryId": METADATA_TOPIC_ID
        }),
        ApiKey::UpdateRaftVoter => json!({
            "clusterId": WRONG_CLUSTER_ID,
            "currentLeaderEpoch": 0,
            "voterId": NO_SUCH_NODE,
            "voterDirectoryId": METADATA_TOPIC_ID,
            "listeners": endpoint,
            "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}
        }),
        ApiKey::BrokerRegistration => json!({
            "brokerId": NO_SUCH_NODE,
            "clusterId": WRONG_CLUSTER_ID,
            "incarnationId": METADATA_TOPIC_ID,
            "listeners": [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 1, "securityProtocol": 0}],
            "features": [],
            "rack": null,
            "logDirs": []
        }),
        ApiKey::BrokerHeartbeat => json!({
            "brokerId": NO_SUCH_NODE,
            "brokerEpoch": -1,
            "currentMetadataOffset": 0,
            "wantFence": true,
            "wantShutDown": false
        }),
        ApiKey::UnregisterBroker => json!({"brokerId": NO_SUCH_NODE}),
        ApiKey::UnregisterController => json!({"controllerId": NO_SUCH_NODE}),
        ApiKey::AllocateProducerIds => json!({"brokerId": NO_SUCH_NODE, "brokerEpoch": -1}),
        ApiKey::AssignReplicasToDirs => {
            json!({"brokerId": NO_SUCH_NODE, "brokerEpoch": -1, "directories": []})
        }
        ApiKey::AlterPartition => {
            json!({"brokerId": NO_SUCH_NODE, "brokerEpoch": -1, "topics": []})
        }
        ApiKey::ControllerRegistration => json!({
            "controllerId": NO_SUCH_NODE,
            "incarnationId": METADATA_TOPIC_ID,
            "listeners": [],
            "features": []
        }),
        _ => json!({}),
    }
}
