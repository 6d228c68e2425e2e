//! ApiVersions: the table of [`crate::versions`], and the finalized
//! features of Kafka 4.4.0 (from v3).

use kafka_wire::messages::ApiVersionsResponse;
use kafka_wire::ResponseBody;

use crate::dispatch::Context;
use crate::versions;

/// What the cluster speaks. An unsupported ApiVersions version never gets
/// here: the connection answers it at v0.
pub fn api_versions(cx: &Context<'_>) -> ResponseBody<'static> {
    ResponseBody::ApiVersions(ApiVersionsResponse {
        api_keys: versions::api_keys(&cx.shared.config.version_caps).into(),
        supported_features: versions::supported_features().into(),
        finalized_features_epoch: 1,
        finalized_features: versions::finalized_features().into(),
        ..Default::default()
    })
}
