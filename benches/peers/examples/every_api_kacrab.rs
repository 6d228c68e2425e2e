//! `benches/examples/every_api_ours.rs` on kacrab-protocol 0.4 with its
//! `message-enums` feature and its four codecs
//! (`features = ["message-enums", "compression"]`): decodes, then encodes
//! again, the given bytes as every request and every response of every API
//! at every version (`client_api_info`'s range), and encodes what decodes
//! through its `RequestKind` and `ResponseKind` enums.
//!
//! kacrab's enums encode but do not decode, so the dispatch from an api key
//! to a message type is written here, as a kacrab user writes it: one match
//! arm per API (the list is that of kacrab's `ApiKey`).
//!
//! Usage: `every_api_kacrab [FILE]` (a body to decode; 64 zero bytes if none).

use bytes::{Bytes, BytesMut};
use kacrab_protocol::generated::*;

/// The dispatch: for each API, its request and response types.
macro_rules! every_api {
    ($($api:ident => $request:ident, $response:ident;)*) => {
        /// Every API key.
        const ALL: &[ApiKey] = &[$(ApiKey::$api),*];

        /// Decodes `input` as the request and as the response of `api` at
        /// `version`, and encodes what decodes into `out`: the number of
        /// bodies decoded and of bytes encoded.
        fn roundtrip(api: ApiKey, input: &Bytes, version: i16, out: &mut BytesMut) -> (usize, usize) {
            let (mut decoded, mut encoded) = (0, 0);
            match api {
                $(ApiKey::$api => {
                    if let Ok(message) = $request::read(&mut input.clone(), version) {
                        decoded += 1;
                        out.clear();
                        if RequestKind::$api(message).write(out, version).is_ok() {
                            encoded += out.len();
                        }
                    }
                    if let Ok(message) = $response::read(&mut input.clone(), version) {
                        decoded += 1;
                        out.clear();
                        if ResponseKind::$api(message).write(out, version).is_ok() {
                            encoded += out.len();
                        }
                    }
                })*
            }
            (decoded, encoded)
        }
    };
}

