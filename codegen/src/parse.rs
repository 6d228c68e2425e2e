//! Stage 1: Kafka's schema dialect, JSON with `//` line comments, parsed into a
//! tree that remembers where every value came from.
//!
//! The parser is lenient in one way Kafka's own reader is: a trailing comma before
//! `]` or `}` is accepted and reported as a warning. Everything else that is not
//! JSON is an error with the exact position.

use nom::{
    branch::alt,
    bytes::complete::{tag, take_till, take_while, take_while1},
    character::complete::{char, satisfy},
    combinator::{opt, recognize},
    sequence::{pair, tuple},
    IResult,
};

use crate::diagnostics::{Diagnostic, Span};

/// A JSON value together with the byte offset at which it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the value starts in the source text.
    pub span: Span,
    /// The value itself.
    pub value: Value,
}

/// A JSON value whose children carry their own spans.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, kept as written so that no precision is lost.
    Number(String),
    /// A string, with escapes resolved.
    String(String),
    /// An array.
    Array(Vec<Node>),
    /// An object, in source order. Duplicate keys are kept for the model to reject.
    Object(Vec<(Key, Node)>),
}

/// An object key and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// Where the key's opening quote is.
    pub span: Span,
    /// The key's text.
    pub name: String,
}

impl Value {
    /// Names the kind of value, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// The result of parsing one file: the tree, plus any warnings.
#[derive(Debug)]
pub struct Parsed {
    /// The top-level value.
    pub root: Node,
    /// Leniencies that were applied, such as trailing commas.
    pub warnings: Vec<Diagnostic>,
}

/// Parses `text` as Kafka's JSON-with-comments dialect.
///
/// Errors and warnings carry byte offsets; the caller turns them into
/// line and column with the source text.
pub fn parse(text: &str) -> Result<Parsed, Diagnostic> {
    let mut parser = Parser {
        source: text,
        warnings: Vec::new(),
    };
    let rest = parser.skip_trivia(text)?;
    let (rest, root) = parser.value(rest)?;
    let rest = parser.skip_trivia(rest)?;
    if !rest.is_empty() {
        return Err(parser.error_at(rest, "unexpected text after the end of the schema"));
    }
    Ok(Parsed {
        root,
        warnings: parser.warnings,
    })
}

struct Parser<'s> {
    source: &'s str,
    warnings: Vec<Diagnostic>,
}

type Res<'s, T> = Result<(&'s str, T), Diagnostic>;

impl<'s> Parser<'s> {
    fn offset(&self, rest: &str) -> usize {
        self.source.len() - rest.len()
    }

    fn error_at(&self, rest: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(Span::at(self.offset(rest)), message)
    }

