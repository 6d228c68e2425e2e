//! The version sweep: for every (api, version) pair a real broker
//! advertises in ApiVersions, on its client listener and on its controller
//! listener, one well-formed request from kafka-wire, and its answer must
//! decode at that version, consume every byte, and re-encode to the bytes
//! the broker sent. An advertised api or version kafka-wire lacks is a
//! failure, with one exception named below (Produce v0-v2). Error codes in
//! the answers are fine: the point is the bytes.
//!
//! The requests are the realistic bodies of kafka-wire-compat's sweep
//! (`kafka_wire_compat::sweep`, whose `sweep.json` is their one home), with
//! this test's names for the run's topic, groups and transactional id. They
//! must not wreck the node: every raft and controller api carries a
//! cluster id the node does not have (or, where it has no cluster id field,
//! a broker or controller id that does not exist), Produce uses acks=-1,
//! creating a topic is validate-only, and the sweep has a node of its own.
//!
//! The same sweep runs against the fake cluster (`kafka-wire-fake`, one
//! broker, in this process; no Java needed): every api it advertises, at
//! every version, round-trips (issue 43).

use std::collections::BTreeSet;
use std::io;
use std::time::Instant;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use kafka_wire::frame::ResponseFrame;
use kafka_wire::messages::{
    create_topics_request, metadata_request, CreateTopicsRequest, MetadataRequest,
};
use kafka_wire::ApiKey;
use kafka_wire_compat::names::logical_name;
use kafka_wire_compat::sweep::{self, Listener};
use kafka_wire_compat::template::{placeholders, Bindings};
use kafka_wire_fake::FakeCluster;
use kafka_wire_records::{Batches, DecodeOptions};
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, pom_property, Kafka};
use kafka_wire_tests::broker::{fit, Client};

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

fn index(listener: Listener) -> usize {
    match listener {
        Listener::Client => 0,
        Listener::Controller => 1,
    }
}

fn name(listener: Listener) -> &'static str {
    match listener {
        Listener::Client => "client",
        Listener::Controller => "controller",
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

/// What the requests refer to: this test's names for the sweep's topic,
/// groups and transactional id, the topic's id, and batches to produce,
/// one per codec.
struct Context {
    bindings: Bindings,
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
        let mut bindings = Bindings::new();
        bindings.insert("topic.sweep", TOPIC);
        bindings.insert("topicId.sweep", topic_id);
        for (codec, batch) in sweep::batches() {
            bindings.insert(format!("records.{codec}"), batch);
        }
        Context { bindings }
    }

    /// The realistic body of `api` at `version` for `listener`, with this
    /// test's names: `sweep-X` for every other run name X (`${group.sweep}`
    /// is `sweep-sweep`, `${name.absent}` is `sweep-absent`).
    fn request(&self, api: ApiKey, version: i16, listener: Listener) -> serde_json::Value {
        let template = sweep::realistic(api, version, listener);
        let mut bindings = self.bindings.clone();
        for name in placeholders(&template).unwrap_or_else(|e| panic!("{e}")) {
            if bindings.get(&name).is_none() {
                let logical = logical_name(&name)
                    .unwrap_or_else(|| panic!("{}: `{name}` is not a run name", api.name()));
                let value = format!("sweep-{logical}");
                bindings.insert(name, value);
            }
        }
        bindings
            .resolve(&template)
            .unwrap_or_else(|e| panic!("{} v{version}: {e}", api.name()))
    }
}

fn sweep_listener(listener: Listener, address: &str, context: &Context, report: &mut Report) {
    let client_id = format!("sweep-{}", name(listener));
    let mut client = Client::connect(address, &client_id).unwrap();
    let advertised = client.api_versions();
    assert_eq!(advertised.error_code, 0, "{address}: {advertised:?}");
    for range in advertised.api_keys.iter() {
        report.apis[index(listener)].insert(range.api_key);
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
                report.pairs[index(listener)] += 1;
                report.failures.push(format!(
                    "{} listener advertises {} v{version}, which kafka-wire lacks",
                    name(listener),
                    api.name()
                ));
                continue;
            }
            report.pairs[index(listener)] += 1;
            let request = context.request(api, version, listener);
            let body = fit(api, version, &request);
            let outcome = client.exchange(version, body);
            if let Err(failure) = check(api, version, outcome) {
                report.failures.push(format!(
                    "{} listener, {} v{version}: {failure}",
                    name(listener),
                    api.name()
                ));
                // The broker may have closed the connection.
                client = match Client::connect(address, &client_id) {
                    Ok(client) => client,
                    Err(e) => {
                        report.failures.push(format!(
                            "{} listener: cannot connect again after {} v{version}: {e}",
                            name(listener),
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
