//! `kafka-protocol pcap --summary`: counters over what a capture holds,
//! in memory bounded whatever its size.
//!
//! - exchanges per api and version;
//! - latency per api, p50 and p99, from a log-linear histogram (exact below
//!   128 µs, within 1/64 above: a percentile is its bucket's lower bound);
//! - bytes per client id: the request and response frames of its
//!   exchanges, size prefixes included;
//! - bytes per topic: the records of Produce requests (`producedBytes`) and
//!   of Fetch responses (`fetchedBytes`), each partition's records blob as
//!   sent; a topic sent by id only (Produce v13, Fetch v13 and later) is
//!   named from the Metadata responses seen before it, else by its id;
//! - error codes by api: every `errorCode` field of a response's JSON
//!   form, at any depth (top level, per topic, per partition), that is not
//!   0;
//! - events by kind.
//!
//! At most [`MAX_TRACKED`] distinct client ids and topics are counted on
//! their own (and as many topic ids named); the rest are added up as
//! "other".

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use kafka_wire::{ApiKey, ErrorCode};
use kafka_wire_capture::{EventKind, Exchange, JsonOptions};
use serde_json::{json, Map, Value};

use super::Found;

/// The most client ids, and topics, counted apart.
pub const MAX_TRACKED: usize = 10_000;

/// The JSON form of the zero uuid, which stands for no topic id.
const ZERO_UUID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// Latencies below this many microseconds have a bucket each.
const EXACT: u64 = 128;
/// Above [`EXACT`], each power of two is split into `1 << SUB_BITS` buckets.
const SUB_BITS: u32 = 6;

/// A latency histogram: counts per bucket, grown to the largest bucket
/// used (at most 3,776 of them).
#[derive(Debug, Default)]
struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Histogram {
    fn bucket(value: u64) -> usize {
        if value < EXACT {
            return value as usize;
        }
        let exponent = u64::from(63 - value.leading_zeros());
        let sub = (value >> (exponent - u64::from(SUB_BITS))) & ((1 << SUB_BITS) - 1);
        (EXACT + (exponent - 7) * (1 << SUB_BITS) + sub) as usize
    }

    /// The smallest value of bucket `index`.
    fn lower_bound(index: usize) -> u64 {
        let index = index as u64;
        if index < EXACT {
            return index;
        }
        let exponent = (index - EXACT) / (1 << SUB_BITS) + 7;
        let sub = (index - EXACT) % (1 << SUB_BITS);
        ((1 << SUB_BITS) + sub) << (exponent - u64::from(SUB_BITS))
    }

    fn add(&mut self, micros: i64) {
        let bucket = Self::bucket(u64::try_from(micros).unwrap_or(0));
        if self.counts.len() <= bucket {
            self.counts.resize(bucket + 1, 0);
        }
        self.counts[bucket] += 1;
        self.total += 1;
    }

    /// The `percent`-th percentile by nearest rank: the lower bound of the
    /// bucket holding the value of rank ceil(percent × total / 100).
    fn percentile(&self, percent: u64) -> Option<u64> {
        let rank = (percent * self.total).div_ceil(100).max(1);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Some(Self::lower_bound(index));
            }
        }
        None
    }
}

/// A map that keeps at most [`MAX_TRACKED`] keys, adding up the values of
/// any other key in `other`.
#[derive(Debug)]
struct Capped<K, V> {
    map: HashMap<K, V>,
    other: V,
}

impl<K: Eq + Hash, V: Default> Default for Capped<K, V> {
    fn default() -> Self {
        Capped {
            map: HashMap::new(),
            other: V::default(),
        }
    }
}

impl<K: Eq + Hash, V: Default> Capped<K, V> {
    /// The counters of `key`, or the others' when the map is full.
    fn entry(&mut self, key: K) -> &mut V {
        if self.map.len() < MAX_TRACKED || self.map.contains_key(&key) {
            self.map.entry(key).or_default()
        } else {
            &mut self.other
        }
    }
}

/// A client id's counters.
#[derive(Debug, Default, Clone, Copy)]
struct ClientCount {
    exchanges: u64,
    bytes: u64,
}

