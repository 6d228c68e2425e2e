//! The two sides of a comparison, and what each has told the run about
//! itself: its versions, brokers, topics, leaders and coordinators, as a
//! client learns them from ApiVersions, Metadata and FindCoordinator.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

/// Which side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The broker taken as right (Apache Kafka).
    Reference,
    /// The broker under test.
    Candidate,
}

impl Side {
    /// Both, reference first.
    pub const BOTH: [Side; 2] = [Side::Reference, Side::Candidate];

    /// 0 for the reference, 1 for the candidate.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `reference` or `candidate`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Reference => "reference",
            Side::Candidate => "candidate",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A broker, as Metadata lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    /// Its node id.
    pub id: i32,
    /// The host it advertises.
    pub host: String,
    /// The port it advertises.
    pub port: i64,
}

impl Broker {
    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// A topic, as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Topic {
    /// Its id, base64url as the JSON form writes uuids.
    pub id: Option<String>,
    /// Each partition's leader and leader epoch.
    pub partitions: BTreeMap<i64, (i64, i64)>,
}

/// Coordinator kinds, as FindCoordinator's `keyType` numbers them.
pub mod key_type {
    /// A consumer group (classic, KIP-848, streams).
    pub const GROUP: i64 = 0;
    /// A transactional id.
    pub const TRANSACTION: i64 = 1;
    /// A share group's state partition (`group:topicId:partition`).
    pub const SHARE: i64 = 2;
}

/// What one side has told the run about itself.
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    /// The ApiVersions answer of its bootstrap broker, in the JSON form.
    pub api_versions: Value,
    /// The versions it advertises: api key to (min, max).
    pub versions: BTreeMap<i16, (i16, i16)>,
    /// Its cluster id.
    pub cluster_id: Option<String>,
    /// Its brokers, by node id.
    pub brokers: BTreeMap<i64, Broker>,
    /// Its topics, by name.
    pub topics: BTreeMap<String, Topic>,
    /// Its coordinators: (key type, key) to node id.
    pub coordinators: BTreeMap<(i64, String), i64>,
}

