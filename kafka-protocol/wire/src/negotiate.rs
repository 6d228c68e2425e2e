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
///
/// The peer's list is read once, whatever its length: a hostile response
/// listing many keys costs time linear in its size. When the peer lists a
/// key more than once, its first entry counts.
pub fn negotiate(peer: &ApiVersionsResponse<'_>, include_unstable: bool) -> Negotiated {
    negotiate_ranges(
        peer.api_keys
            .iter()
            .map(|k| (k.api_key, k.min_version, k.max_version)),
        include_unstable,
    )
}

/// [`negotiate`] over the peer's (api key, min version, max version)
/// entries, in the order listed, reading them once.
fn negotiate_ranges(
    ranges: impl Iterator<Item = (i16, i16, i16)>,
    include_unstable: bool,
) -> Negotiated {
    let mut result = Negotiated::default();
    // The first range the peer lists for each API we know.
    let mut advertised: BTreeMap<ApiKey, (i16, i16)> = BTreeMap::new();
    for (key, min, max) in ranges {
        match ApiKey::from_key(key) {
            Some(api) => {
                advertised.entry(api).or_insert((min, max));
            }
            None => result.unknown_to_us.push(key),
        }
    }
    for api in ApiKey::ALL {
        let our_max = if include_unstable {
            api.highest_version()
        } else {
            api.highest_stable_version()
        };
        match advertised.get(&api) {
            None => {
                result.unusable.insert(api, Unusable::NotAdvertised);
            }
            Some(&(peer_min, peer_max)) => {
                let low = peer_min.max(api.lowest_version());
                let high = peer_max.min(our_max);
                if low <= high {
                    result.versions.insert(api, high);
                } else {
                    result
                        .unusable
                        .insert(api, Unusable::NoCommonVersion { peer_min, peer_max });
                }
            }
        }
    }
    result
}

#[cfg(all(
    test,
    feature = "fetch",
    feature = "metadata",
    feature = "produce",
    feature = "vote"
))]
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

    #[test]
    fn a_long_peer_list_is_read_once() {
        // A hostile peer: every known key, listed after thousands of
        // unknown ones. Count the entries read, not the time taken.
        let pulled = std::cell::Cell::new(0usize);
        let entries = 20_000;
        let ranges = (0..entries).map(|i| {
            pulled.set(pulled.get() + 1);
            let key = if i < entries - 100 {
                30_000
            } else {
                i as i16 % 100
            };
            (key, 0, 5)
        });
        let result = negotiate_ranges(ranges, false);
        assert_eq!(pulled.get(), entries);
        let unknown = result.unknown_to_us.iter().filter(|&&key| key == 30_000);
        assert_eq!(unknown.count(), entries - 100);
        assert!(result.version(ApiKey::Produce).is_some());
    }

    #[test]
    fn the_first_entry_for_a_key_counts() {
        let peer = ApiVersionsResponse {
            api_keys: vec![
                range(ApiKey::Fetch.key(), 0, 4),
                range(ApiKey::Fetch.key(), 0, 9),
            ]
            .into(),
            ..Default::default()
        };
        let expected = (ApiKey::Fetch.lowest_version() <= 4).then_some(4);
        assert_eq!(negotiate(&peer, false).version(ApiKey::Fetch), expected);
    }
}
