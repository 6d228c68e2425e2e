//! What a broker advertises in its ApiVersions response, and the reply to an
//! ApiVersions request of a version it does not support.

use crate::messages::{api_versions_response, ApiVersionsResponse};
use crate::{ApiKey, ErrorCode};

/// Kafka's error code for a version the receiver does not support:
/// [`ErrorCode::UnsupportedVersion`] as a number.
pub const UNSUPPORTED_VERSION: i16 = ErrorCode::UnsupportedVersion.code();

impl ApiKey {
    /// The lowest version a broker advertises for this api.
    ///
    /// This is the lowest valid version, with one exception kept from Kafka
    /// 4 (KAFKA-18659): Produce is advertised from version 0 although
    /// versions 0 to 2 are rejected when used, because librdkafka enables
    /// its gzip, snappy and lz4 codecs only when it sees Produce v0
    /// advertised.
    pub fn advertised_lowest_version(self) -> i16 {
        // By name, so that builds without Produce still compile.
        match self.name() {
            "Produce" => 0,
            _ => self.lowest_version(),
        }
    }

    /// The highest version a broker advertises: the highest stable one,
    /// or the unstable latest too when `include_unstable` is set.
    pub fn advertised_highest_version(self, include_unstable: bool) -> i16 {
        if include_unstable {
            self.highest_version()
        } else {
            self.highest_stable_version()
        }
    }
}

/// The `api_keys` list of an ApiVersions response advertising every api this
/// crate supports.
pub fn advertised_versions(
    include_unstable: bool,
) -> Vec<api_versions_response::ApiVersion<'static>> {
    ApiKey::ALL
        .into_iter()
        .map(|api| api_versions_response::ApiVersion {
            api_key: api.key(),
            min_version: api.advertised_lowest_version(),
            max_version: api.advertised_highest_version(include_unstable),
            ..Default::default()
        })
        .collect()
}

/// The reply to an ApiVersions request whose version is not supported: a v0
/// body with UNSUPPORTED_VERSION and the ApiVersions range, so that the
/// client can retry with a version both sides know. Encode it at version 0.
pub fn unsupported_api_versions_reply() -> ApiVersionsResponse<'static> {
    ApiVersionsResponse {
        error_code: UNSUPPORTED_VERSION,
        api_keys: vec![api_versions_response::ApiVersion {
            api_key: ApiKey::ApiVersions.key(),
            min_version: ApiKey::ApiVersions.lowest_version(),
            max_version: ApiKey::ApiVersions.highest_stable_version(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

#[cfg(all(test, feature = "produce", feature = "fetch"))]
mod tests {
    use super::*;
    use crate::runtime::Message;

    #[test]
    fn produce_is_advertised_from_zero_but_not_decodable_there() {
        let produce = advertised_versions(false)
            .into_iter()
            .find(|v| v.api_key == ApiKey::Produce.key());
        assert_eq!(produce.map(|v| v.min_version), Some(0));
        assert!(!ApiKey::Produce.supports_version(0));
        assert_eq!(
            ApiKey::Fetch.advertised_lowest_version(),
            ApiKey::Fetch.lowest_version()
        );
    }

    #[test]
    fn unsupported_reply_is_a_valid_v0_body() {
        let reply = unsupported_api_versions_reply();
        let bytes = reply.to_bytes(0).unwrap_or_default();
        // error_code 35, then one api entry: key 18, min 0, max 4.
        assert_eq!(&bytes[..2], &[0, 35]);
        assert_eq!(ApiVersionsResponse::decode(&bytes, 0).ok(), Some(reply));
    }
}
