//! ApiVersions: the table of [`crate::versions`], and the features of
//! Kafka 4.4.0 (from v3; those supported from level 0 only from v4).

use kafka_wire::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_wire::{ErrorCode, ResponseBody};

use crate::dispatch::Context;
use crate::versions;

/// Kafka's rule for the client software name and version (v3+).
fn valid_software(text: &str) -> bool {
    let bytes = text.as_bytes();
    let inner = |b: &u8| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'.';
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() && bytes.iter().all(inner)
        }
        _ => false,
    }
}

/// What the cluster speaks. An unsupported ApiVersions version never gets
/// here: the connection answers it at v0. From v3 a client software name
/// or version Kafka would refuse gets INVALID_REQUEST and nothing else (no
/// apis, no features, finalizedFeaturesEpoch -1), as Kafka answers it.
pub fn api_versions(cx: &Context<'_>, request: &ApiVersionsRequest<'_>) -> ResponseBody<'static> {
    let invalid = cx.version >= 3
        && !(valid_software(&request.client_software_name)
            && valid_software(&request.client_software_version));
    if invalid {
        return ResponseBody::ApiVersions(ApiVersionsResponse {
            error_code: ErrorCode::InvalidRequest.code(),
            finalized_features_epoch: -1,
            ..Default::default()
        });
    }
    ResponseBody::ApiVersions(ApiVersionsResponse {
        error_code: 0,
        api_keys: versions::api_keys(&cx.shared.version_caps()).into(),
        supported_features: versions::supported_features(cx.version).into(),
        finalized_features_epoch: 1,
        finalized_features: versions::finalized_features().into(),
        ..Default::default()
    })
}
