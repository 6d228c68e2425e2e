//! `benches/examples/every_api_ours.rs` on krabka-protocol 0.8 at its default
//! features (`arbitrary` and the four codecs): decodes, then encodes again,
//! the given bytes as every request and every response of every Kafka API
//! at every version its request type declares, with its owned types.
//!
//! krabka has no enum over its messages, so the list of them is written
//! here, as a krabka user writes it: one line per Kafka API of krabka's
//! `ApiKey` (those below 1000; krabka's own private APIs are left out).
//!
//! Usage: `every_api_krabka [FILE]` (a body to decode; 64 zero bytes if none).

use bytes::{Bytes, BytesMut};
use krabka_protocol::owned::*;
use krabka_protocol::{Decode, Encode, ProtocolRequest};

/// Decodes `input` as `M` at `version` and encodes it into `out` if it
/// decodes: the number of bodies decoded and of bytes encoded.
fn roundtrip<M: for<'de> Decode<'de> + Encode>(
    input: &Bytes,
    version: i16,
    out: &mut BytesMut,
) -> (usize, usize) {
    match M::decode(&mut input.clone(), version) {
        Ok(message) => {
            out.clear();
            match message.encode(out, version) {
                Ok(()) => (1, out.len()),
                Err(_) => (1, 0),
            }
        }
        Err(_) => (0, 0),
    }
}

/// Every version of one API: its request and its response.
fn api<Q: ProtocolRequest + for<'de> Decode<'de>, S: for<'de> Decode<'de> + Encode>(
    input: &Bytes,
    out: &mut BytesMut,
) -> (usize, usize) {
    let (mut decoded, mut encoded) = (0, 0);
    for version in Q::MIN_VERSION..=Q::MAX_VERSION {
        for (d, e) in [
            roundtrip::<Q>(input, version, out),
            roundtrip::<S>(input, version, out),
        ] {
            decoded += d;
            encoded += e;
        }
    }
    (decoded, encoded)
}

/// Every API: its request and response types.
macro_rules! every_api {
    ($($request:path, $response:path;)*) => {
        /// Runs [`api`] on every API.
        fn every_api(input: &Bytes, out: &mut BytesMut) -> (usize, usize) {
            let (mut decoded, mut encoded) = (0, 0);
            $(
                let (d, e) = api::<$request, $response>(input, out);
                decoded += d;
                encoded += e;
            )*
            (decoded, encoded)
        }
    };
}

