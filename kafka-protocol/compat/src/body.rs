//! Request bodies from their JSON form, fitted to a version.
//!
//! A body is written once for every version of its api: keys it leaves out
//! of an object take their defaults (from the api's default body, through
//! [`kafka_wire::runtime::json::overlay`]), and keys of fields the version
//! lacks are dropped, at any depth. Elements of arrays must name every
//! field they need; fields of other versions are dropped from them too.

use kafka_wire::runtime::json::overlay;
use kafka_wire::runtime::JsonError;
use kafka_wire::runtime::JsonErrorKind;
use kafka_wire::{ApiKey, IntoOwned, RequestBody, ResponseBody};
use serde_json::Value;

use crate::error::BodyError;
use crate::path::{JsonPath, Segment};

/// The request body of `api` at `version` that `given` describes, fitted to
/// the version (see the module).
pub fn fit(api: ApiKey, version: i16, given: &Value) -> Result<RequestBody<'static>, BodyError> {
    let default = RequestBody::default_for(api).to_json(version);
    fit_with(api, version, default, given, |value| {
        RequestBody::from_json(value, api, version).map(IntoOwned::into_owned)
    })
}

/// The response body of `api` at `version` that `given` describes, fitted
/// to the version as [`fit`] fits requests: for a broker written in a test,
/// or a hostile one.
pub fn fit_response(
    api: ApiKey,
    version: i16,
    given: &Value,
) -> Result<ResponseBody<'static>, BodyError> {
    let default = ResponseBody::default_for(api).to_json(version);
    fit_with(api, version, default, given, |value| {
        ResponseBody::from_json(value, api, version).map(IntoOwned::into_owned)
    })
}

fn fit_with<T>(
    api: ApiKey,
    version: i16,
    mut value: Value,
    given: &Value,
    build: impl Fn(&Value) -> Result<T, JsonError>,
) -> Result<T, BodyError> {
    overlay(&mut value, given.clone());
    // One unknown key is dropped per round: the error names the first. A
    // body has fewer keys than this bound.
    let mut last = None;
    for _ in 0..4096 {
        match build(&value) {
            Ok(body) => return Ok(body),
            Err(error) => {
                let dropped = match error.kind() {
                    JsonErrorKind::UnknownField(key) => {
                        let at = JsonPath::parse(&error.json_path()).ok();
                        at.is_some_and(|at| remove_key(&mut value, &at, key))
                    }
                    _ => false,
                };
                if !dropped {
                    return Err(BodyError::Json {
                        api: api.name(),
                        version,
                        error,
                    });
                }
                last = Some(error);
            }
        }
    }
    Err(BodyError::Json {
        api: api.name(),
        version,
        error: last.unwrap_or_else(|| JsonError::new(JsonErrorKind::UnknownField("?".into()))),
    })
}

/// The JSON form of `api`'s default body at `version`.
pub fn default_json(api: ApiKey, version: i16) -> Value {
    RequestBody::default_for(api).to_json(version)
}

/// Removes `key` from the object at `at`.
fn remove_key(value: &mut Value, at: &JsonPath, key: &str) -> bool {
    let mut node = value;
    for segment in at.segments() {
        node = match (segment, node) {
            (Segment::Key(k), Value::Object(map)) => match map.get_mut(k) {
                Some(next) => next,
                None => return false,
            },
            (Segment::Index(i), Value::Array(items)) => match items.get_mut(*i) {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
    node.as_object_mut()
        .is_some_and(|map| map.remove(key).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fitting_drops_the_fields_a_version_lacks() {
        let given = json!({
            "acks": -1,
            "timeoutMs": 1000,
            "transactionalId": null,
            "topicData": [{"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
                           "partitionData": [{"index": 0, "records": null}]}]
        });
        let old = fit(ApiKey::Produce, 3, &given).unwrap().to_json(3);
        assert_eq!(old["topicData"][0]["name"], "t");
        assert!(old["topicData"][0].get("topicId").is_none());
        let new = fit(ApiKey::Produce, 13, &given).unwrap().to_json(13);
        assert!(new["topicData"][0].get("name").is_none());
        assert_eq!(new["topicData"][0]["topicId"], "AAAAAAAAAAAAAAAAAAAAAQ");
        // A value of the wrong type is an error with its path.
        let error = fit(ApiKey::Produce, 9, &json!({"acks": "all"})).unwrap_err();
        assert!(error.to_string().contains("acks"), "{error}");
    }
}
