//! Redacting secrets from the JSON form of requests and responses, for
//! every tool that logs Kafka traffic (the `kafka-protocol proxy` log, the
//! `kafka-protocol pcap` reader): the one list of secret fields and the one
//! marker, `<redacted: N bytes>`.
//!
//! ```
//! use kafka_wire::ApiKey;
//! use kafka_wire_proxy::redact::{redact, secret_fields};
//!
//! let mut body = serde_json::json!({"authBytes": "AGFsaWNlAGh1bnRlcjI="});
//! redact(&mut body, secret_fields(ApiKey::SaslAuthenticate).0);
//! assert_eq!(body["authBytes"], "<redacted: 14 bytes>");
//! ```

use std::collections::HashMap;
use std::sync::OnceLock;

use kafka_wire::ApiKey;
use serde_json::Value;

/// The fields that hold secrets, by api: request fields, then response
/// fields (JSON names, at any depth). SASL tokens carry a PLAIN password or
/// a SCRAM proof, SCRAM credentials a salted password, delegation tokens
/// their HMAC.
pub fn secret_fields(api: ApiKey) -> (&'static [&'static str], &'static [&'static str]) {
    match api {
        ApiKey::SaslAuthenticate => (&["authBytes"], &["authBytes"]),
        ApiKey::AlterUserScramCredentials => (&["salt", "saltedPassword"], &[]),
        ApiKey::CreateDelegationToken => (&[], &["hmac"]),
        ApiKey::RenewDelegationToken | ApiKey::ExpireDelegationToken => (&["hmac"], &[]),
        ApiKey::DescribeDelegationToken => (&[], &["hmac"]),
        // A forwarded request and its answer, whole: they may hold any of
        // the above.
        ApiKey::Envelope => (&["requestData"], &["responseData"]),
        _ => (&[], &[]),
    }
}

/// The text that stands for a secret of `bytes` bytes.
pub fn marker(bytes: usize) -> String {
    format!("<redacted: {bytes} bytes>")
}

/// Replaces every field named in `fields`, at any depth, by
/// [`marker`], which gives only the size of the secret (base64 text: its
/// decoded size).
pub fn redact(value: &mut Value, fields: &[&str]) {
    if fields.is_empty() {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if fields.contains(&key.as_str()) {
                    if let Value::String(text) = field {
                        let bytes = text.trim_end_matches('=').len() * 3 / 4;
                        *field = Value::from(marker(bytes));
                    }
                } else {
                    redact(field, fields);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| redact(item, fields)),
        _ => {}
    }
}

/// Whether [`redact_exchange`] may change an exchange of `api`: one with
/// secret fields, or one of the configuration apis it hides values in.
/// Every other api's JSON form can be written straight from the body.
pub fn redacts(api: ApiKey) -> bool {
    let (in_request, in_response) = secret_fields(api);
    !in_request.is_empty()
        || !in_response.is_empty()
        || matches!(
            api,
            ApiKey::AlterConfigs
                | ApiKey::IncrementalAlterConfigs
                | ApiKey::DescribeConfigs
                | ApiKey::CreateTopics
        )
}

/// Redacts the secret fields of `api` in a request's JSON body and its
/// response's, and the configuration values Kafka's own request log hides
/// (see [`config_value_hidden`]).
pub fn redact_exchange(api: ApiKey, request: &mut Value, response: &mut Value) {
    let (in_request, in_response) = secret_fields(api);
    redact(request, in_request);
    redact(response, in_response);
    // The apis of `redacts`.
    match api {
        ApiKey::AlterConfigs | ApiKey::IncrementalAlterConfigs => {
            redact_resource_configs(&mut request["resources"]);
        }
        ApiKey::DescribeConfigs => redact_resource_configs(&mut response["results"]),
        ApiKey::CreateTopics => {
            for body in [request, response] {
                for topic in items(&mut body["topics"]) {
                    redact_configs(&mut topic["configs"], TOPIC);
                }
            }
        }
        _ => {}
    }
}

/// The id of the TOPIC resource type (`ConfigResource.Type`).
const TOPIC: i64 = 2;

/// The elements of a JSON array, none for anything else.
fn items(value: &mut Value) -> impl Iterator<Item = &mut Value> {
    value.as_array_mut().into_iter().flatten()
}

