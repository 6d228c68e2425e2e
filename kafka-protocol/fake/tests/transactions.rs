//! Transactions over real sockets, with raw frames: fencing by epoch (and
//! the error each version gets), the implicit add of Produce v12+, markers
//! and the last stable offset, the timeout that aborts, and the admin APIs.
//!
//! The same frames were sent to Kafka 4.4.0, whose answers these are; it
//! differs only in time: its markers are written after EndTxn answers, and
//! it looks for timed-out transactions every 10 s
//! (`transaction.abort.timed.out.transaction.cleanup.interval.ms`), where
//! the fake does both at once.

use std::time::Duration;

use kafka_wire::messages::*;
use kafka_wire::ErrorCode;
use kafka_wire_fake::probe::Probe;
use kafka_wire_fake::FakeCluster;

const TID: &str = "tx-1";

mod common;
use common::{call, from, transactional_batch};

async fn one() -> (FakeCluster, Probe) {
    let cluster = common::cluster(1, "t", 1).await;
    let probe = common::connect(&cluster, 0).await;
    (cluster, probe)
}

async fn init(probe: &mut Probe, timeout_ms: i32, version: i16) -> (i16, i64, i16) {
    let request = InitProducerIdRequest {
        transactional_id: Some(TID.into()),
        transaction_timeout_ms: timeout_ms,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    let r = call(probe, request, version).await;
    (r.error_code, r.producer_id, r.producer_epoch)
}

async fn end(probe: &mut Probe, id: i64, epoch: i16, commit: bool, version: i16) -> (i16, i16) {
    let request = EndTxnRequest {
        transactional_id: TID.into(),
        producer_id: id,
        producer_epoch: epoch,
        committed: commit,
        ..Default::default()
    };
    let r = call(probe, request, version).await;
    (r.error_code, r.producer_epoch)
}

async fn add_partition(probe: &mut Probe, id: i64, epoch: i16, version: i16) -> i16 {
    let request = AddPartitionsToTxnRequest {
        v3_and_below_transactional_id: TID.into(),
        v3_and_below_producer_id: id,
        v3_and_below_producer_epoch: epoch,
        v3_and_below_topics: vec![add_partitions_to_txn_request::AddPartitionsToTxnTopic {
            name: "t".into(),
            partitions: vec![0].into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let r = call(probe, request, version).await;
    r.results_by_topic_v3_and_below
        .iter()
        .next()
        .and_then(|t| {
            t.results_by_partition
                .iter()
                .next()
                .map(|p| p.partition_error_code)
        })
        .unwrap_or(-1)
}

/// Produces one transactional record (sequence `sequence`): the error and
/// base offset.
async fn produce(
    probe: &mut Probe,
    id: i64,
    epoch: i16,
    sequence: i32,
    version: i16,
) -> (i16, i64) {
    let records = transactional_batch((id, epoch, sequence), &[b"v"]);
    let request = ProduceRequest {
        transactional_id: Some(TID.into()),
        ..common::produce("t", [(0, records)])
    };
    let r = call(probe, request, version).await;
    common::produced(r)
        .first()
        .map_or((-1, -1), |p| (p.error_code, p.base_offset))
}

/// A read_committed Fetch of partition 0 from offset 0: (high watermark,
/// last stable offset, aborted producer ids, record bytes).
async fn fetch_committed(probe: &mut Probe) -> (i64, i64, Vec<i64>, usize) {
    let request = FetchRequest {
        isolation_level: 1,
        ..common::fetch("t", from(0, 0))
    };
    let r = call(probe, request, 12).await;
    let p = common::fetched(r).into_iter().next().unwrap_or_default();
    let aborted = p
        .aborted_transactions
        .map(|a| a.iter().map(|t| t.producer_id).collect())
        .unwrap_or_default();
    (
        p.high_watermark,
        p.last_stable_offset,
        aborted,
        p.records.map_or(0, |r| r.len()),
    )
}

async fn describe(probe: &mut Probe) -> (i16, String, i64, i16) {
    let request = DescribeTransactionsRequest {
        transactional_ids: vec![TID.into()],
        ..Default::default()
    };
    let r = call(probe, request, 0).await;
    r.transaction_states
        .iter()
        .next()
        .map(|s| {
            (
                s.error_code,
                s.transaction_state.to_string(),
                s.producer_id,
                s.producer_epoch,
            )
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn older_epochs_are_fenced_with_the_error_of_their_version() {
    let (_cluster, mut probe) = one().await;
    let (error, id, epoch) = init(&mut probe, 60_000, 5).await;
    assert_eq!((error, epoch), (0, 0));
    // A second InitProducerId fences the first.
    assert_eq!(init(&mut probe, 60_000, 5).await, (0, id, 1));
    let fenced = ErrorCode::ProducerFenced.code();
    let old = ErrorCode::InvalidProducerEpoch.code();
    assert_eq!(end(&mut probe, id, 0, true, 5).await.0, fenced);
    assert_eq!(end(&mut probe, id, 0, true, 1).await.0, old);
    assert_eq!(add_partition(&mut probe, id, 0, 3).await, fenced);
    assert_eq!(add_partition(&mut probe, id, 0, 1).await, old);
    assert_eq!(
        add_partition(&mut probe, id + 1, 1, 3).await,
        ErrorCode::InvalidProducerIdMapping.code()
    );
    // Committing with nothing added is refused; aborting at v5 bumps.
    assert_eq!(
        end(&mut probe, id, 1, true, 5).await.0,
        ErrorCode::InvalidTxnState.code()
    );
    assert_eq!(end(&mut probe, id, 1, false, 5).await, (0, 2));
    // A transactional batch of a fenced epoch is refused.
    assert_eq!(produce(&mut probe, id, 1, 0, 12).await.0, old);
}

#[tokio::test]
async fn markers_move_the_last_stable_offset_and_aborts_are_listed() {
    let (_cluster, mut probe) = one().await;
    let (_, id, _) = init(&mut probe, 60_000, 5).await;
    // Below Produce v12 the partition must be added first (Kafka 4.4.0
    // answers v11 so).
    assert_eq!(
        produce(&mut probe, id, 0, 0, 11).await.0,
        ErrorCode::TransactionAbortable.code()
    );
    // From v12 the produce adds it.
    assert_eq!(produce(&mut probe, id, 0, 0, 12).await, (0, 0));
    assert_eq!(describe(&mut probe).await.1, "Ongoing");
    let (hw, lso, _, bytes) = fetch_committed(&mut probe).await;
    assert_eq!((hw, lso, bytes), (1, 0, 0));
    assert_eq!(end(&mut probe, id, 0, false, 5).await, (0, 1));
    let (hw, lso, aborted, bytes) = fetch_committed(&mut probe).await;
    assert_eq!((hw, lso, aborted), (2, 2, vec![id]));
    assert!(bytes > 0);
    // The next transaction, at the bumped epoch, commits.
    assert_eq!(add_partition(&mut probe, id, 1, 3).await, 0);
    assert_eq!(produce(&mut probe, id, 1, 0, 11).await, (0, 2));
    assert_eq!(end(&mut probe, id, 1, true, 5).await, (0, 2));
    let (hw, lso, aborted, _) = fetch_committed(&mut probe).await;
    assert_eq!((hw, lso, aborted), (4, 4, vec![id]));
    assert_eq!(
        describe(&mut probe).await,
        (0, "CompleteCommit".into(), id, 2)
    );

    let request = DescribeProducersRequest {
        topics: vec![describe_producers_request::TopicRequest {
            name: "t".into(),
            partition_indexes: vec![0].into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let r = call(&mut probe, request, 0).await;
    let p = r
        .topics
        .iter()
        .next()
        .and_then(|t| t.partitions.iter().next().map(|p| p.into_owned()))
        .unwrap_or_default();
    let producers: Vec<_> = p
        .active_producers
        .iter()
        .map(|a| (a.producer_id, a.producer_epoch, a.current_txn_start_offset))
        .collect();
    assert_eq!(producers, [(id, 2, -1)]);
    let request = ListTransactionsRequest {
        state_filters: vec!["CompleteCommit".into(), "Nonsense".into()],
        duration_filter: -1,
        ..Default::default()
    };
    let r = call(&mut probe, request, 1).await;
    let ids: Vec<_> = r
        .transaction_states
        .iter()
        .map(|s| s.transactional_id.to_string())
        .collect();
    assert_eq!(ids, [TID]);
    assert_eq!(r.unknown_state_filters, ["Nonsense"]);
}

#[tokio::test]
async fn a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced() {
    let (_cluster, mut probe) = one().await;
    let (_, id, _) = init(&mut probe, 300, 5).await;
    assert_eq!(produce(&mut probe, id, 0, 0, 12).await, (0, 0));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while describe(&mut probe).await.1 != "CompleteAbort" {
        assert!(tokio::time::Instant::now() < deadline, "never aborted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(describe(&mut probe).await.3, 1);
    let (hw, lso, aborted, _) = fetch_committed(&mut probe).await;
    assert_eq!((hw, lso, aborted), (2, 2, vec![id]));
    // The producer's next batch is refused; its abort is answered as a
    // retry of the one the timeout did, its commit is not.
    assert_eq!(
        produce(&mut probe, id, 0, 1, 12).await.0,
        ErrorCode::InvalidProducerEpoch.code()
    );
    assert_eq!(
        end(&mut probe, id, 0, true, 5).await.0,
        ErrorCode::InvalidTxnState.code()
    );
    assert_eq!(end(&mut probe, id, 0, false, 5).await, (0, 1));
}