impl Knowledge {
    /// Takes in an ApiVersions answer (the JSON form).
    pub fn learn_api_versions(&mut self, answer: &Value) {
        self.versions = answer["apiKeys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|key| {
                let api = i16::try_from(key["apiKey"].as_i64()?).ok()?;
                let min = i16::try_from(key["minVersion"].as_i64()?).ok()?;
                let max = i16::try_from(key["maxVersion"].as_i64()?).ok()?;
                Some((api, (min, max)))
            })
            .collect();
        self.api_versions = answer.clone();
    }

    /// Takes in a Metadata answer: its brokers (when it lists any), cluster
    /// id, and each topic answered without an error, with the partitions
    /// that have a leader.
    pub fn learn_metadata(&mut self, answer: &Value) {
        let brokers: BTreeMap<i64, Broker> = answer["brokers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| {
                let id = b["nodeId"].as_i64()?;
                Some((
                    id,
                    Broker {
                        id: i32::try_from(id).ok()?,
                        host: b["host"].as_str()?.to_owned(),
                        port: b["port"].as_i64()?,
                    },
                ))
            })
            .collect();
        if !brokers.is_empty() {
            self.brokers = brokers;
        }
        if let Some(id) = answer["clusterId"].as_str() {
            self.cluster_id = Some(id.to_owned());
        }
        for topic in answer["topics"].as_array().into_iter().flatten() {
            let (Some(name), Some(0)) = (topic["name"].as_str(), topic["errorCode"].as_i64())
            else {
                continue;
            };
            let entry = self.topics.entry(name.to_owned()).or_default();
            if let Some(id) = topic["topicId"].as_str() {
                entry.id = Some(id.to_owned());
            }
            for partition in topic["partitions"].as_array().into_iter().flatten() {
                let (Some(index), Some(leader)) = (
                    partition["partitionIndex"].as_i64(),
                    partition["leaderId"].as_i64(),
                ) else {
                    continue;
                };
                if partition["errorCode"].as_i64() == Some(0) && leader >= 0 {
                    let epoch = partition["leaderEpoch"].as_i64().unwrap_or(-1);
                    entry.partitions.insert(index, (leader, epoch));
                }
            }
        }
    }

    /// Takes in a CreateTopics answer: the id of each topic created (or,
    /// validate-only, the id it would have had).
    pub fn learn_created_topics(&mut self, answer: &Value) {
        for topic in answer["topics"].as_array().into_iter().flatten() {
            if let (Some(name), Some(0), Some(id)) = (
                topic["name"].as_str(),
                topic["errorCode"].as_i64(),
                topic["topicId"].as_str(),
            ) {
                self.topics.entry(name.to_owned()).or_default().id = Some(id.to_owned());
            }
        }
    }

    /// Takes in a FindCoordinator answer to `request` (both JSON forms),
    /// of any version: the one key of v0-v3, or each of v4's.
    pub fn learn_coordinator(&mut self, request: &Value, answer: &Value) {
        let key_type = request["keyType"].as_i64().unwrap_or(key_type::GROUP);
        if let Some(coordinators) = answer["coordinators"].as_array() {
            for found in coordinators {
                if let (Some(key), Some(0), Some(node)) = (
                    found["key"].as_str(),
                    found["errorCode"].as_i64(),
                    found["nodeId"].as_i64(),
                ) {
                    self.coordinators.insert((key_type, key.to_owned()), node);
                }
            }
        }
        if let (Some(key), Some(0), Some(node)) = (
            request["key"].as_str(),
            answer["errorCode"].as_i64(),
            answer["nodeId"].as_i64(),
        ) {
            self.coordinators.insert((key_type, key.to_owned()), node);
        }
    }

    /// The leader of a partition.
    pub fn leader(&self, topic: &str, partition: i64) -> Option<i64> {
        self.topics
            .get(topic)?
            .partitions
            .get(&partition)
            .map(|&(leader, _)| leader)
    }

    /// The name of the topic whose id is `id`.
    pub fn topic_named_by_id(&self, id: &str) -> Option<&str> {
        self.topics
            .iter()
            .find(|(_, topic)| topic.id.as_deref() == Some(id))
            .map(|(name, _)| name.as_str())
    }

    /// Whether `node` is one of its brokers.
    pub fn is_broker(&self, node: i64) -> bool {
        self.brokers.contains_key(&node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_side_learns_as_a_client_does() {
        let mut k = Knowledge::default();
        k.learn_metadata(&json!({
            "brokers": [{"nodeId": 2, "host": "h", "port": 9092, "rack": null}],
            "clusterId": "c",
            "topics": [
                {"errorCode": 0, "name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [
                    {"errorCode": 0, "partitionIndex": 0, "leaderId": 2, "leaderEpoch": 4},
                    {"errorCode": 5, "partitionIndex": 1, "leaderId": -1, "leaderEpoch": 0}
                ]},
                {"errorCode": 3, "name": "u", "partitions": []}
            ]
        }));
        assert_eq!(k.leader("t", 0), Some(2));
        assert_eq!(k.leader("t", 1), None);
        assert!(!k.topics.contains_key("u"));
        assert_eq!(k.topic_named_by_id("AAAAAAAAAAAAAAAAAAAAAQ"), Some("t"));
        assert_eq!(k.brokers[&2].address(), "h:9092");
        assert_eq!(k.cluster_id.as_deref(), Some("c"));
        // A Metadata answer listing no brokers keeps the ones known.
        k.learn_metadata(&json!({"brokers": [], "topics": []}));
        assert!(k.is_broker(2));

        k.learn_coordinator(
            &json!({"key": "g", "keyType": 0}),
            &json!({"errorCode": 0, "nodeId": 2}),
        );
        k.learn_coordinator(
            &json!({"keyType": 1, "coordinatorKeys": ["x", "y"]}),
            &json!({"coordinators": [
                {"key": "x", "nodeId": 2, "errorCode": 0},
                {"key": "y", "nodeId": -1, "errorCode": 15}
            ]}),
        );
        assert_eq!(k.coordinators.get(&(0, "g".into())), Some(&2));
        assert_eq!(k.coordinators.get(&(1, "x".into())), Some(&2));
        assert_eq!(k.coordinators.get(&(1, "y".into())), None);
    }
}