/// A topic's counters.
#[derive(Debug, Default, Clone, Copy)]
struct TopicCount {
    produced: u64,
    fetched: u64,
}

/// What `--summary` counts.
#[derive(Debug, Default)]
pub struct Summary {
    exchanges: u64,
    sasl_tokens: u64,
    /// By api key and version.
    versions: BTreeMap<(i16, i16), u64>,
    /// By api key.
    latency: BTreeMap<i16, Histogram>,
    clients: Capped<Option<String>, ClientCount>,
    topics: Capped<String, TopicCount>,
    /// Topic names by topic id (the JSON form, base64url), from Metadata.
    topic_names: HashMap<String, String>,
    /// By api key and error code.
    errors: BTreeMap<(i16, i16), u64>,
    events: [u64; EventKind::ALL.len()],
}

impl Summary {
    /// Counts one thing found.
    pub fn add(&mut self, found: &Found) {
        match found {
            Found::Exchange(exchange) => self.exchange(exchange),
            Found::SaslToken(_) => self.sasl_tokens += 1,
            Found::Event(event) => {
                if let Some(i) = EventKind::ALL.iter().position(|k| *k == event.kind) {
                    self.events[i] += 1;
                }
            }
        }
    }

    fn exchange(&mut self, exchange: &Exchange) {
        let key = exchange.api.key();
        self.exchanges += 1;
        *self.versions.entry((key, exchange.version)).or_default() += 1;
        if let Some(micros) = exchange.latency_us() {
            self.latency.entry(key).or_default().add(micros);
        }
        let response_len = exchange.response.as_ref().map_or(0, |r| r.frame.len() + 4);
        let bytes = exchange.request.len() + 4 + response_len;
        let client = self.clients.entry(exchange.client_id.clone());
        client.exchanges += 1;
        client.bytes += bytes as u64;

        let json = exchange.to_json(&JsonOptions::default());
        let (request, response) = (&json["request"], &json["response"]);
        self.errors_in(key, response);
        match exchange.api {
            ApiKey::Metadata => self.learn_topic_ids(response),
            ApiKey::Produce => {
                self.count_records(&request["topicData"], "name", "partitionData", true);
            }
            ApiKey::Fetch => {
                self.count_records(&response["responses"], "topic", "partitions", false);
            }
            _ => {}
        }
    }

    /// Counts every `errorCode` other than 0 in `value`, at any depth.
    fn errors_in(&mut self, api: i16, value: &Value) {
        match value {
            Value::Object(map) => {
                for (name, field) in map {
                    match (name.as_str(), field.as_i64()) {
                        ("errorCode", Some(code)) if code != 0 => {
                            let code = i16::try_from(code).unwrap_or(i16::MIN);
                            *self.errors.entry((api, code)).or_default() += 1;
                        }
                        _ => self.errors_in(api, field),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| self.errors_in(api, item)),
            _ => {}
        }
    }

    /// Remembers the names of the topic ids a Metadata response gives.
    fn learn_topic_ids(&mut self, response: &Value) {
        let topics = response["topics"].as_array().map_or(&[][..], Vec::as_slice);
        for topic in topics {
            if let (Some(id), Some(name)) = (topic["topicId"].as_str(), topic["name"].as_str()) {
                if id == ZERO_UUID {
                    continue;
                }
                if self.topic_names.len() < MAX_TRACKED || self.topic_names.contains_key(id) {
                    self.topic_names.insert(id.to_owned(), name.to_owned());
                }
            }
        }
    }

    /// Adds the records of each topic of `topics` (a Produce request's
    /// `topicData` or a Fetch response's `responses`): `name_key` names it
    /// (or `topicId`), `partitions_key` holds its partitions' `records`.
    fn count_records(
        &mut self,
        topics: &Value,
        name_key: &str,
        partitions_key: &str,
        produced: bool,
    ) {
        let topics = topics.as_array().map_or(&[][..], Vec::as_slice);
        for topic in topics {
            let name = match (topic[name_key].as_str(), topic["topicId"].as_str()) {
                (Some(name), _) if !name.is_empty() => name.to_owned(),
                (_, Some(id)) => self
                    .topic_names
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| id.to_owned()),
                _ => String::new(),
            };
            let partitions = topic[partitions_key]
                .as_array()
                .map_or(&[][..], Vec::as_slice);
            let bytes: u64 = partitions
                .iter()
                .filter_map(|p| p["records"].as_str())
                .map(base64_len)
                .sum();
            let count = self.topics.entry(name);
            if produced {
                count.produced += bytes;
            } else {
                count.fetched += bytes;
            }
        }
    }

    fn clients_sorted(&self) -> Vec<(&Option<String>, &ClientCount)> {
        let mut clients: Vec<_> = self.clients.map.iter().collect();
        clients.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then_with(|| a.0.cmp(b.0)));
        clients
    }