/// Redacts the hidden values of resources shaped as Kafka's config APIs
/// shape them: `[{"resourceType": T, "configs": [{"name", "value",
/// "synonyms"?}]}]`.
fn redact_resource_configs(resources: &mut Value) {
    for resource in items(resources) {
        let resource_type = resource["resourceType"].as_i64().unwrap_or(0);
        redact_configs(&mut resource["configs"], resource_type);
    }
}

/// Replaces each hidden `value` in `configs` (and in their `synonyms`) by
/// the marker, with the value's size.
fn redact_configs(configs: &mut Value, resource_type: i64) {
    let resource_type = i8::try_from(resource_type).unwrap_or(0);
    for config in items(configs) {
        hide_value(config, resource_type);
        for synonym in items(&mut config["synonyms"]) {
            hide_value(synonym, resource_type);
        }
    }
}

fn hide_value(config: &mut Value, resource_type: i8) {
    let hidden = match (&config["name"], &config["value"]) {
        (Value::String(name), Value::String(_)) => config_value_hidden(resource_type, name),
        _ => false,
    };
    if hidden {
        let size = config["value"].as_str().map_or(0, str::len);
        config["value"] = Value::from(marker(size));
    }
}

/// Whether Kafka's broker hides the value of configuration `name` of a
/// resource of `resource_type` (a `ConfigResource.Type` id) when it logs a
/// request, as Kafka 4.4.0's `AbstractKafkaConfig.loggableValue` decides:
///
/// - a broker's (4) configuration is hidden when Kafka does not know it, or
///   it is of password type; a listener's override
///   `listener.name.L.NAME` (or `listener.name.L.MECHANISM.NAME` for the
///   per-mechanism SASL settings) counts as NAME;
/// - a topic's (2) or a group's (32) is hidden when Kafka does not know it
///   as one, or it is of password type;
/// - a broker logger's (8) and client metrics' (16) are shown;
/// - every other resource type's is hidden.
///
/// The names and types are Kafka 4.4.0's, in `configs.tsv`, written by
/// `tests/java/facts/ConfigFacts.java` (a test checks them against Kafka's
/// jars).
pub fn config_value_hidden(resource_type: i8, name: &str) -> bool {
    let facts = ConfigFacts::get();
    let sensitive = |kind: &HashMap<&str, &str>, name: &str| {
        kind.get(name)
            .is_none_or(|&config_type| config_type == "PASSWORD")
    };
    match resource_type {
        4 => match facts.dynamic.get(name) {
            // A dynamic broker configuration, by its exact name.
            Some(&config_type) if !facts.broker.contains_key(name) => config_type == "PASSWORD",
            _ => sensitive(&facts.broker, broker_synonym(facts, name)),
        },
        2 => sensitive(&facts.topic, name),
        32 => sensitive(&facts.group, name),
        8 | 16 => false,
        _ => true,
    }
}

/// The name a broker configuration's type is looked up by in the broker's
/// own definitions: the name itself when they hold it, else, for a
/// listener's override (`listener.name.L.REST`), the per-mechanism setting
/// REST ends with, or REST. (The dynamic configurations count by their
/// exact names only.)
fn broker_synonym<'a>(facts: &ConfigFacts, name: &'a str) -> &'a str {
    if facts.broker.contains_key(name) {
        return name;
    }
    let Some(rest) = name
        .strip_prefix("listener.name.")
        .and_then(|listener_and_rest| listener_and_rest.split_once('.'))
        .map(|(_listener, rest)| rest)
    else {
        return name;
    };
    facts
        .mechanism
        .iter()
        .find(|config| rest.ends_with(*config))
        .map_or(rest, |config| &rest[rest.len() - config.len()..])
}

/// Kafka's configuration names and types, by resource kind.
struct ConfigFacts {
    /// The broker's own definitions.
    broker: HashMap<&'static str, &'static str>,
    /// The dynamic broker configurations.
    dynamic: HashMap<&'static str, &'static str>,
    topic: HashMap<&'static str, &'static str>,
    group: HashMap<&'static str, &'static str>,
    mechanism: Vec<&'static str>,
}

