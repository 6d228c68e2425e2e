//! JSON paths as a Kafka developer writes them: `topics[0].partitions[2].errorCode`,
//! the keys of the JSON form (Kafka's JsonConverter's camelCase names) and
//! array indexes. The empty path is the whole answer. In patterns (what a
//! step learns, what it waits for), `[*]` stands for every element.

use std::fmt;

use serde_json::Value;

use crate::error::PathError;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A member of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
    /// Every element of an array (patterns only).
    Every,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonPath {
    segments: Vec<Segment>,
}

impl JsonPath {
    /// The whole value.
    pub fn root() -> JsonPath {
        JsonPath::default()
    }

    /// Parses `topics[0].partitions[*].leaderId` (a leading `$` or `$.`
    /// is allowed, as `kafka_wire`'s JSON errors write paths).
    pub fn parse(text: &str) -> Result<JsonPath, PathError> {
        let bad = |why: &str| PathError {
            path: text.to_owned(),
            why: why.to_owned(),
        };
        let mut rest = match text.strip_prefix('$') {
            Some(after) => after.strip_prefix('.').unwrap_or(after),
            None => text,
        };
        let mut segments = Vec::new();
        let mut expect_key = true;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']').ok_or_else(|| bad("an unclosed `[`"))?;
                let inside = &after[..end];
                segments.push(if inside == "*" {
                    Segment::Every
                } else {
                    Segment::Index(
                        inside
                            .parse()
                            .map_err(|_| bad("an index that is not a number or `*`"))?,
                    )
                });
                rest = &after[end + 1..];
                expect_key = false;
                continue;
            }
            if !expect_key {
                rest = rest
                    .strip_prefix('.')
                    .ok_or_else(|| bad("a key not preceded by `.`"))?;
                if rest.is_empty() {
                    return Err(bad("a `.` at the end"));
                }
            }
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            if end == 0 {
                return Err(bad("an empty key"));
            }
            segments.push(Segment::Key(rest[..end].to_owned()));
            rest = &rest[end..];
            expect_key = false;
        }
        Ok(JsonPath { segments })
    }

    /// The segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// This path with `key` appended.
    pub fn key(&self, key: &str) -> JsonPath {
        let mut next = self.clone();
        next.segments.push(Segment::Key(key.to_owned()));
        next
    }

    /// This path with `index` appended.
    pub fn index(&self, index: usize) -> JsonPath {
        let mut next = self.clone();
        next.segments.push(Segment::Index(index));
        next
    }

    /// Every value the path reaches in `value` (one at most without `[*]`).
    pub fn select<'v>(&self, value: &'v Value) -> Vec<&'v Value> {
        let mut found = vec![value];
        for segment in &self.segments {
            found = found
                .into_iter()
                .flat_map(|node| -> Vec<&'v Value> {
                    match (segment, node) {
                        (Segment::Key(key), Value::Object(map)) => {
                            map.get(key).into_iter().collect()
                        }
                        (Segment::Index(i), Value::Array(items)) => {
                            items.get(*i).into_iter().collect()
                        }
                        (Segment::Every, Value::Array(items)) => items.iter().collect(),
                        _ => Vec::new(),
                    }
                })
                .collect();
        }
        found
    }

    /// The first value the path reaches.
    pub fn first<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.select(value).into_iter().next()
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::Every => f.write_str("[*]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_parse_print_and_select() {
        let path = JsonPath::parse("topics[0].partitions[*].leaderId").unwrap();
        assert_eq!(path.to_string(), "topics[0].partitions[*].leaderId");
        let value = json!({"topics": [{"partitions": [{"leaderId": 1}, {"leaderId": 2}]}]});
        assert_eq!(path.select(&value), vec![&json!(1), &json!(2)]);
        assert_eq!(JsonPath::parse("$.a[1]").unwrap().to_string(), "a[1]");
        assert_eq!(JsonPath::parse("").unwrap(), JsonPath::root());
        assert_eq!(JsonPath::root().select(&value), vec![&value]);
        assert_eq!(JsonPath::root().key("a").index(3).to_string(), "a[3]");
        for bad in ["a[", "a[x]", "a..b", "a[0]b", ".", "[0]."] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
        assert!(JsonPath::parse("[0].a").is_ok());
    }
}
