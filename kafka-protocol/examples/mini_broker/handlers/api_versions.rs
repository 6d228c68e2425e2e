//! ApiVersions: what this broker speaks, as the crate advertises it.

use kafka_wire::api_versions::advertised_versions;
use kafka_wire::messages::ApiVersionsResponse;
use kafka_wire::ResponseBody;

/// Every api the crate knows, stable versions only. Produce is advertised
/// from v0 (KAFKA-18659); a Produce v0-2 request then closes the connection.
/// An unsupported ApiVersions version never gets here: the connection loop
/// answers it with `unsupported_api_versions_reply()` at v0.
pub fn api_versions() -> ResponseBody<'static> {
    ResponseBody::ApiVersions(ApiVersionsResponse {
        api_keys: advertised_versions(false).into(),
        ..Default::default()
    })
}
