//! Placeholders in request bodies: `${NAME}` and `${NAME + N}`, filled per
//! side from [`Bindings`].
//!
//! - A string that is one placeholder, `"${producerId}"`, becomes the bound
//!   value itself, of any JSON type (a number stays a number).
//! - A placeholder inside a longer string, `"${topic.orders}-retry"`, is
//!   replaced by the bound value's text (a string or a number).
//! - `${NAME + N}` and `${NAME - N}` (spaces around the sign) add to a bound
//!   integer: `"${generationId + 5}"`.
//! - `$${` writes a literal `${`.
//!
//! Names hold no whitespace and no `}`. The run binds `topic.X`, `group.X`
//! and `txn.X` to its own names (see [`crate::names`]), `topicId.X` to the
//! id of a topic it created, and `records.CODEC` to a record batch; a
//! step's `learn` binds names of its own from an answer.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::TemplateError;

/// Values for placeholders, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bindings {
    values: BTreeMap<String, Value>,
}

impl Bindings {
    /// No bindings.
    pub fn new() -> Bindings {
        Bindings::default()
    }

    /// Binds `name`, replacing an earlier value.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        self.values.insert(name.into(), value.into());
    }

    /// The value bound to `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// Every binding, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// `template` with every placeholder filled, at any depth (object keys
    /// are taken as they are).
    pub fn resolve(&self, template: &Value) -> Result<Value, TemplateError> {
        match template {
            Value::String(text) => self.resolve_str(text),
            Value::Array(items) => items.iter().map(|item| self.resolve(item)).collect(),
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| Ok((k.clone(), self.resolve(v)?)))
                .collect::<Result<serde_json::Map<_, _>, _>>()
                .map(Value::Object),
            other => Ok(other.clone()),
        }
    }

    /// A string with its placeholders filled: the bound value itself when
    /// the string is exactly one placeholder.
    pub fn resolve_str(&self, text: &str) -> Result<Value, TemplateError> {
        let pieces = split(text)?;
        if let [Piece::Placeholder(expr)] = pieces.as_slice() {
            return self.evaluate(text, expr);
        }
        let mut out = String::with_capacity(text.len());
        for piece in pieces {
            match piece {
                Piece::Text(t) => out.push_str(&t),
                Piece::Placeholder(expr) => match self.evaluate(text, &expr)? {
                    Value::String(s) => out.push_str(&s),
                    Value::Number(n) => out.push_str(&n.to_string()),
                    other => {
                        return Err(TemplateError::NotText {
                            template: text.to_owned(),
                            name: expr.name,
                            value: other.to_string(),
                        })
                    }
                },
            }
        }
        Ok(Value::String(out))
    }

    fn evaluate(&self, template: &str, expr: &Expr) -> Result<Value, TemplateError> {
        let value = self
            .values
            .get(&expr.name)
            .ok_or_else(|| TemplateError::Unbound {
                template: template.to_owned(),
                name: expr.name.clone(),
            })?;
        if expr.offset == 0 {
            return Ok(value.clone());
        }
        value
            .as_i64()
            .and_then(|v| v.checked_add(expr.offset))
            .map(Value::from)
            .ok_or_else(|| TemplateError::NotInteger {
                template: template.to_owned(),
                name: expr.name.clone(),
                value: value.to_string(),
            })
    }
}

/// Every placeholder name in `template`, at any depth, in order (with
/// repeats); an error for a malformed one.
pub fn placeholders(template: &Value) -> Result<Vec<String>, TemplateError> {
    let mut names = Vec::new();
    collect(template, &mut names)?;
    Ok(names)
}

fn collect(template: &Value, names: &mut Vec<String>) -> Result<(), TemplateError> {
    match template {
        Value::String(text) => {
            for piece in split(text)? {
                if let Piece::Placeholder(expr) = piece {
                    names.push(expr.name);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                collect(item, names)?;
            }
        }
        Value::Object(map) => {
            for value in map.values() {
                collect(value, names)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[derive(Debug)]
struct Expr {
    name: String,
    offset: i64,
}

#[derive(Debug)]
enum Piece {
    Text(String),
    Placeholder(Expr),
}

fn split(text: &str) -> Result<Vec<Piece>, TemplateError> {
    let malformed = |why: &str| TemplateError::Malformed {
        template: text.to_owned(),
        why: why.to_owned(),
    };
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        literal.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(tail) = after.strip_prefix("$${") {
            literal.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("${") {
            let end = tail
                .find('}')
                .ok_or_else(|| malformed("a `${` without `}`"))?;
            let expr = parse_expr(&tail[..end]).ok_or_else(|| {
                malformed("a placeholder is `${NAME}`, `${NAME + N}` or `${NAME - N}`")
            })?;
            if !literal.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut literal)));
            }
            pieces.push(Piece::Placeholder(expr));
            rest = &tail[end + 1..];
        } else {
            literal.push('$');
            rest = &after[1..];
        }
    }
    literal.push_str(rest);
    if !literal.is_empty() || pieces.is_empty() {
        pieces.push(Piece::Text(literal));
    }
    Ok(pieces)
}

fn parse_expr(inside: &str) -> Option<Expr> {
    let words: Vec<&str> = inside.split_whitespace().collect();
    let valid_name = |name: &str| !name.is_empty() && !name.contains('$');
    match words.as_slice() {
        [name] if valid_name(name) => Some(Expr {
            name: (*name).to_owned(),
            offset: 0,
        }),
        [name, sign @ ("+" | "-"), number] if valid_name(name) => {
            let n: i64 = number.parse().ok()?;
            Some(Expr {
                name: (*name).to_owned(),
                offset: if *sign == "+" { n } else { n.checked_neg()? },
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bindings() -> Bindings {
        let mut b = Bindings::new();
        b.insert("topic.orders", "kwc-1-r-orders");
        b.insert("producerId", 4000);
        b.insert("flag", true);
        b
    }

    #[test]
    fn placeholders_fill_whole_values_and_text() {
        let b = bindings();
        let template = json!({
            "name": "${topic.orders}",
            "retry": "${topic.orders}-retry",
            "id": "${producerId}",
            "next": "${producerId + 5}",
            "back": "${producerId - 1}",
            "flag": ["${flag}"],
            "literal": "$${x} costs $5",
            "n": 3
        });
        assert_eq!(
            b.resolve(&template).unwrap(),
            json!({
                "name": "kwc-1-r-orders",
                "retry": "kwc-1-r-orders-retry",
                "id": 4000,
                "next": 4005,
                "back": 3999,
                "flag": [true],
                "literal": "${x} costs $5",
                "n": 3
            })
        );
        assert_eq!(
            placeholders(&template).unwrap(),
            [
                "topic.orders",
                "topic.orders",
                "producerId",
                "producerId",
                "producerId",
                "flag"
            ]
        );
    }

    #[test]
    fn faults_name_the_template() {
        let b = bindings();
        let unbound = b.resolve(&json!("${nope}")).unwrap_err();
        assert_eq!(unbound.to_string(), "`${nope}`: nothing is bound to `nope`");
        assert!(b.resolve(&json!("${flag}x")).is_err());
        assert!(b.resolve(&json!("${topic.orders + 1}")).is_err());
        for bad in ["${", "${}", "${a b}", "${a * 2}", "${a + x}"] {
            assert!(b.resolve(&json!(bad)).is_err(), "{bad}");
        }
    }
}