    fn topics_sorted(&self) -> Vec<(&String, &TopicCount)> {
        let mut topics: Vec<_> = self.topics.map.iter().collect();
        let total = |t: &TopicCount| t.produced + t.fetched;
        topics.sort_by(|a, b| total(b.1).cmp(&total(a.1)).then_with(|| a.0.cmp(b.0)));
        topics
    }

    /// The summary as one JSON object: `exchanges`, `saslTokens`, `apis`
    /// (`api`, `version`, `exchanges`), `latency` (`api`, `answered`,
    /// `p50Us`, `p99Us`), `clients` (`clientId`, `exchanges`, `bytes`,
    /// by bytes), `otherClients`, `topics` (`topic`, `producedBytes`,
    /// `fetchedBytes`, by bytes), `otherTopics`, `errors` (`api`,
    /// `errorCode`, `error`, `count`) and `events` (a count per kind).
    pub fn to_json(&self) -> Value {
        let apis: Vec<Value> = self
            .versions
            .iter()
            .map(|(&(key, version), &count)| {
                json!({"api": api_name(key), "version": version, "exchanges": count})
            })
            .collect();
        let latency: Vec<Value> = self
            .latency
            .iter()
            .map(|(&key, histogram)| {
                json!({
                    "api": api_name(key),
                    "answered": histogram.total,
                    "p50Us": histogram.percentile(50),
                    "p99Us": histogram.percentile(99),
                })
            })
            .collect();
        let clients: Vec<Value> = self
            .clients_sorted()
            .into_iter()
            .map(|(id, count)| {
                json!({"clientId": id, "exchanges": count.exchanges, "bytes": count.bytes})
            })
            .collect();
        let other = self.clients.other;
        let topics: Vec<Value> = self
            .topics_sorted()
            .into_iter()
            .map(|(name, count)| {
                json!({"topic": name, "producedBytes": count.produced, "fetchedBytes": count.fetched})
            })
            .collect();
        let other_topics = self.topics.other;
        let errors: Vec<Value> = self
            .errors
            .iter()
            .map(|(&(key, code), &count)| {
                json!({
                    "api": api_name(key),
                    "errorCode": code,
                    "error": ErrorCode::from_code(code).name(),
                    "count": count,
                })
            })
            .collect();
        let events: Map<String, Value> = EventKind::ALL
            .iter()
            .zip(self.events)
            .map(|(kind, count)| (kind.name().to_owned(), count.into()))
            .collect();
        json!({
            "exchanges": self.exchanges,
            "saslTokens": self.sasl_tokens,
            "apis": apis,
            "latency": latency,
            "clients": clients,
            "otherClients": {"exchanges": other.exchanges, "bytes": other.bytes},
            "topics": topics,
            "otherTopics": {"producedBytes": other_topics.produced, "fetchedBytes": other_topics.fetched},
            "errors": errors,
            "events": events,
        })
    }