impl ConfigFacts {
    fn get() -> &'static ConfigFacts {
        static FACTS: OnceLock<ConfigFacts> = OnceLock::new();
        FACTS.get_or_init(|| {
            let mut facts = ConfigFacts {
                broker: HashMap::new(),
                dynamic: HashMap::new(),
                topic: HashMap::new(),
                group: HashMap::new(),
                mechanism: Vec::new(),
            };
            let lines = include_str!("configs.tsv")
                .lines()
                .filter(|line| !line.starts_with('#'));
            for line in lines {
                let mut fields = line.split('\t');
                let (Some(kind), Some(name), Some(config_type)) =
                    (fields.next(), fields.next(), fields.next())
                else {
                    continue;
                };
                match kind {
                    "broker" => drop(facts.broker.insert(name, config_type)),
                    "dynamic" => drop(facts.dynamic.insert(name, config_type)),
                    "topic" => drop(facts.topic.insert(name, config_type)),
                    "group" => drop(facts.group.insert(name, config_type)),
                    "mechanism" => facts.mechanism.push(name),
                    _ => {}
                }
            }
            facts
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn configs_are_hidden_by_kafkas_rule() {
        for (resource_type, name, hidden) in [
            (4, "ssl.keystore.password", true),
            (4, "sasl.jaas.config", true),
            (4, "log.retention.hours", false),
            (4, "no.such.config", true),
            (4, "listener.name.internal.ssl.keystore.password", true),
            (4, "listener.name.internal.ssl.keystore.type", false),
            (
                4,
                "listener.name.internal.scram-sha-256.sasl.jaas.config",
                true,
            ),
            (4, "listener.name.internal.plain.sasl.login.class", false),
            (4, "listener.name.internal.plain.ssl.keystore.type", true),
            (4, "listener.name..ssl.keystore.type", false),
            (4, "plain.sasl.login.class", true),
            (2, "retention.ms", false),
            (2, "ssl.keystore.password", true),
            (32, "consumer.session.timeout.ms", false),
            (32, "no.such.config", true),
            (8, "kafka.server", false),
            (16, "anything", false),
            (0, "retention.ms", true),
        ] {
            assert_eq!(
                config_value_hidden(resource_type, name),
                hidden,
                "{resource_type} {name}"
            );
        }
    }

    #[test]
    fn config_values_are_redacted_where_configs_are_logged() {
        let mut request = json!({"resources": [
            {"resourceType": 4, "resourceName": "1", "configs": [
                {"name": "sasl.jaas.config", "value": "secret-jaas"},
                {"name": "log.retention.hours", "value": "24"},
                {"name": "ssl.keystore.password", "value": null}
            ]},
            {"resourceType": 32, "resourceName": "g", "configs": [
                {"name": "no.such", "configOperation": 0, "value": "x"}
            ]}
        ]});
        let mut response = json!({});
        redact_exchange(ApiKey::IncrementalAlterConfigs, &mut request, &mut response);
        let configs = &request["resources"][0]["configs"];
        assert_eq!(configs[0]["value"], "<redacted: 11 bytes>");
        assert_eq!(configs[1]["value"], "24");
        assert_eq!(configs[2]["value"], Value::Null);
        assert_eq!(
            request["resources"][1]["configs"][0]["value"],
            "<redacted: 1 bytes>"
        );

        let mut response = json!({"results": [{"resourceType": 4, "configs": [
            {"name": "ssl.key.password", "value": "pw", "synonyms": [
                {"name": "listener.name.a.ssl.key.password", "value": "pw2"}
            ]}
        ]}]});
        redact_exchange(ApiKey::DescribeConfigs, &mut json!({}), &mut response);
        let config = &response["results"][0]["configs"][0];
        assert_eq!(config["value"], "<redacted: 2 bytes>");
        assert_eq!(config["synonyms"][0]["value"], "<redacted: 3 bytes>");

        let mut request = json!({"topics": [{"name": "t", "configs": [
            {"name": "retention.ms", "value": "1"},
            {"name": "sasl.jaas.config", "value": "x"}
        ]}]});
        redact_exchange(ApiKey::CreateTopics, &mut request, &mut json!({}));
        assert_eq!(request["topics"][0]["configs"][0]["value"], "1");
        assert_eq!(
            request["topics"][0]["configs"][1]["value"],
            "<redacted: 1 bytes>"
        );

        let mut request = json!({"requestData": "AAECAwQ=", "clientHostAddress": "AQID"});
        let mut response = json!({"responseData": "AAEC", "errorCode": 0});
        redact_exchange(ApiKey::Envelope, &mut request, &mut response);
        assert_eq!(request["requestData"], "<redacted: 5 bytes>");
        assert_eq!(response["responseData"], "<redacted: 3 bytes>");
    }
}