every_api! {
    Produce => ProduceRequestData, ProduceResponseData;
    Fetch => FetchRequestData, FetchResponseData;
    ListOffsets => ListOffsetsRequestData, ListOffsetsResponseData;
    Metadata => MetadataRequestData, MetadataResponseData;
    OffsetCommit => OffsetCommitRequestData, OffsetCommitResponseData;
    OffsetFetch => OffsetFetchRequestData, OffsetFetchResponseData;
    FindCoordinator => FindCoordinatorRequestData, FindCoordinatorResponseData;
    JoinGroup => JoinGroupRequestData, JoinGroupResponseData;
    Heartbeat => HeartbeatRequestData, HeartbeatResponseData;
    LeaveGroup => LeaveGroupRequestData, LeaveGroupResponseData;
    SyncGroup => SyncGroupRequestData, SyncGroupResponseData;
    DescribeGroups => DescribeGroupsRequestData, DescribeGroupsResponseData;
    ListGroups => ListGroupsRequestData, ListGroupsResponseData;
    SaslHandshake => SaslHandshakeRequestData, SaslHandshakeResponseData;
    ApiVersions => ApiVersionsRequestData, ApiVersionsResponseData;
    CreateTopics => CreateTopicsRequestData, CreateTopicsResponseData;
    DeleteTopics => DeleteTopicsRequestData, DeleteTopicsResponseData;
    DeleteRecords => DeleteRecordsRequestData, DeleteRecordsResponseData;
    InitProducerId => InitProducerIdRequestData, InitProducerIdResponseData;
    OffsetForLeaderEpoch => OffsetForLeaderEpochRequestData, OffsetForLeaderEpochResponseData;
    AddPartitionsToTxn => AddPartitionsToTxnRequestData, AddPartitionsToTxnResponseData;
    AddOffsetsToTxn => AddOffsetsToTxnRequestData, AddOffsetsToTxnResponseData;
    EndTxn => EndTxnRequestData, EndTxnResponseData;
    WriteTxnMarkers => WriteTxnMarkersRequestData, WriteTxnMarkersResponseData;
    TxnOffsetCommit => TxnOffsetCommitRequestData, TxnOffsetCommitResponseData;
    DescribeAcls => DescribeAclsRequestData, DescribeAclsResponseData;
    CreateAcls => CreateAclsRequestData, CreateAclsResponseData;
    DeleteAcls => DeleteAclsRequestData, DeleteAclsResponseData;
    DescribeConfigs => DescribeConfigsRequestData, DescribeConfigsResponseData;
    AlterConfigs => AlterConfigsRequestData, AlterConfigsResponseData;
    AlterReplicaLogDirs => AlterReplicaLogDirsRequestData, AlterReplicaLogDirsResponseData;
    DescribeLogDirs => DescribeLogDirsRequestData, DescribeLogDirsResponseData;
    SaslAuthenticate => SaslAuthenticateRequestData, SaslAuthenticateResponseData;
    CreatePartitions => CreatePartitionsRequestData, CreatePartitionsResponseData;
    CreateDelegationToken => CreateDelegationTokenRequestData, CreateDelegationTokenResponseData;
    RenewDelegationToken => RenewDelegationTokenRequestData, RenewDelegationTokenResponseData;
    ExpireDelegationToken => ExpireDelegationTokenRequestData, ExpireDelegationTokenResponseData;
    DescribeDelegationToken => DescribeDelegationTokenRequestData, DescribeDelegationTokenResponseData;
    DeleteGroups => DeleteGroupsRequestData, DeleteGroupsResponseData;
    ElectLeaders => ElectLeadersRequestData, ElectLeadersResponseData;
    IncrementalAlterConfigs => IncrementalAlterConfigsRequestData, IncrementalAlterConfigsResponseData;
    AlterPartitionReassignments => AlterPartitionReassignmentsRequestData, AlterPartitionReassignmentsResponseData;
    ListPartitionReassignments => ListPartitionReassignmentsRequestData, ListPartitionReassignmentsResponseData;
    OffsetDelete => OffsetDeleteRequestData, OffsetDeleteResponseData;
    DescribeClientQuotas => DescribeClientQuotasRequestData, DescribeClientQuotasResponseData;
    AlterClientQuotas => AlterClientQuotasRequestData, AlterClientQuotasResponseData;
    DescribeUserScramCredentials => DescribeUserScramCredentialsRequestData, DescribeUserScramCredentialsResponseData;
    AlterUserScramCredentials => AlterUserScramCredentialsRequestData, AlterUserScramCredentialsResponseData;
    Vote => VoteRequestData, VoteResponseData;
    BeginQuorumEpoch => BeginQuorumEpochRequestData, BeginQuorumEpochResponseData;
    EndQuorumEpoch => EndQuorumEpochRequestData, EndQuorumEpochResponseData;
    DescribeQuorum => DescribeQuorumRequestData, DescribeQuorumResponseData;
    AlterPartition => AlterPartitionRequestData, AlterPartitionResponseData;
    UpdateFeatures => UpdateFeaturesRequestData, UpdateFeaturesResponseData;
    Envelope => EnvelopeRequestData, EnvelopeResponseData;
    FetchSnapshot => FetchSnapshotRequestData, FetchSnapshotResponseData;
    DescribeCluster => DescribeClusterRequestData, DescribeClusterResponseData;
    DescribeProducers => DescribeProducersRequestData, DescribeProducersResponseData;
    BrokerRegistration => BrokerRegistrationRequestData, BrokerRegistrationResponseData;
    BrokerHeartbeat => BrokerHeartbeatRequestData, BrokerHeartbeatResponseData;
    UnregisterBroker => UnregisterBrokerRequestData, UnregisterBrokerResponseData;
    DescribeTransactions => DescribeTransactionsRequestData, DescribeTransactionsResponseData;
    ListTransactions => ListTransactionsRequestData, ListTransactionsResponseData;
    AllocateProducerIds => AllocateProducerIdsRequestData, AllocateProducerIdsResponseData;
    ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequestData, ConsumerGroupHeartbeatResponseData;
    ConsumerGroupDescribe => ConsumerGroupDescribeRequestData, ConsumerGroupDescribeResponseData;
    ControllerRegistration => ControllerRegistrationRequestData, ControllerRegistrationResponseData;
    GetTelemetrySubscriptions => GetTelemetrySubscriptionsRequestData, GetTelemetrySubscriptionsResponseData;
    PushTelemetry => PushTelemetryRequestData, PushTelemetryResponseData;
    AssignReplicasToDirs => AssignReplicasToDirsRequestData, AssignReplicasToDirsResponseData;
    ListConfigResources => ListConfigResourcesRequestData, ListConfigResourcesResponseData;
    DescribeTopicPartitions => DescribeTopicPartitionsRequestData, DescribeTopicPartitionsResponseData;
    ShareGroupHeartbeat => ShareGroupHeartbeatRequestData, ShareGroupHeartbeatResponseData;
    ShareGroupDescribe => ShareGroupDescribeRequestData, ShareGroupDescribeResponseData;
    ShareFetch => ShareFetchRequestData, ShareFetchResponseData;
    ShareAcknowledge => ShareAcknowledgeRequestData, ShareAcknowledgeResponseData;
    AddRaftVoter => AddRaftVoterRequestData, AddRaftVoterResponseData;
    RemoveRaftVoter => RemoveRaftVoterRequestData, RemoveRaftVoterResponseData;
    UpdateRaftVoter => UpdateRaftVoterRequestData, UpdateRaftVoterResponseData;
    InitializeShareGroupState => InitializeShareGroupStateRequestData, InitializeShareGroupStateResponseData;
    ReadShareGroupState => ReadShareGroupStateRequestData, ReadShareGroupStateResponseData;
    WriteShareGroupState => WriteShareGroupStateRequestData, WriteShareGroupStateResponseData;
    DeleteShareGroupState => DeleteShareGroupStateRequestData, DeleteShareGroupStateResponseData;
    ReadShareGroupStateSummary => ReadShareGroupStateSummaryRequestData, ReadShareGroupStateSummaryResponseData;
    StreamsGroupHeartbeat => StreamsGroupHeartbeatRequestData, StreamsGroupHeartbeatResponseData;
    StreamsGroupDescribe => StreamsGroupDescribeRequestData, StreamsGroupDescribeResponseData;
    DescribeShareGroupOffsets => DescribeShareGroupOffsetsRequestData, DescribeShareGroupOffsetsResponseData;
    AlterShareGroupOffsets => AlterShareGroupOffsetsRequestData, AlterShareGroupOffsetsResponseData;
    DeleteShareGroupOffsets => DeleteShareGroupOffsetsRequestData, DeleteShareGroupOffsetsResponseData;
}

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => match std::fs::read(&path) {
            Ok(bytes) => Bytes::from(bytes),
            Err(error) => {
                eprintln!("every_api_kacrab: {}: {error}", path.to_string_lossy());
                std::process::exit(1);
            }
        },
        None => Bytes::from(vec![0; 64]),
    };
    let (mut decoded, mut encoded) = (0usize, 0usize);
    let mut out = BytesMut::new();
    for &api in ALL {
        let info = client_api_info(api);
        for version in info.min_version..=info.max_version {
            let (d, e) = roundtrip(api, &input, version, &mut out);
            decoded += d;
            encoded += e;
        }
    }
    println!("decoded {decoded} bodies, encoded {encoded} bytes");
}