    /// The summary as tab-separated tables, each with a header row, one
    /// blank line between them: exchanges by api and version, latency by
    /// api, bytes by client id (`-` for none) and by topic, error codes,
    /// events. Client ids and topics beyond the cap are one row,
    /// `(others)`, when there are any.
    pub fn to_table(&self) -> String {
        let mut text = format!(
            "exchanges\tsasl_tokens\n{}\t{}\n",
            self.exchanges, self.sasl_tokens
        );
        text.push_str("\napi\tversion\texchanges\n");
        for (&(key, version), count) in &self.versions {
            text.push_str(&format!("{}\t{version}\t{count}\n", api_name(key)));
        }
        text.push_str("\napi\tanswered\tp50_us\tp99_us\n");
        for (&key, histogram) in &self.latency {
            let show = |p: Option<u64>| p.map_or_else(|| "-".to_owned(), |p| p.to_string());
            text.push_str(&format!(
                "{}\t{}\t{}\t{}\n",
                api_name(key),
                histogram.total,
                show(histogram.percentile(50)),
                show(histogram.percentile(99)),
            ));
        }
        text.push_str("\nclient_id\texchanges\tbytes\n");
        for (id, count) in self.clients_sorted() {
            let id = id.as_deref().unwrap_or("-");
            text.push_str(&format!("{id}\t{}\t{}\n", count.exchanges, count.bytes));
        }
        let other = self.clients.other;
        if other.exchanges > 0 {
            text.push_str(&format!("(others)\t{}\t{}\n", other.exchanges, other.bytes));
        }
        text.push_str("\ntopic\tproduced_bytes\tfetched_bytes\n");
        for (name, count) in self.topics_sorted() {
            text.push_str(&format!("{name}\t{}\t{}\n", count.produced, count.fetched));
        }
        let other = self.topics.other;
        if other.produced + other.fetched > 0 {
            text.push_str(&format!(
                "(others)\t{}\t{}\n",
                other.produced, other.fetched
            ));
        }
        text.push_str("\napi\terror_code\terror\tcount\n");
        for (&(key, code), count) in &self.errors {
            let name = ErrorCode::from_code(code).name();
            text.push_str(&format!("{}\t{code}\t{name}\t{count}\n", api_name(key)));
        }
        text.push_str("\nevent\tcount\n");
        for (kind, count) in EventKind::ALL.iter().zip(self.events) {
            text.push_str(&format!("{kind}\t{count}\n"));
        }
        text
    }
}

/// The api's name as the proxy's log writes it (the key for one unknown).
fn api_name(key: i16) -> String {
    ApiKey::from_key(key).map_or_else(|| key.to_string(), |api| api.name().to_owned())
}

/// The size of the bytes that base64 `text` holds.
fn base64_len(text: &str) -> u64 {
    let padding = text.bytes().rev().take_while(|&b| b == b'=').count();
    (text.len() / 4 * 3).saturating_sub(padding) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_128_and_within_a_64th_above() {
        for value in [0, 1, 127, 128, 255, 1000, 1_000_000, u64::MAX] {
            let bucket = Histogram::bucket(value);
            let lower = Histogram::lower_bound(bucket);
            assert!(lower <= value, "{value}");
            assert!(value - lower <= value / 64, "{value}: {lower}");
            if value < EXACT {
                assert_eq!(lower, value);
            }
            if bucket > 0 {
                assert!(Histogram::lower_bound(bucket - 1) < lower);
            }
        }
        assert_eq!(Histogram::lower_bound(Histogram::bucket(1000)), 1000);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut histogram = Histogram::default();
        assert_eq!(histogram.percentile(50), None);
        for micros in 1..=100 {
            histogram.add(micros);
        }
        histogram.add(-5);
        assert_eq!(histogram.percentile(50), Some(50));
        assert_eq!(histogram.percentile(99), Some(99));
        assert_eq!(histogram.percentile(100), Some(100));
    }

    #[test]
    fn client_ids_past_the_cap_are_others() {
        let mut clients: Capped<u32, ClientCount> = Capped::default();
        for id in 0..MAX_TRACKED as u32 + 5 {
            clients.entry(id).exchanges += 1;
        }
        clients.entry(0).exchanges += 1;
        assert_eq!(clients.map.len(), MAX_TRACKED);
        assert_eq!(clients.map[&0].exchanges, 2);
        assert_eq!(clients.other.exchanges, 5);
    }

    #[test]
    fn base64_sizes() {
        assert_eq!(base64_len(""), 0);
        assert_eq!(base64_len("aGVsbG8="), 5);
        assert_eq!(base64_len("aGVsbA=="), 4);
        assert_eq!(base64_len("aGVs"), 3);
    }
}