    /// Skips whitespace and `//` comments. A lone `/` is an error.
    fn skip_trivia(&self, mut input: &'s str) -> Result<&'s str, Diagnostic> {
        loop {
            let (rest, _) = whitespace(input).unwrap_or((input, ""));
            input = rest;
            if let Ok((rest, _)) = line_comment(input) {
                input = rest;
            } else if input.starts_with('/') {
                return Err(self.error_at(input, "expected `//` to start a comment"));
            } else {
                return Ok(input);
            }
        }
    }

    fn value(&mut self, input: &'s str) -> Res<'s, Node> {
        let span = Span::at(self.offset(input));
        let node = |value| Node { span, value };
        match input.chars().next() {
            Some('{') => self.object(input).map(|(r, v)| (r, node(v))),
            Some('[') => self.array(input).map(|(r, v)| (r, node(v))),
            Some('"') => self.string(input).map(|(r, s)| (r, node(Value::String(s)))),
            Some(c) if c == '-' || c.is_ascii_digit() => match number(input) {
                Ok((rest, text)) => Ok((rest, node(Value::Number(text.to_owned())))),
                Err(_) => Err(self.error_at(input, "malformed number")),
            },
            Some(_) => {
                if let Ok((rest, word)) = keyword(input) {
                    let value = match word {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        _ => Value::Null,
                    };
                    return Ok((rest, node(value)));
                }
                let word: String = input
                    .chars()
                    .take_while(|c| !c.is_whitespace() && !",:]}".contains(*c))
                    .take(20)
                    .collect();
                Err(self.error_at(
                    input,
                    format!("expected a JSON value, found `{word}`; strings need double quotes"),
                ))
            }
            None => Err(self.error_at(input, "unexpected end of file, expected a value")),
        }
    }

    /// Parses the separators and elements shared by arrays and objects.
    /// `element` parses one entry; `close` is the closing bracket.
    fn sequence<T>(
        &mut self,
        input: &'s str,
        close: char,
        what: &str,
        mut element: impl FnMut(&mut Self, &'s str) -> Res<'s, T>,
    ) -> Res<'s, Vec<T>> {
        let mut items = Vec::new();
        let mut rest = self.skip_trivia(&input[1..])?;
        if let Some(after) = rest.strip_prefix(close) {
            return Ok((after, items));
        }
        loop {
            let (after, item) = element(self, rest)?;
            items.push(item);
            rest = self.skip_trivia(after)?;
            if let Some(after) = rest.strip_prefix(close) {
                return Ok((after, items));
            }
            let Some(after_comma) = rest.strip_prefix(',') else {
                return Err(self.error_at(
                    rest,
                    format!("expected `,` or `{close}` after {what} entry"),
                ));
            };
            let comma = rest;
            rest = self.skip_trivia(after_comma)?;
            if let Some(after) = rest.strip_prefix(close) {
                self.warnings.push(Diagnostic::warning(
                    Span::at(self.offset(comma)),
                    format!("trailing comma before `{close}` is not JSON; remove it"),
                ));
                return Ok((after, items));
            }
        }
    }

    fn array(&mut self, input: &'s str) -> Res<'s, Value> {
        let (rest, items) = self.sequence(input, ']', "an array", |p, i| p.value(i))?;
        Ok((rest, Value::Array(items)))
    }

    fn object(&mut self, input: &'s str) -> Res<'s, Value> {
        let (rest, members) = self.sequence(input, '}', "an object", |p, i| p.member(i))?;
        Ok((rest, Value::Object(members)))
    }

    fn member(&mut self, input: &'s str) -> Res<'s, (Key, Node)> {
        if !input.starts_with('"') {
            return Err(self.error_at(input, "expected a quoted object key"));
        }
        let span = Span::at(self.offset(input));
        let (rest, name) = self.string(input)?;
        let rest = self.skip_trivia(rest)?;
        let Some(rest) = rest.strip_prefix(':') else {
            return Err(self.error_at(rest, format!("expected `:` after key \"{name}\"")));
        };
        let rest = self.skip_trivia(rest)?;
        let (rest, value) = self.value(rest)?;
        Ok((rest, (Key { span, name }, value)))
    }

    fn string(&mut self, input: &'s str) -> Res<'s, String> {
        let mut out = String::new();
        let mut rest = &input[1..];
        loop {
            let (after, chunk) = plain_chars(rest).unwrap_or((rest, ""));
            out.push_str(chunk);
            rest = after;
            let mut chars = rest.chars();
            match chars.next() {
                Some('"') => return Ok((chars.as_str(), out)),
                Some('\\') => {
                    let (after, c) = self.escape(rest)?;
                    out.push(c);
                    rest = after;
                }
                Some(_) => {
                    return Err(self.error_at(rest, "control character inside a string"));
                }
                None => return Err(self.error_at(input, "string is never closed")),
            }
        }
    }

    fn escape(&self, input: &'s str) -> Res<'s, char> {
        let body = &input[1..];
        let mut chars = body.chars();
        let c = match chars.next() {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('/') => '/',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let hex = body
                    .get(1..5)
                    .filter(|h| h.chars().all(|c| c.is_ascii_hexdigit()));
                let code = hex.and_then(|h| u32::from_str_radix(h, 16).ok());
                return match code.and_then(char::from_u32) {
                    Some(c) => Ok((&body[5..], c)),
                    None => Err(self.error_at(input, "invalid `\\u` escape")),
                };
            }
            _ => return Err(self.error_at(input, "invalid escape in string")),
        };
        Ok((chars.as_str(), c))
    }
}

fn whitespace(input: &str) -> IResult<&str, &str> {
    take_while1(|c: char| c == ' ' || c == '\t' || c == '\n' || c == '\r')(input)
}

fn line_comment(input: &str) -> IResult<&str, &str> {
    recognize(pair(tag("//"), take_till(|c| c == '\n')))(input)
}

fn keyword(input: &str) -> IResult<&str, &str> {
    alt((tag("true"), tag("false"), tag("null")))(input)
}

fn plain_chars(input: &str) -> IResult<&str, &str> {
    take_while1(|c: char| c != '"' && c != '\\' && c >= ' ')(input)
}

/// A JSON number: optional minus, integer part without leading zeros,
/// optional fraction and exponent.
fn number(input: &str) -> IResult<&str, &str> {
    let digits = |i| take_while1(|c: char| c.is_ascii_digit())(i);
    recognize(tuple((
        opt(char('-')),
        alt((
            tag("0"),
            recognize(pair(satisfy(|c| c.is_ascii_digit()), digits_opt)),
        )),
        opt(pair(char('.'), digits)),
        opt(tuple((
            alt((char('e'), char('E'))),
            opt(alt((char('+'), char('-')))),
            digits,
        ))),
    )))(input)
}

fn digits_opt(input: &str) -> IResult<&str, &str> {
    take_while(|c: char| c.is_ascii_digit())(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Parsed {
        match parse(text) {
            Ok(p) => p,
            Err(e) => panic!("parse failed: {e:?}"),
        }
    }

    #[test]
    fn comments_are_skipped_but_not_inside_strings() {
        let text = "// head\n{ \"a\": \"x//y\", // tail\n \"b\": [1, -2.5e3] }";
        let parsed = parse_ok(text);
        let offset = |needle: &str| text.find(needle).unwrap_or(usize::MAX);
        let Value::Object(members) = parsed.root.value else {
            panic!("not an object")
        };
        assert_eq!(members[0].1.value, Value::String("x//y".into()));
        assert_eq!(
            members[1].1.value,
            Value::Array(vec![
                Node {
                    span: Span::at(offset("1,")),
                    value: Value::Number("1".into())
                },
                Node {
                    span: Span::at(offset("-2.5")),
                    value: Value::Number("-2.5e3".into())
                },
            ])
        );
        assert!(parsed.warnings.is_empty());
    }

    #[test]
    fn trailing_comma_is_a_warning_at_the_comma() {
        let parsed = parse_ok("[1, 2, ]");
        assert_eq!(parsed.warnings.len(), 1);
        assert_eq!(parsed.warnings[0].span, Span::at(5));
    }

    #[test]
    fn errors_point_at_the_fault() {
        let err = parse("{\"a\": 1 \"b\": 2}").unwrap_err();
        assert_eq!(err.span, Span::at(8));
        assert!(
            err.message.contains("expected `,` or `}`"),
            "{}",
            err.message
        );
        let err = parse("{\"a\": tru}").unwrap_err();
        assert_eq!(err.span, Span::at(6));
        let err = parse("{\"a\": \"open").unwrap_err();
        assert!(err.message.contains("never closed"));
        assert!(parse("{} x").is_err());
        assert!(parse("/ x").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn escapes_are_resolved() {
        let parsed = parse_ok(r#""a\n\u00e9\"""#);
        assert_eq!(parsed.root.value, Value::String("a\né\"".into()));
    }
}
