//! Client quotas (KIP-546): values by entity, an entity being a set of
//! (entity type, name) pairs where a null name is the type's default, as
//! Kafka's controller keeps them. The fake stores them and describes them;
//! it enforces none (no throttling).

use std::collections::BTreeMap;

/// The entity type of a user principal.
pub const USER: &str = "user";
/// The entity type of a client id.
pub const CLIENT_ID: &str = "client-id";
/// The entity type of a client's IP address.
pub const IP: &str = "ip";

/// An entity: its (type, name) pairs, sorted by type; `None` names the
/// type's default entity.
pub type Entity = Vec<(String, Option<String>)>;

/// An entity's quotas: key to value.
pub type Values = BTreeMap<String, f64>;

/// How a quota key's value must look, as Kafka's `QuotaConfig` types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyType {
    /// A whole number (Kafka's LONG: within 1e-6 of one).
    Long,
    /// Any number.
    Double,
}

/// The quota keys an entity of users and client ids may set.
const CLIENT_KEYS: &[(&str, KeyType)] = &[
    ("producer_byte_rate", KeyType::Long),
    ("consumer_byte_rate", KeyType::Long),
    ("request_percentage", KeyType::Double),
    ("controller_mutation_rate", KeyType::Double),
];

/// The quota keys an IP entity may set.
const IP_KEYS: &[(&str, KeyType)] = &[("connection_creation_rate", KeyType::Long)];

/// Why a request about quotas is refused: INVALID_REQUEST, or
/// UNSUPPORTED_VERSION for a filter on an entity type Kafka does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuotaError {
    /// INVALID_REQUEST, with Kafka's message.
    Invalid(String),
    /// UNSUPPORTED_VERSION, with Kafka's message.
    Unsupported(String),
}

/// One component of a DescribeClientQuotas filter.
#[derive(Debug, Clone, Copy)]
pub struct Component<'a> {
    /// The entity type it constrains.
    pub entity_type: &'a str,
    /// 0 exact, 1 the default entity, 2 any entity of the type.
    pub match_type: i8,
    /// The name for an exact match.
    pub name: Option<&'a str>,
}

/// Every entity's quotas.
#[derive(Debug, Default)]
pub struct Quotas {
    entities: BTreeMap<Entity, Values>,
}

/// The entity types an entity holds must be one of Kafka's combinations:
/// user, client id, user and client id, or IP alone; the keys it may set
/// follow from them.
fn keys_for(entity: &Entity) -> Result<&'static [(&'static str, KeyType)], QuotaError> {
    let has = |t: &str| entity.iter().any(|(kind, _)| kind == t);
    match (has(USER), has(CLIENT_ID), has(IP)) {
        (true, _, false) | (false, true, false) => Ok(CLIENT_KEYS),
        (false, false, true) => Ok(IP_KEYS),
        _ => Err(QuotaError::Invalid(
            "Invalid empty client quota entity".into(),
        )),
    }
}

/// Checks an entity as Kafka's controller does: known types, no empty
/// names.
pub fn check_entity(entity: &Entity) -> Result<(), QuotaError> {
    if entity.is_empty() {
        return Err(QuotaError::Invalid(
            "Invalid empty client quota entity".into(),
        ));
    }
    for (kind, name) in entity {
        if ![USER, CLIENT_ID, IP].contains(&kind.as_str()) {
            return Err(QuotaError::Invalid(format!(
                "Unhandled client quota entity type: {kind}"
            )));
        }
        if name.as_deref() == Some("") {
            return Err(QuotaError::Invalid(format!("Empty {kind} not supported")));
        }
    }
    keys_for(entity).map(|_| ())
}

/// Checks one quota value for `entity` (a `None` value is a removal).
pub fn check_value(entity: &Entity, key: &str, value: Option<f64>) -> Result<(), QuotaError> {
    let keys = keys_for(entity)?;
    let Some(value) = value else { return Ok(()) };
    let kind = keys
        .iter()
        .find(|(name, _)| *name == key)
        .map(|(_, kind)| *kind)
        .ok_or_else(|| QuotaError::Invalid(format!("Invalid configuration key {key}")))?;
    if kind == KeyType::Long {
        let epsilon = 1e-6;
        let whole = (value + epsilon).trunc();
        if (whole - value).abs() > epsilon {
            return Err(QuotaError::Invalid(format!(
                "Configuration {key} must be a Long value"
            )));
        }
    }
    Ok(())
}

impl Quotas {
    /// Sets (`Some`) or removes (`None`) each key of `entity`; an entity
    /// left with no quota goes.
    pub fn alter(&mut self, entity: Entity, ops: Vec<(String, Option<f64>)>) {
        let values = self.entities.entry(entity.clone()).or_default();
        for (key, value) in ops {
            match value {
                Some(value) => {
                    values.insert(key, value);
                }
                None => {
                    values.remove(&key);
                }
            }
        }
        if values.is_empty() {
            self.entities.remove(&entity);
        }
    }

