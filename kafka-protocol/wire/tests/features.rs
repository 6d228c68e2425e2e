//! kafka-wire's features match its schemas: one feature per API of
//! `messages/`, named as the generator names it (`feature = "{api}"` in
//! `codegen.rs`), documented with its api key and listeners, and none
//! besides but those of `features.rs`, which the build script takes for
//! the ones that are not an API's; `client-apis` and `controller-apis`
//! enable exactly the APIs of the `broker` and `controller` listeners.
//!
//! Should an API's name ever be one of the other features, the rule is that
//! the other feature keeps its name and the API's gets `-api` after it
//! (`json-api`), which `codegen.rs` would then have to say; no API's is
//! today, and this test says so when one is.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use kafka_codegen::emit::api_name;
use kafka_codegen::model::MessageKind;

#[path = "../features.rs"]
mod features;

/// One feature of `Cargo.toml`.
#[derive(Debug)]
struct Feature {
    name: String,
    /// What it enables.
    enables: Vec<String>,
    /// Its `##` lines, without the `##`.
    doc: Vec<String>,
}

/// The `[features]` table of a manifest, in order. It reads only what that
/// table uses: `## doc` and `# comment` lines, and `name = [..]` with
/// quoted strings, over one line or several. Anything else is an error.
fn parse_features(manifest: &str) -> Result<Vec<Feature>, String> {
    let mut lines = manifest.lines().enumerate();
    lines
        .by_ref()
        .find(|(_, line)| line.trim() == "[features]")
        .ok_or("no [features] table")?;
    let mut features = Vec::new();
    let mut doc = Vec::new();
    while let Some((number, line)) = lines.next() {
        let line = line.trim();
        if line.starts_with('[') {
            break;
        }
        if let Some(text) = line.strip_prefix("##") {
            doc.push(text.trim().to_owned());
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            doc.clear();
            continue;
        }
        let at = |what: &str| format!("Cargo.toml:{}: {what}: {line}", number + 1);
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| at("not `name = [..]`"))?;
        let mut value = value.trim().to_owned();
        if !value.starts_with('[') {
            return Err(at("not a list"));
        }
        while !value.ends_with(']') {
            let (_, more) = lines.next().ok_or_else(|| at("a list without its `]`"))?;
            value.push_str(more.trim());
        }
        let items = &value[1..value.len() - 1];
        let enables = items
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                item.strip_prefix('"')
                    .and_then(|item| item.strip_suffix('"'))
                    .map(str::to_owned)
                    .ok_or_else(|| at("an item that is not a quoted string"))
            })
            .collect::<Result<_, _>>()?;
        features.push(Feature {
            name: name.trim().to_owned(),
            enables,
            doc: std::mem::take(&mut doc),
        });
    }
    Ok(features)
}

/// One API of the schemas.
struct Api {
    /// Its feature: the request's name without `Request`, in kebab-case.
    feature: String,
    /// The doc line its feature has.
    doc: String,
    listeners: Vec<String>,
}

/// Every API that `messages/` defines (a request with at least one valid
/// version), by feature name.
fn apis(package: &Path) -> Vec<Api> {
    let mut config = kafka_codegen::Config::new();
    let set = config
        .schema_dir(package.join("messages"))
        .load()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut apis: Vec<Api> = set
        .schemas
        .iter()
        .filter(|s| s.kind == MessageKind::Request && !s.valid_versions.is_empty())
        .map(|request| {
            let name = request
                .name
                .strip_suffix("Request")
                .unwrap_or(&request.name);
            let key = request
                .api_key
                .map_or(String::new(), |k| format!("api key {k}"));
            let mut listeners = request.listeners.clone();
            listeners.sort();
            let served = listeners.join(" and ");
            let about = [key, served].into_iter().filter(|s| !s.is_empty());
            Api {
                feature: api_name(&request.name),
                doc: format!("{name} ({}).", about.collect::<Vec<_>>().join(", ")),
                listeners,
            }
        })
        .collect();
    apis.sort_by(|a, b| a.feature.cmp(&b.feature));
    apis
}

/// What the manifest should say for `api`.
fn expected_lines(api: &Api) -> String {
    format!("## {}\n{} = []", api.doc, api.feature)
}

