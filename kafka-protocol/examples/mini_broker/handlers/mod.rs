//! One handler per api, grouped by topic: each takes the decoded request and
//! returns the response body to encode at the request's version.

mod api_versions;
mod fetch;
mod groups;
mod metadata;
mod offsets;
mod produce;
mod strings;
mod unsupported;

use kafka_wire::frame::RequestFrame;
use kafka_wire::{RequestBody, ResponseBody};

use crate::broker::Broker;

/// Answers a request. `None` means no response is sent (Produce, acks=0).
pub async fn handle(broker: &Broker, request: &RequestFrame<'_>) -> Option<ResponseBody<'static>> {
    let version = request.api_version();
    let client_id = request.header.client_id.as_deref().unwrap_or("");
    let body = match &request.body {
        RequestBody::ApiVersions(_) => api_versions::api_versions(),
        RequestBody::Metadata(r) => metadata::metadata(broker, r, version),
        RequestBody::CreateTopics(r) => metadata::create_topics(broker, r),
        RequestBody::DeleteTopics(r) => metadata::delete_topics(broker, r, version),
        RequestBody::DescribeCluster(r) => metadata::describe_cluster(broker, r),
        RequestBody::Produce(r) => return produce::produce(broker, r, version).await,
        RequestBody::InitProducerId(r) => produce::init_producer_id(broker, r),
        RequestBody::Fetch(r) => fetch::fetch(broker, r, version).await,
        RequestBody::ListOffsets(r) => fetch::list_offsets(broker, r, version),
        RequestBody::FindCoordinator(r) => groups::find_coordinator(broker, r, version),
        RequestBody::JoinGroup(r) => groups::join_group(broker, r, client_id).await,
        RequestBody::SyncGroup(r) => groups::sync_group(broker, r).await,
        RequestBody::Heartbeat(r) => groups::heartbeat(broker, r),
        RequestBody::LeaveGroup(r) => groups::leave_group(broker, r, version),
        RequestBody::OffsetCommit(r) => offsets::offset_commit(broker, r, version),
        RequestBody::OffsetFetch(r) => offsets::offset_fetch(broker, r, version),
        other => unsupported::unsupported(other.api_key(), version),
    };
    Some(body)
}