every_api! {
    produce_request::ProduceRequest, produce_response::ProduceResponse;
    fetch_request::FetchRequest, fetch_response::FetchResponse;
    list_offsets_request::ListOffsetsRequest, list_offsets_response::ListOffsetsResponse;
    metadata_request::MetadataRequest, metadata_response::MetadataResponse;
    offset_commit_request::OffsetCommitRequest, offset_commit_response::OffsetCommitResponse;
    offset_fetch_request::OffsetFetchRequest, offset_fetch_response::OffsetFetchResponse;
    find_coordinator_request::FindCoordinatorRequest, find_coordinator_response::FindCoordinatorResponse;
    join_group_request::JoinGroupRequest, join_group_response::JoinGroupResponse;
    heartbeat_request::HeartbeatRequest, heartbeat_response::HeartbeatResponse;
    leave_group_request::LeaveGroupRequest, leave_group_response::LeaveGroupResponse;
    sync_group_request::SyncGroupRequest, sync_group_response::SyncGroupResponse;
    describe_groups_request::DescribeGroupsRequest, describe_groups_response::DescribeGroupsResponse;
    list_groups_request::ListGroupsRequest, list_groups_response::ListGroupsResponse;
    sasl_handshake_request::SaslHandshakeRequest, sasl_handshake_response::SaslHandshakeResponse;
    api_versions_request::ApiVersionsRequest, api_versions_response::ApiVersionsResponse;
    create_topics_request::CreateTopicsRequest, create_topics_response::CreateTopicsResponse;
    delete_topics_request::DeleteTopicsRequest, delete_topics_response::DeleteTopicsResponse;
    delete_records_request::DeleteRecordsRequest, delete_records_response::DeleteRecordsResponse;
    init_producer_id_request::InitProducerIdRequest, init_producer_id_response::InitProducerIdResponse;
    offset_for_leader_epoch_request::OffsetForLeaderEpochRequest, offset_for_leader_epoch_response::OffsetForLeaderEpochResponse;
    add_partitions_to_txn_request::AddPartitionsToTxnRequest, add_partitions_to_txn_response::AddPartitionsToTxnResponse;
    add_offsets_to_txn_request::AddOffsetsToTxnRequest, add_offsets_to_txn_response::AddOffsetsToTxnResponse;
    end_txn_request::EndTxnRequest, end_txn_response::EndTxnResponse;
    write_txn_markers_request::WriteTxnMarkersRequest, write_txn_markers_response::WriteTxnMarkersResponse;
    txn_offset_commit_request::TxnOffsetCommitRequest, txn_offset_commit_response::TxnOffsetCommitResponse;
    describe_acls_request::DescribeAclsRequest, describe_acls_response::DescribeAclsResponse;
    create_acls_request::CreateAclsRequest, create_acls_response::CreateAclsResponse;
    delete_acls_request::DeleteAclsRequest, delete_acls_response::DeleteAclsResponse;
    describe_configs_request::DescribeConfigsRequest, describe_configs_response::DescribeConfigsResponse;
    alter_configs_request::AlterConfigsRequest, alter_configs_response::AlterConfigsResponse;
    alter_replica_log_dirs_request::AlterReplicaLogDirsRequest, alter_replica_log_dirs_response::AlterReplicaLogDirsResponse;
    describe_log_dirs_request::DescribeLogDirsRequest, describe_log_dirs_response::DescribeLogDirsResponse;
    sasl_authenticate_request::SaslAuthenticateRequest, sasl_authenticate_response::SaslAuthenticateResponse;
    create_partitions_request::CreatePartitionsRequest, create_partitions_response::CreatePartitionsResponse;
    create_delegation_token_request::CreateDelegationTokenRequest, create_delegation_token_response::CreateDelegationTokenResponse;
    renew_delegation_token_request::RenewDelegationTokenRequest, renew_delegation_token_response::RenewDelegationTokenResponse;
    expire_delegation_token_request::ExpireDelegationTokenRequest, expire_delegation_token_response::ExpireDelegationTokenResponse;
    describe_delegation_token_request::DescribeDelegationTokenRequest, describe_delegation_token_response::DescribeDelegationTokenResponse;
    delete_groups_request::DeleteGroupsRequest, delete_groups_response::DeleteGroupsResponse;
    elect_leaders_request::ElectLeadersRequest, elect_leaders_response::ElectLeadersResponse;
    incremental_alter_configs_request::IncrementalAlterConfigsRequest, incremental_alter_configs_response::IncrementalAlterConfigsResponse;
    alter_partition_reassignments_request::AlterPartitionReassignmentsRequest, alter_partition_reassignments_response::AlterPartitionReassignmentsResponse;
    list_partition_reassignments_request::ListPartitionReassignmentsRequest, list_partition_reassignments_response::ListPartitionReassignmentsResponse;
    offset_delete_request::OffsetDeleteRequest, offset_delete_response::OffsetDeleteResponse;
    describe_client_quotas_request::DescribeClientQuotasRequest, describe_client_quotas_response::DescribeClientQuotasResponse;
    alter_client_quotas_request::AlterClientQuotasRequest, alter_client_quotas_response::AlterClientQuotasResponse;
    describe_user_scram_credentials_request::DescribeUserScramCredentialsRequest, describe_user_scram_credentials_response::DescribeUserScramCredentialsResponse;
    alter_user_scram_credentials_request::AlterUserScramCredentialsRequest, alter_user_scram_credentials_response::AlterUserScramCredentialsResponse;
    vote_request::VoteRequest, vote_response::VoteResponse;
    begin_quorum_epoch_request::BeginQuorumEpochRequest, begin_quorum_epoch_response::BeginQuorumEpochResponse;
    end_quorum_epoch_request::EndQuorumEpochRequest, end_quorum_epoch_response::EndQuorumEpochResponse;
    describe_quorum_request::DescribeQuorumRequest, describe_quorum_response::DescribeQuorumResponse;
    alter_partition_request::AlterPartitionRequest, alter_partition_response::AlterPartitionResponse;
    update_features_request::UpdateFeaturesRequest, update_features_response::UpdateFeaturesResponse;
    envelope_request::EnvelopeRequest, envelope_response::EnvelopeResponse;
    fetch_snapshot_request::FetchSnapshotRequest, fetch_snapshot_response::FetchSnapshotResponse;
    describe_cluster_request::DescribeClusterRequest, describe_cluster_response::DescribeClusterResponse;
    describe_producers_request::DescribeProducersRequest, describe_producers_response::DescribeProducersResponse;
    broker_registration_request::BrokerRegistrationRequest, broker_registration_response::BrokerRegistrationResponse;
    broker_heartbeat_request::BrokerHeartbeatRequest, broker_heartbeat_response::BrokerHeartbeatResponse;
    unregister_broker_request::UnregisterBrokerRequest, unregister_broker_response::UnregisterBrokerResponse;
    describe_transactions_request::DescribeTransactionsRequest, describe_transactions_response::DescribeTransactionsResponse;
    list_transactions_request::ListTransactionsRequest, list_transactions_response::ListTransactionsResponse;
    allocate_producer_ids_request::AllocateProducerIdsRequest, allocate_producer_ids_response::AllocateProducerIdsResponse;
    consumer_group_heartbeat_request::ConsumerGroupHeartbeatRequest, consumer_group_heartbeat_response::ConsumerGroupHeartbeatResponse;
    consumer_group_describe_request::ConsumerGroupDescribeRequest, consumer_group_describe_response::ConsumerGroupDescribeResponse;
    controller_registration_request::ControllerRegistrationRequest, controller_registration_response::ControllerRegistrationResponse;
    get_telemetry_subscriptions_request::GetTelemetrySubscriptionsRequest, get_telemetry_subscriptions_response::GetTelemetrySubscriptionsResponse;
    push_telemetry_request::PushTelemetryRequest, push_telemetry_response::PushTelemetryResponse;
    assign_replicas_to_dirs_request::AssignReplicasToDirsRequest, assign_replicas_to_dirs_response::AssignReplicasToDirsResponse;
    list_config_resources_request::ListConfigResourcesRequest, list_config_resources_response::ListConfigResourcesResponse;
    describe_topic_partitions_request::DescribeTopicPartitionsRequest, describe_topic_partitions_response::DescribeTopicPartitionsResponse;
    share_group_heartbeat_request::ShareGroupHeartbeatRequest, share_group_heartbeat_response::ShareGroupHeartbeatResponse;
    share_group_describe_request::ShareGroupDescribeRequest, share_group_describe_response::ShareGroupDescribeResponse;
    share_fetch_request::ShareFetchRequest, share_fetch_response::ShareFetchResponse;
    share_acknowledge_request::ShareAcknowledgeRequest, share_acknowledge_response::ShareAcknowledgeResponse;
    add_raft_voter_request::AddRaftVoterRequest, add_raft_voter_response::AddRaftVoterResponse;
    remove_raft_voter_request::RemoveRaftVoterRequest, remove_raft_voter_response::RemoveRaftVoterResponse;
    update_raft_voter_request::UpdateRaftVoterRequest, update_raft_voter_response::UpdateRaftVoterResponse;
    initialize_share_group_state_request::InitializeShareGroupStateRequest, initialize_share_group_state_response::InitializeShareGroupStateResponse;
    read_share_group_state_request::ReadShareGroupStateRequest, read_share_group_state_response::ReadShareGroupStateResponse;
    write_share_group_state_request::WriteShareGroupStateRequest, write_share_group_state_response::WriteShareGroupStateResponse;
    delete_share_group_state_request::DeleteShareGroupStateRequest, delete_share_group_state_response::DeleteShareGroupStateResponse;
    read_share_group_state_summary_request::ReadShareGroupStateSummaryRequest, read_share_group_state_summary_response::ReadShareGroupStateSummaryResponse;
    streams_group_heartbeat_request::StreamsGroupHeartbeatRequest, streams_group_heartbeat_response::StreamsGroupHeartbeatResponse;
    streams_group_describe_request::StreamsGroupDescribeRequest, streams_group_describe_response::StreamsGroupDescribeResponse;
    describe_share_group_offsets_request::DescribeShareGroupOffsetsRequest, describe_share_group_offsets_response::DescribeShareGroupOffsetsResponse;
    alter_share_group_offsets_request::AlterShareGroupOffsetsRequest, alter_share_group_offsets_response::AlterShareGroupOffsetsResponse;
    delete_share_group_offsets_request::DeleteShareGroupOffsetsRequest, delete_share_group_offsets_response::DeleteShareGroupOffsetsResponse;
    streams_group_topology_description_update_request::StreamsGroupTopologyDescriptionUpdateRequest, streams_group_topology_description_update_response::StreamsGroupTopologyDescriptionUpdateResponse;
    unregister_controller_request::UnregisterControllerRequest, unregister_controller_response::UnregisterControllerResponse;
}

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => match std::fs::read(&path) {
            Ok(bytes) => Bytes::from(bytes),
            Err(error) => {
                eprintln!("every_api_krabka: {}: {error}", path.to_string_lossy());
                std::process::exit(1);
            }
        },
        None => Bytes::from(vec![0; 64]),
    };
    let mut out = BytesMut::new();
    let (decoded, encoded) = every_api(&input, &mut out);
    println!("decoded {decoded} bodies, encoded {encoded} bytes");
}
