//! Version negotiation: from a peer's ApiVersions response and the versions
//! this crate supports, the highest version each side can use per API.

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

/// The outcome of negotiation: for each API this crate knows, the version
/// to use or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// One outcome per API, in the order of [`ApiKey::ALL`] (by key).
    outcomes: Vec<Result<i16, Unusable>>,
    /// Keys the peer listed that this crate does not know.
    pub unknown_to_us: Vec<i16>,
}

impl Negotiated {
    /// The version to use for `api`, if any.
    pub fn version(&self, api: ApiKey) -> Option<i16> {
        self.outcome(api).ok()
    }

    /// Why `api` cannot be used with the peer, if it cannot.
    pub fn unusable(&self, api: ApiKey) -> Option<Unusable> {
        self.outcome(api).err()
    }

    /// The APIs that can be used, by key, each with its version.
    pub fn versions(&self) -> impl Iterator<Item = (ApiKey, i16)> + '_ {
        self.each()
            .filter_map(|(api, outcome)| outcome.ok().map(|version| (api, version)))
    }

    /// The APIs that cannot be used, by key, each with the reason.
    pub fn unusable_apis(&self) -> impl Iterator<Item = (ApiKey, Unusable)> + '_ {
        self.each()
            .filter_map(|(api, outcome)| outcome.err().map(|why| (api, why)))
    }

    fn outcome(&self, api: ApiKey) -> Result<i16, Unusable> {
        // `outcomes` holds one entry per API of `ApiKey::ALL`.
        let outcome = self.outcomes.get(position(api)).copied();
        outcome.unwrap_or(Err(Unusable::NotAdvertised))
    }

    fn each(&self) -> impl Iterator<Item = (ApiKey, Result<i16, Unusable>)> + '_ {
        ApiKey::ALL.into_iter().zip(self.outcomes.iter().copied())
    }
}

/// Where `api` is in [`ApiKey::ALL`], which lists every API once, by key.
fn position(api: ApiKey) -> usize {
    ApiKey::ALL.partition_point(|&known| known < api)
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
    // The first range the peer lists for each API we know.
    let mut advertised: Vec<Option<(i16, i16)>> = vec![None; ApiKey::COUNT];
    let mut unknown_to_us = Vec::new();
    for (key, min, max) in ranges {
        match ApiKey::from_key(key) {
            Some(api) => {
                advertised[position(api)].get_or_insert((min, max));
            }
            None => unknown_to_us.push(key),
        }
    }
    let outcomes = ApiKey::ALL
        .into_iter()
        .zip(advertised)
        .map(|(api, range)| {
            let (peer_min, peer_max) = range.ok_or(Unusable::NotAdvertised)?;
            let our_max = if include_unstable {
                api.highest_version()
            } else {
                api.highest_stable_version()
            };
            let low = peer_min.max(api.lowest_version());
            let high = peer_max.min(our_max);
            if low <= high {
                Ok(high)
            } else {
                Err(Unusable::NoCommonVersion { peer_min, peer_max })
            }
        })
        .collect();
    Negotiated {
        outcomes,
        unknown_to_us,
    }
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
            result.unusable(ApiKey::Vote),
            Some(Unusable::NoCommonVersion {
                peer_min: 7,
                peer_max: 9
            })
        );
        assert_eq!(
            result.unusable(ApiKey::Metadata),
            Some(Unusable::NotAdvertised)
        );
        assert_eq!(result.unknown_to_us, vec![999]);
        // Every API we know is in exactly one of the two lists, by key.
        let usable: Vec<ApiKey> = result.versions().map(|(api, _)| api).collect();
        assert!(usable.contains(&ApiKey::Produce) && !usable.contains(&ApiKey::Vote));
        let mut every: Vec<ApiKey> = usable;
        every.extend(result.unusable_apis().map(|(api, _)| api));
        every.sort();
        assert_eq!(every, ApiKey::ALL);
        assert!(result
            .versions()
            .all(|(api, version)| result.version(api) == Some(version)));
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
