//! The one place a decoded request is routed to its handler.
//!
//! Every request a connection reads, once its version is known to be
//! served, comes through [`dispatch`] with its [`Context`] (cluster, broker,
//! version, client) and decoded body, and leaves it as an [`Outcome`]: a
//! response body, no response (Produce with acks=0), or a closed
//! connection. Fault injection hooks in here, before `route`
//! ([`crate::control`]): answering with an error, delaying, dropping or
//! hanging any request, on any broker, without touching a handler.

pub(crate) mod context;

use kafka_wire::RequestBody;

pub use context::{Context, Outcome, ANONYMOUS};

use crate::control::hook::{self, Step};
use crate::handlers;

/// Handles one request. This is the interception point: the controls
/// ([`crate::control`]) are checked here, before the request is routed.
pub async fn dispatch(context: &Context<'_>, body: &RequestBody<'_>) -> Outcome {
    match hook::before(context, body).await {
        Step::Handle => route(context, body).await,
        Step::Answer(outcome) => outcome,
        Step::HandleThenClose => {
            let outcome = route(context, body).await;
            hook::answer_dropped(context, body, &outcome);
            Outcome::Close("a control dropped the answer".into())
        }
        Step::Patch {
            request,
            code,
            partitions,
        } => {
            let outcome = route(context, request.as_deref().unwrap_or(body)).await;
            hook::patch(context, body, outcome, code, &partitions)
        }
    }
}

/// Sends a request to its handler.
async fn route(cx: &Context<'_>, body: &RequestBody<'_>) -> Outcome {
    use handlers::*;
    let response = match body {
        RequestBody::ApiVersions(r) => api_versions::api_versions(cx, r),
        RequestBody::Produce(r) => return produce::produce(cx, r).await,
        RequestBody::InitProducerId(r) => match r.transactional_id.as_deref() {
            Some(tid) => transactions::init_producer_id(cx, r, tid),
            None => produce::init_producer_id(cx, r),
        },
        RequestBody::AddPartitionsToTxn(r) => transactions::add_partitions_to_txn(cx, r),
        RequestBody::AddOffsetsToTxn(r) => transactions::add_offsets_to_txn(cx, r),
        RequestBody::TxnOffsetCommit(r) => transactions::txn_offset_commit(cx, r),
        RequestBody::EndTxn(r) => transactions::end_txn(cx, r),
        RequestBody::DescribeProducers(r) => transactions::describe_producers(cx, r),
        RequestBody::DescribeTransactions(r) => transactions::describe_transactions(cx, r),
        RequestBody::ListTransactions(r) => transactions::list_transactions(cx, r),
        RequestBody::Fetch(r) => fetch::fetch(cx, r).await,
        RequestBody::ListOffsets(r) => offsets::list_offsets(cx, r),
        RequestBody::OffsetForLeaderEpoch(r) => offsets::offset_for_leader_epoch(cx, r),
        RequestBody::DeleteRecords(r) => offsets::delete_records(cx, r),
        RequestBody::Metadata(r) => metadata::metadata(cx, r),
        RequestBody::DescribeTopicPartitions(r) => metadata::describe_topic_partitions(cx, r),
        RequestBody::CreateTopics(r) => topics::create_topics(cx, r),
        RequestBody::DeleteTopics(r) => delete_topics::delete_topics(cx, r),
        RequestBody::CreatePartitions(r) => topics::create_partitions(cx, r),
        RequestBody::DescribeCluster(r) => metadata::describe_cluster(cx, r),
        RequestBody::DescribeConfigs(r) => configs::describe_configs(cx, r),
        RequestBody::AlterConfigs(r) => configs::alter_configs(cx, r),
        RequestBody::IncrementalAlterConfigs(r) => configs::incremental_alter_configs(cx, r),
        RequestBody::FindCoordinator(r) => groups::find_coordinator(cx, r),
        RequestBody::JoinGroup(r) => groups::join_group(cx, r).await,
        RequestBody::SyncGroup(r) => groups::sync_group(cx, r).await,
        RequestBody::Heartbeat(r) => groups::heartbeat(cx, r),
        RequestBody::LeaveGroup(r) => groups::leave_group(cx, r),
        RequestBody::ListGroups(r) => groups::list_groups(cx, r),
        RequestBody::DescribeGroups(r) => groups::describe_groups(cx, r),
        RequestBody::DeleteGroups(r) => groups::delete_groups(cx, r),
        RequestBody::ConsumerGroupHeartbeat(r) => consumer_groups::heartbeat(cx, r),
        RequestBody::ConsumerGroupDescribe(r) => consumer_groups::describe(cx, r),
        RequestBody::ShareGroupHeartbeat(r) => share::heartbeat(cx, r),
        RequestBody::StreamsGroupHeartbeat(r) => streams_groups::heartbeat(cx, r),
        RequestBody::StreamsGroupDescribe(r) => streams_groups::describe(cx, r),
        RequestBody::StreamsGroupTopologyDescriptionUpdate(r) => {
            streams_groups::topology_description_update(cx, r)
        }
        RequestBody::ShareGroupDescribe(r) => share::describe(cx, r),
        RequestBody::ShareFetch(r) => share::fetch(cx, r).await,
        RequestBody::ShareAcknowledge(r) => share::acknowledge(cx, r),
        RequestBody::DescribeShareGroupOffsets(r) => share_admin::describe(cx, r),
        RequestBody::AlterShareGroupOffsets(r) => share_admin::alter(cx, r),
        RequestBody::DeleteShareGroupOffsets(r) => share_admin::delete(cx, r),
        RequestBody::OffsetCommit(r) => commits::offset_commit(cx, r),
        RequestBody::OffsetFetch(r) => commits::offset_fetch(cx, r),
        RequestBody::OffsetDelete(r) => commits::offset_delete(cx, r),
        RequestBody::WriteTxnMarkers(r) => txn_markers::write_txn_markers(cx, r),
        RequestBody::DescribeQuorum(r) => quorum::describe_quorum(cx, r),
        RequestBody::UnregisterBroker(r) => unregister::unregister_broker(cx, r),
        RequestBody::UnregisterController(r) => unregister::unregister_controller(cx, r),
        RequestBody::ListConfigResources(r) => config_resources::list_config_resources(cx, r),
        RequestBody::CreateDelegationToken(r) => delegation_tokens::create(cx, r),
        RequestBody::RenewDelegationToken(_) => delegation_tokens::renew(cx),
        RequestBody::ExpireDelegationToken(_) => delegation_tokens::expire(cx),
        RequestBody::DescribeDelegationToken(_) => delegation_tokens::describe(cx),
        RequestBody::DescribeClientQuotas(r) => quotas::describe_client_quotas(cx, r),
        RequestBody::AlterClientQuotas(r) => quotas::alter_client_quotas(cx, r),
        RequestBody::ElectLeaders(r) => replicas::elect_leaders(cx, r),
        RequestBody::AlterPartitionReassignments(r) => {
            replicas::alter_partition_reassignments(cx, r)
        }
        RequestBody::ListPartitionReassignments(r) => replicas::list_partition_reassignments(cx, r),
        RequestBody::DescribeLogDirs(r) => replicas::describe_log_dirs(cx, r),
        RequestBody::UpdateFeatures(r) => features::update_features(cx, r),
        other => unsupported::unsupported(other.api_key(), cx.version),
    };
    Outcome::Respond(Box::new(response))
}