    /// The entities matching every component (and, `strict`, holding no
    /// other type), with their quotas, as Kafka's brokers describe them.
    pub fn describe(
        &self,
        components: &[Component<'_>],
        strict: bool,
    ) -> Result<Vec<(&Entity, &Values)>, QuotaError> {
        let mut seen: Vec<&str> = Vec::new();
        for c in components {
            if c.entity_type.is_empty() {
                return Err(QuotaError::Invalid("Invalid empty entity type.".into()));
            }
            if seen.contains(&c.entity_type) {
                return Err(QuotaError::Invalid(format!(
                    "Entity type {} cannot appear more than once in the filter.",
                    c.entity_type
                )));
            }
            seen.push(c.entity_type);
            if ![USER, CLIENT_ID, IP].contains(&c.entity_type) {
                return Err(QuotaError::Unsupported(format!(
                    "Unsupported entity type {}",
                    c.entity_type
                )));
            }
            match (c.match_type, c.name) {
                (0, None) => {
                    return Err(QuotaError::Invalid(
                        "Request specified MATCH_TYPE_EXACT, but set match string to null.".into(),
                    ))
                }
                (1 | 2, Some(_)) => {
                    return Err(QuotaError::Invalid(format!(
                        "Request specified match type {}, but also specified a match string.",
                        c.match_type
                    )))
                }
                (0..=2, _) => {}
                (other, _) => {
                    return Err(QuotaError::Invalid(format!("Unknown match type {other}")))
                }
            }
        }
        if seen.contains(&IP) && seen.len() > 1 {
            return Err(QuotaError::Invalid(
                "Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.".into(),
            ));
        }
        let matches = |entity: &Entity| {
            if strict && entity.len() != components.len() {
                return false;
            }
            components.iter().all(|c| {
                let Some((_, name)) = entity.iter().find(|(kind, _)| kind == c.entity_type) else {
                    return false;
                };
                match c.match_type {
                    0 => name.as_deref() == c.name,
                    1 => name.is_none(),
                    _ => true,
                }
            })
        };
        Ok(self
            .entities
            .iter()
            .filter(|(entity, _)| matches(entity))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(pairs: &[(&str, Option<&str>)]) -> Entity {
        let mut e: Entity = pairs
            .iter()
            .map(|(k, n)| ((*k).to_owned(), n.map(str::to_owned)))
            .collect();
        e.sort();
        e
    }

    #[test]
    fn filters_match_as_kafka_matches_them() {
        let mut quotas = Quotas::default();
        quotas.alter(
            entity(&[(USER, None)]),
            vec![("producer_byte_rate".into(), Some(1.0))],
        );
        quotas.alter(
            entity(&[(USER, Some("u")), (CLIENT_ID, Some("c"))]),
            vec![("consumer_byte_rate".into(), Some(2.0))],
        );
        let count = |components: &[Component<'_>], strict| {
            quotas.describe(components, strict).map(|found| found.len())
        };
        let user = |match_type, name| Component {
            entity_type: USER,
            match_type,
            name,
        };
        assert_eq!(count(&[], false), Ok(2));
        assert_eq!(count(&[], true), Ok(0));
        assert_eq!(count(&[user(1, None)], false), Ok(1));
        assert_eq!(count(&[user(2, None)], false), Ok(2));
        assert_eq!(count(&[user(2, None)], true), Ok(1));
        assert_eq!(count(&[user(0, Some("u"))], true), Ok(0));
        assert_eq!(count(&[user(0, Some("u"))], false), Ok(1));
        assert!(matches!(
            count(&[user(0, None)], false),
            Err(QuotaError::Invalid(_))
        ));
        assert!(matches!(
            count(
                &[Component {
                    entity_type: "x",
                    match_type: 2,
                    name: None
                }],
                false
            ),
            Err(QuotaError::Unsupported(_))
        ));
        quotas.alter(
            entity(&[(USER, None)]),
            vec![("producer_byte_rate".into(), None)],
        );
        assert_eq!(quotas.describe(&[], false).map(|found| found.len()), Ok(1));
    }

    #[test]
    fn values_are_checked_as_kafka_checks_them() {
        let user = entity(&[(USER, None)]);
        assert!(check_value(&user, "producer_byte_rate", Some(1024.0)).is_ok());
        assert!(check_value(&user, "producer_byte_rate", Some(1.5)).is_err());
        assert!(check_value(&user, "request_percentage", Some(1.5)).is_ok());
        assert!(check_value(&user, "bogus", Some(1.0)).is_err());
        assert!(check_value(&user, "bogus", None).is_ok());
        assert!(check_entity(&entity(&[("bogus", Some("x"))])).is_err());
        assert!(check_entity(&entity(&[(IP, None), (USER, None)])).is_err());
        assert!(check_entity(&entity(&[(USER, Some(""))])).is_err());
    }
}