/// The manifest's features, and the schemas' APIs.
fn read() -> (Vec<Feature>, Vec<Api>) {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    // A published package keeps the manifest as written, comments and all,
    // in Cargo.toml.orig; its Cargo.toml is cargo's rewrite.
    let orig = package.join("Cargo.toml.orig");
    let manifest = if orig.exists() {
        orig
    } else {
        package.join("Cargo.toml")
    };
    let text =
        fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let features = parse_features(&text).unwrap_or_else(|e| panic!("{e}"));
    (features, apis(package))
}

#[test]
fn there_is_one_feature_per_api_and_none_besides() {
    let (features, apis) = read();
    for api in &apis {
        assert!(
            !features::NOT_APIS.contains(&api.feature.as_str()),
            "the API feature `{}` is also one of features.rs's other features: give the API's \
             `-api` after its name, in Cargo.toml and codegen.rs",
            api.feature
        );
    }
    let declared: Vec<&Feature> = features
        .iter()
        .filter(|f| !features::NOT_APIS.contains(&f.name.as_str()))
        .collect();
    let names: BTreeSet<&str> = declared.iter().map(|f| f.name.as_str()).collect();
    let wanted: BTreeSet<&str> = apis.iter().map(|a| a.feature.as_str()).collect();
    let missing: Vec<String> = apis
        .iter()
        .filter(|a| !names.contains(a.feature.as_str()))
        .map(expected_lines)
        .collect();
    let extra: Vec<&&str> = names.difference(&wanted).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "Cargo.toml's API features differ from the APIs of messages/.\nMissing (add, in \
         alphabetical order):\n{}\nNot an API of messages/ (remove, or add to features.rs if it is \
         not meant as an API's): {extra:?}",
        missing.join("\n")
    );
    let order: Vec<&str> = declared.iter().map(|f| f.name.as_str()).collect();
    let sorted: Vec<&str> = names.iter().copied().collect();
    assert_eq!(order, sorted, "the API features are in alphabetical order");
    for (feature, api) in declared.iter().zip(&apis) {
        assert!(
            feature.enables.is_empty(),
            "`{}` enables {:?}: an API's feature enables nothing",
            feature.name,
            feature.enables
        );
        assert_eq!(
            feature.doc,
            std::slice::from_ref(&api.doc),
            "the doc line of `{}`",
            feature.name
        );
    }
    // Every feature that features.rs names is declared, so that the build
    // script's list is the manifest's.
    for name in features::NOT_APIS {
        assert!(
            features.iter().any(|f| f.name == *name),
            "features.rs names `{name}`, which Cargo.toml does not declare"
        );
    }
}

#[test]
fn the_listener_features_enable_the_apis_of_their_listeners() {
    let (features, apis) = read();
    let enables = |name: &str| {
        features
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.enables.clone())
            .unwrap_or_else(|| panic!("no feature `{name}`"))
    };
    for (feature, listener) in [("client-apis", "broker"), ("controller-apis", "controller")] {
        let served: Vec<String> = apis
            .iter()
            .filter(|a| a.listeners.iter().any(|l| l == listener))
            .map(|a| a.feature.clone())
            .collect();
        let listed = enables(feature);
        let missing: Vec<&String> = served.iter().filter(|a| !listed.contains(a)).collect();
        let extra: Vec<&String> = listed.iter().filter(|a| !served.contains(a)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "`{feature}` enables the features of the APIs the `{listener}` listener serves: \
             missing {missing:?}, not served there {extra:?}"
        );
        assert_eq!(
            listed, served,
            "`{feature}` lists them in alphabetical order"
        );
    }
    assert_eq!(
        enables("all-apis"),
        ["client-apis", "controller-apis", "metadata-records"]
    );
    assert_eq!(enables("default"), ["all-apis"]);
}

#[test]
fn the_manifest_reader_refuses_what_it_does_not_know() {
    let features =
        parse_features("[features]\n## Doc.\na = [\n  \"b\",\n]\n# Not a doc.\nc = []\n[x]\n")
            .unwrap_or_else(|e| panic!("{e}"));
    let summary: Vec<(&str, &[String], &[String])> = features
        .iter()
        .map(|f| (f.name.as_str(), &f.enables[..], &f.doc[..]))
        .collect();
    assert_eq!(
        summary,
        [
            ("a", &["b".to_owned()][..], &["Doc.".to_owned()][..]),
            ("c", &[][..], &[][..])
        ]
    );
    for bad in [
        "[features]\na = \"b\"\n",
        "[features]\na = [b]\n",
        "[features]\na = [\n",
        "x",
    ] {
        assert!(parse_features(bad).is_err(), "{bad:?}");
    }
}
