//! `cfg` gates: one set of generated files that serves every feature
//! combination of the crate that includes it, each API behind the cargo
//! features of the listeners that serve it, the stored records and the JSON
//! form behind features of their own. A crate that ships its generated code
//! (as kafka-wire does) uses them instead of choosing what to generate.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ir::MessageIr;
use crate::model::MessageKind;

/// The `cfg` predicates that gate parts of the generated code, written as
/// they go inside `#[cfg(..)]`, such as `feature = "client-apis"`. Nothing
/// is gated by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gates {
    /// Per listener (`broker`, `controller`), the predicate under which the
    /// APIs it serves are compiled. An API served on several listeners is
    /// compiled when the predicate of any of them holds; one served on a
    /// listener without a predicate is always compiled.
    pub listeners: Vec<(String, String)>,
    /// The predicate under which the KRaft metadata records (and the other
    /// stored records) are compiled.
    pub metadata_records: Option<String>,
    /// The predicate under which the JSON form is compiled.
    pub json_form: Option<String>,
    /// The predicate under which the crate that includes the messages
    /// compiles all of them itself. Unless it holds, every generated
    /// function is `#[inline]`, and so compiled only in the crates that
    /// call it (see `emit/inline.rs`). None: no function is marked.
    pub compiled_here: Option<String>,
}

/// Parses a predicate; the generator's own callers check it first (see
/// [`check`]), so a bad one here is a bug.
fn predicate(text: &str) -> TokenStream {
    text.parse().unwrap_or_default()
}

/// Checks that every predicate parses as Rust tokens: the error names the
/// first that does not.
pub fn check(gates: &Gates) -> Result<(), String> {
    let all = gates
        .listeners
        .iter()
        .map(|(_, p)| p)
        .chain(&gates.metadata_records)
        .chain(&gates.json_form)
        .chain(&gates.compiled_here);
    for text in all {
        if text.trim().is_empty() || text.parse::<TokenStream>().is_err() {
            return Err(format!("invalid cfg predicate `{text}`"));
        }
    }
    Ok(())
}

/// `#[cfg(..)]` for a list of predicates: none means always, one is itself,
/// several are `any(..)`.
fn attribute(predicates: &[TokenStream]) -> TokenStream {
    match predicates {
        [] => TokenStream::new(),
        [one] => quote!(#[cfg(#one)]),
        many => quote!(#[cfg(any(#(#many),*))]),
    }
}

impl Gates {
    /// True when nothing is gated.
    pub fn is_empty(&self) -> bool {
        self.listeners.is_empty()
            && self.metadata_records.is_none()
            && self.json_form.is_none()
            && self.compiled_here.is_none()
    }

    /// The attribute every generated function gets: `#[inline]` unless the
    /// crate compiles the messages itself (see [`Gates::compiled_here`]).
    pub fn inline_attribute(&self) -> Option<syn::Attribute> {
        self.compiled_here
            .as_deref()
            .map(|p| super::inline::attribute(&predicate(p)))
    }

    /// The attribute that gates `message`: its API's listeners for a request
    /// or a response (found through the request with its api key, among
    /// `messages`), the records' predicate for stored records, nothing for
    /// headers and data schemas.
    pub fn message(&self, message: &MessageIr, messages: &[MessageIr]) -> TokenStream {
        match message.kind {
            MessageKind::Request => self.listeners_of(&message.listeners),
            MessageKind::Response => messages
                .iter()
                .find(|m| m.kind == MessageKind::Request && m.api_key == message.api_key)
                .map_or_else(TokenStream::new, |request| {
                    self.listeners_of(&request.listeners)
                }),
            MessageKind::Metadata | MessageKind::CoordinatorKey | MessageKind::CoordinatorValue => {
                attribute(
                    &self
                        .metadata_records
                        .iter()
                        .map(|p| predicate(p))
                        .collect::<Vec<_>>(),
                )
            }
            MessageKind::Header | MessageKind::Data => TokenStream::new(),
        }
    }

    /// The attribute of an API served on `listeners`.
    fn listeners_of(&self, listeners: &[String]) -> TokenStream {
        let mut predicates = Vec::new();
        for listener in listeners {
            match self.listeners.iter().find(|(l, _)| l == listener) {
                Some((_, p)) => predicates.push(predicate(p)),
                // Served where nothing gates it: always compiled.
                None => return TokenStream::new(),
            }
        }
        attribute(&predicates)
    }

    /// The attribute of everything that needs at least one API: the
    /// `ApiKey` enum and the body enums.
    pub fn any_api(&self) -> TokenStream {
        attribute(
            &self
                .listeners
                .iter()
                .map(|(_, p)| predicate(p))
                .collect::<Vec<_>>(),
        )
    }

    /// The attribute of what the api enums (`apis`) or the records' enum
    /// (`records`) need, of those that are emitted: compiled when any of
    /// them is.
    pub fn any_of(&self, apis: bool, records: bool) -> TokenStream {
        let mut predicates = Vec::new();
        if apis {
            if self.listeners.is_empty() {
                return TokenStream::new();
            }
            predicates.extend(self.listeners.iter().map(|(_, p)| predicate(p)));
        }
        if records {
            match &self.metadata_records {
                Some(p) => predicates.push(predicate(p)),
                None => return TokenStream::new(),
            }
        }
        attribute(&predicates)
    }

    /// The attribute of the records' enum.
    pub fn records(&self) -> TokenStream {
        self.any_of(false, true)
    }

    /// The attribute of the JSON form.
    pub fn json(&self) -> TokenStream {
        attribute(
            &self
                .json_form
                .iter()
                .map(|p| predicate(p))
                .collect::<Vec<_>>(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_make_attributes() {
        let gates = Gates {
            listeners: vec![
                ("broker".into(), r#"feature = "client-apis""#.into()),
                ("controller".into(), r#"feature = "controller-apis""#.into()),
            ],
            metadata_records: Some(r#"feature = "controller-apis""#.into()),
            json_form: Some(r#"feature = "json""#.into()),
            compiled_here: Some(r#"feature = "precompile""#.into()),
        };
        assert!(check(&gates).is_ok());
        let text = |tokens: TokenStream| tokens.to_string().replace(' ', "");
        assert_eq!(
            text(gates.listeners_of(&["broker".into()])),
            r#"#[cfg(feature="client-apis")]"#
        );
        assert_eq!(
            text(gates.listeners_of(&["broker".into(), "controller".into()])),
            r#"#[cfg(any(feature="client-apis",feature="controller-apis"))]"#
        );
        assert_eq!(text(gates.listeners_of(&["zkBroker".into()])), "");
        assert_eq!(text(gates.json()), r#"#[cfg(feature="json")]"#);
        assert_eq!(text(Gates::default().any_api()), "");
        let bad = Gates {
            json_form: Some("feature = \"".into()),
            ..Gates::default()
        };
        assert!(check(&bad).is_err());
    }
}
