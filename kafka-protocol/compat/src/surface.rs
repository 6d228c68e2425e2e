//! The surface: what each side advertises in ApiVersions, compared without
//! sending anything more. One case per api either side advertises
//! (`surface/api/<Api>`: its version range), per feature either side
//! supports (`surface/feature/supported/<name>`: its range) or has
//! finalized (`surface/feature/finalized/<name>`: its levels), and one for
//! the finalized features' epoch (`surface/feature/epoch`: present or
//! not; its value differs between any two clusters).

use std::collections::BTreeSet;

use kafka_wire::ApiKey;
use serde_json::{json, Value};

use crate::case::{Area, Case, Check, Facet};
use crate::normalize::normalize_surface;
use crate::side::Knowledge;

/// The surface's cases for the two sides' ApiVersions answers, in key and
/// name order; with `only` not empty, the api cases of those apis, and the
/// feature cases only if it holds ApiVersions.
pub fn cases(reference: &Knowledge, candidate: &Knowledge, only: &[ApiKey]) -> Vec<Case> {
    let wanted = |api: Option<ApiKey>| only.is_empty() || api.is_some_and(|a| only.contains(&a));
    let mut cases = Vec::new();
    let keys: BTreeSet<i16> = reference
        .versions
        .keys()
        .chain(candidate.versions.keys())
        .copied()
        .collect();
    for key in keys {
        let api = ApiKey::from_key(key);
        if !wanted(api) {
            continue;
        }
        let name = api.map_or_else(|| key.to_string(), |a| a.name().to_owned());
        cases.push(Case {
            name: format!("surface/api/{name}"),
            area: Area::Surface,
            api,
            version: None,
            check: Check::Surface(Facet::Api(key)),
        });
    }
    if !wanted(Some(ApiKey::ApiVersions)) {
        return cases;
    }
    for (list, make, kind) in [
        (
            "supportedFeatures",
            Facet::SupportedFeature as fn(String) -> Facet,
            "supported",
        ),
        ("finalizedFeatures", Facet::FinalizedFeature, "finalized"),
    ] {
        let names: BTreeSet<String> = [reference, candidate]
            .iter()
            .flat_map(|side| feature_names(&side.api_versions, list))
            .collect();
        for name in names {
            cases.push(Case {
                name: format!("surface/feature/{kind}/{name}"),
                area: Area::Surface,
                api: Some(ApiKey::ApiVersions),
                version: None,
                check: Check::Surface(make(name)),
            });
        }
    }
    cases.push(Case {
        name: "surface/feature/epoch".into(),
        area: Area::Surface,
        api: Some(ApiKey::ApiVersions),
        version: None,
        check: Check::Surface(Facet::FeaturesEpoch),
    });
    cases
}

fn feature_names(api_versions: &Value, list: &str) -> Vec<String> {
    api_versions[list]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["name"].as_str().map(str::to_owned))
        .collect()
}

/// What `side` advertises of `facet`, normalized; `None` when it
/// advertises nothing of it.
pub fn value(facet: &Facet, side: &Knowledge) -> Option<Value> {
    match facet {
        Facet::Api(key) => side
            .versions
            .get(key)
            .map(|(min, max)| json!({"minVersion": min, "maxVersion": max})),
        Facet::SupportedFeature(name) => feature(&side.api_versions, "supportedFeatures", name)
            .map(|f| json!({"minVersion": f["minVersion"], "maxVersion": f["maxVersion"]})),
        Facet::FinalizedFeature(name) => feature(&side.api_versions, "finalizedFeatures", name)
            .map(|f| {
                json!({"minVersionLevel": f["minVersionLevel"], "maxVersionLevel": f["maxVersionLevel"]})
            }),
        Facet::FeaturesEpoch => {
            let epoch = side.api_versions.get("finalizedFeaturesEpoch")?;
            let mut value = json!({"finalizedFeaturesEpoch": epoch});
            normalize_surface(&mut value);
            Some(value)
        }
    }
}

fn feature<'a>(api_versions: &'a Value, list: &str, name: &str) -> Option<&'a Value> {
    api_versions[list]
        .as_array()?
        .iter()
        .find(|f| f["name"].as_str() == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(answer: Value) -> Knowledge {
        let mut k = Knowledge::default();
        k.learn_api_versions(&answer);
        k
    }

    #[test]
    fn every_api_and_feature_either_side_advertises_is_a_case() {
        let reference = side(json!({
            "apiKeys": [{"apiKey": 0, "minVersion": 3, "maxVersion": 12},
                        {"apiKey": 18, "minVersion": 0, "maxVersion": 4}],
            "supportedFeatures": [{"name": "metadata.version", "minVersion": 7, "maxVersion": 27}],
            "finalizedFeaturesEpoch": 42,
            "finalizedFeatures": [{"name": "metadata.version", "maxVersionLevel": 27, "minVersionLevel": 27}]
        }));
        let candidate = side(json!({
            "apiKeys": [{"apiKey": 0, "minVersion": 3, "maxVersion": 11},
                        {"apiKey": 999, "minVersion": 0, "maxVersion": 0}],
            "finalizedFeaturesEpoch": 7
        }));
        let cases = cases(&reference, &candidate, &[]);
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "surface/api/Produce",
                "surface/api/ApiVersions",
                "surface/api/999",
                "surface/feature/supported/metadata.version",
                "surface/feature/finalized/metadata.version",
                "surface/feature/epoch"
            ]
        );
        let facet = |i: usize| match &cases[i].check {
            Check::Surface(f) => f.clone(),
            Check::Steps(_) => unreachable!(),
        };
        assert_eq!(
            value(&facet(0), &candidate),
            Some(json!({"minVersion": 3, "maxVersion": 11}))
        );
        assert_eq!(value(&facet(1), &candidate), None);
        assert_eq!(value(&facet(3), &candidate), None);
        assert_eq!(
            value(&facet(4), &reference),
            Some(json!({"minVersionLevel": 27, "maxVersionLevel": 27}))
        );
        // Two epochs of 0 or more are alike.
        assert_eq!(value(&facet(5), &reference), value(&facet(5), &candidate));
        let only = super::cases(&reference, &candidate, &[ApiKey::Produce]);
        assert_eq!(only.len(), 1);
    }
}
