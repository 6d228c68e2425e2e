//! Version negotiation: from a peer's ApiVersions response and the versions
//! this crate supports, the highest version each side can use per API.

use std::collections::BTreeMap;

use crate::messages::ApiVersionsResponse;
use crate::ApiKey;

/// Why an API cannot be used with a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unusable {
    /// The peer did not list the API.
    NotAdvertised,
    /// The peer's range and ours do not overlap.
    NoCommonVersion {
        /// The peer's lowest version.
        peer_min: i16,
        /// The peer's highest version.
        peer_max: i16,
    },
}

/// The outcome of negotiation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Negotiated {
    /// The highest version both sides support, per API.
    pub versions: BTreeMap<ApiKey, i16>,
    /// The APIs we know but cannot use with this peer, and why.
    pub unusable: BTreeMap<ApiKey, Unusable>,
    /// Keys the peer listed that this crate does not know.
    pub unknown_to_us: Vec<i16>,
}

impl Negotiated {
    /// The version to use for `api`, if any.
    pub fn version(&self, api: ApiKey) -> Option<i16> {
        self.versions.get(&api).copied()
    }
}

/// Chooses, per API, the highest version in both the peer's advertised range
/// and ours. Our range ends at the highest stable version unless
/// `include_unstable` is set.
pub fn negotiate(peer: &ApiVersionsResponse<'_>, include_unstable: bool) -> Negotiated {
    let mut result = Negotiated::default();
    for api in ApiKey::ALL {
        let our_max = if include_unstable {
            api.highest_version()
        } else {
            api.highest_stable_version()
        };
        let advertised = peer.api_keys.iter().find(|k| k.api_key == api.key());
        match advertised {
            None => {
                result.unusable.insert(api, Unusable::NotAdvertised);
            }
            Some(range) => {
                let low = range.min_version.max(api.lowest_version());
                let high = range.max_version.min(our_max);
                if low <= high {
                    result.versions.insert(api, high);
                } else {
                    result.unusable.insert(
                        api,
                        Unusable::NoCommonVersion {
                            peer_min: range.min_version,
                            peer_max: range.max_version,
                        },
                    );
                }
            }
        }
    }
    result.unknown_to_us = peer
        .api_keys
        .iter()
        .map(|k| k.api_key)
        .filter(|key| ApiKey::from_key(*key).is_none())
        .collect();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::api_versions_response::ApiVersion;

    fn range(api_key: i16, min_version: i16, max_version: i16) -> ApiVersion<'static> {
        ApiVersion {
            api_key,
            min_version,
            max_version,
            ..Default::default()
        }
    }

    #[test]
    fn picks_the_highest_common_version_and_names_the_rest() {
        let peer = ApiVersionsResponse {
            api_keys: vec![
                range(ApiKey::Produce.key(), 0, 99),
                range(ApiKey::Fetch.key(), 0, 3),
                range(ApiKey::Vote.key(), 7, 9),
                range(999, 0, 1),
            ]
            .into(),
            ..Default::default()
        };
        let result = negotiate(&peer, false);
        assert_eq!(
            result.version(ApiKey::Produce),
            Some(ApiKey::Produce.highest_stable_version())
        );
        assert_eq!(
            result.version(ApiKey::Fetch),
            (ApiKey::Fetch.lowest_version() <= 3).then_some(3)
        );
        assert_eq!(
            result.unusable.get(&ApiKey::Vote),
            Some(&Unusable::NoCommonVersion {
                peer_min: 7,
                peer_max: 9
            })
        );
        assert_eq!(
            result.unusable.get(&ApiKey::Metadata),
            Some(&Unusable::NotAdvertised)
        );
        assert_eq!(result.unknown_to_us, vec![999]);
    }
}
