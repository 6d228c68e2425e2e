//! `cfg` gates: one set of generated files that serves every feature
//! combination of the crate that includes it, each API behind a cargo
//! feature of its own or behind the features of the listeners that serve
//! it, the stored records and the JSON form behind features of their own.
//! A crate that ships its generated code (as kafka-wire does) uses them
//! instead of choosing what to generate.

use heck::ToKebabCase;
use proc_macro2::TokenStream;
use quote::quote;

use crate::ir::MessageIr;
use crate::primitives::MessageKind;

/// What stands for the API's name in [`Gates::each_api`].
const API_PLACEHOLDER: &str = "{api}";

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
    /// The predicate of each API, as a template in which `{api}` stands
    /// for the API's name in kebab-case ([`api_name`]): with
    /// `feature = "{api}"`, Produce is compiled under
    /// `feature = "produce"` and ApiVersions under
    /// `feature = "api-versions"`. It gates the API's request and response
    /// and every item of theirs in the api enums; it cannot be combined
    /// with [`Gates::listeners`] (a feature per API can be enabled by a
    /// feature per listener instead, as kafka-wire's are).
    pub each_api: Option<String>,
    /// The predicate under which what needs at least one API (the `ApiKey`
    /// enum, the body enums, the `Request` trait) is compiled. It must
    /// hold exactly when the predicate of some API does, such as a `cfg`
    /// that the crate's build script sets when any API's feature is on.
    /// None: `any(..)` of the APIs' predicates (of the listeners'
    /// predicates, with [`Gates::listeners`]).
    pub any_api: Option<String>,
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

/// The name of an API as [`Gates::each_api`] puts it for `{api}`: the name
/// of its request or response schema without the `Request` or `Response`
/// suffix, in kebab-case (`ApiVersionsRequest` is `api-versions`).
pub fn api_name(schema_name: &str) -> String {
    schema_name
        .strip_suffix("Request")
        .or_else(|| schema_name.strip_suffix("Response"))
        .unwrap_or(schema_name)
        .to_kebab_case()
}

/// Parses a predicate; the generator's own callers check it first (see
/// [`check`]), so a bad one here is a bug.
fn predicate(text: &str) -> TokenStream {
    text.parse().unwrap_or_default()
}

/// True when `text` parses as Rust tokens.
fn parses(text: &str) -> bool {
    !text.trim().is_empty() && text.parse::<TokenStream>().is_ok()
}

/// Checks that every predicate parses as Rust tokens, that the per-API
/// template names the API, and that APIs are gated one way: the error
/// names the first fault.
pub fn check(gates: &Gates) -> Result<(), String> {
    let all = gates
        .listeners
        .iter()
        .map(|(_, p)| p)
        .chain(&gates.any_api)
        .chain(&gates.metadata_records)
        .chain(&gates.json_form)
        .chain(&gates.compiled_here);
    for text in all {
        if !parses(text) {
            return Err(format!("invalid cfg predicate `{text}`"));
        }
    }
    if let Some(template) = &gates.each_api {
        if !template.contains(API_PLACEHOLDER) {
            return Err(format!(
                "the per-API cfg predicate `{template}` does not name the API with {API_PLACEHOLDER}"
            ));
        }
        if !parses(&template.replace(API_PLACEHOLDER, "api-versions")) {
            return Err(format!("invalid per-API cfg predicate `{template}`"));
        }
        if !gates.listeners.is_empty() {
            return Err(
                "APIs are gated both per listener and per API: choose one (a feature per API \
                 can be enabled by a feature per listener)"
                    .into(),
            );
        }
    }
    Ok(())
}

/// One predicate that holds when any of `predicates` does: none is None,
/// one is itself, several are `any(..)`, each named once.
fn any(predicates: impl IntoIterator<Item = TokenStream>) -> Option<TokenStream> {
    let mut unique: Vec<TokenStream> = Vec::new();
    for p in predicates {
        if !unique.iter().any(|u| u.to_string() == p.to_string()) {
            unique.push(p);
        }
    }
    match unique.len() {
        0 => None,
        1 => unique.pop(),
        _ => Some(quote!(any(#(#unique),*))),
    }
}

/// `#[cfg(..)]` for a predicate, nothing for none (always compiled).
fn attribute(predicate: Option<TokenStream>) -> TokenStream {
    match predicate {
        Some(p) => quote!(#[cfg(#p)]),
        None => TokenStream::new(),
    }
}

impl Gates {
    /// True when nothing is gated.
    pub fn is_empty(&self) -> bool {
        self.listeners.is_empty()
            && self.each_api.is_none()
            && self.any_api.is_none()
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

    /// The attribute that gates `message`: its API's for a request or a
    /// response (a response is served where its request is, found through
    /// the api key among `messages`), the records' predicate for stored
    /// records, nothing for headers and data schemas.
    pub fn message(&self, message: &MessageIr, messages: &[MessageIr]) -> TokenStream {
        match message.kind {
            MessageKind::Request => self.api_attribute(&message.name, &message.listeners),
            MessageKind::Response => {
                let request = messages
                    .iter()
                    .find(|m| m.kind == MessageKind::Request && m.api_key == message.api_key);
                match request {
                    Some(request) => self.api_attribute(&request.name, &request.listeners),
                    // No request says where it is served: only its name
                    // gates it.
                    None if self.each_api.is_some() => self.api_attribute(&message.name, &[]),
                    None => TokenStream::new(),
                }
            }
            MessageKind::Metadata | MessageKind::CoordinatorKey | MessageKind::CoordinatorValue => {
                attribute(self.metadata_records.as_deref().map(predicate))
            }
            MessageKind::Header | MessageKind::Data => TokenStream::new(),
        }
    }

    /// The attribute of the API whose request or response is named `name`
    /// and served on `listeners`.
    fn api_attribute(&self, name: &str, listeners: &[String]) -> TokenStream {
        attribute(self.api_predicate(name, listeners))
    }

    /// The predicate of the API whose request or response is named `name`
    /// and served on `listeners`; None when it is always compiled.
    fn api_predicate(&self, name: &str, listeners: &[String]) -> Option<TokenStream> {
        match &self.each_api {
            Some(template) => Some(predicate(
                &template.replace(API_PLACEHOLDER, &api_name(name)),
            )),
            None => self.listener_predicate(listeners),
        }
    }

    /// The attribute of an API served on `listeners`, by the listeners'
    /// predicates.
    #[cfg(test)]
    fn listeners_of(&self, listeners: &[String]) -> TokenStream {
        attribute(self.listener_predicate(listeners))
    }

    /// The predicate of an API served on `listeners`, by the listeners'
    /// predicates; None when it is always compiled.
    fn listener_predicate(&self, listeners: &[String]) -> Option<TokenStream> {
        let mut predicates = Vec::new();
        for listener in listeners {
            match self.listeners.iter().find(|(l, _)| l == listener) {
                Some((_, p)) => predicates.push(predicate(p)),
                // Served where nothing gates it: always compiled.
                None => return None,
            }
        }
        any(predicates)
    }

    /// The attribute of everything that needs at least one of the APIs
    /// whose requests are among `messages`: the `ApiKey` enum, the body
    /// enums and the `Request` trait.
    pub fn any_api(&self, messages: &[MessageIr]) -> TokenStream {
        self.any_of(messages, true, false)
    }

    /// The predicates under one of which what needs at least one of `apis`
    /// (each a request's name and listeners) is compiled; None when one of
    /// them is always compiled, and so all of that is.
    fn any_api_predicates<'m>(
        &self,
        apis: impl IntoIterator<Item = (&'m str, &'m [String])>,
    ) -> Option<Vec<TokenStream>> {
        let mut each = Vec::new();
        for (name, listeners) in apis {
            each.push(self.api_predicate(name, listeners)?);
        }
        Some(match (&self.any_api, &self.each_api) {
            (Some(p), _) => vec![predicate(p)],
            (None, Some(_)) => each,
            (None, None) => self.listeners.iter().map(|(_, p)| predicate(p)).collect(),
        })
    }

    /// The attribute of what the api enums (`apis`) or the records' enum
    /// (`records`) need, of those that are emitted (the APIs are those
    /// whose requests are among `messages`): compiled when any of them is.
    pub fn any_of(&self, messages: &[MessageIr], apis: bool, records: bool) -> TokenStream {
        let mut predicates = Vec::new();
        if apis {
            match self.any_api_predicates(requests(messages)) {
                Some(p) => predicates.extend(p),
                None => return TokenStream::new(),
            }
        }
        if records {
            match &self.metadata_records {
                Some(p) => predicates.push(predicate(p)),
                None => return TokenStream::new(),
            }
        }
        attribute(any(predicates))
    }

    /// The attribute of the records' enum.
    pub fn records(&self) -> TokenStream {
        self.any_of(&[], false, true)
    }

    /// The attribute of the JSON form.
    pub fn json(&self) -> TokenStream {
        attribute(self.json_form.as_deref().map(predicate))
    }
}

/// The name and listeners of each request among `messages`.
fn requests(messages: &[MessageIr]) -> impl Iterator<Item = (&str, &[String])> {
    messages
        .iter()
        .filter(|m| m.kind == MessageKind::Request)
        .map(|m| (m.name.as_str(), m.listeners.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(tokens: TokenStream) -> String {
        tokens.to_string().replace(' ', "")
    }

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
            ..Gates::default()
        };
        assert!(check(&gates).is_ok());
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
        assert_eq!(text(Gates::default().any_api(&[])), "");
        // The records' predicate is one of the listeners': named once.
        assert_eq!(
            text(gates.any_of(&[], true, true)),
            r#"#[cfg(any(feature="client-apis",feature="controller-apis"))]"#
        );
        let bad = Gates {
            json_form: Some("feature = \"".into()),
            ..Gates::default()
        };
        assert!(check(&bad).is_err());
    }

    #[test]
    fn each_api_gets_a_predicate_of_its_own() {
        assert_eq!(api_name("ProduceRequest"), "produce");
        assert_eq!(api_name("ApiVersionsResponse"), "api-versions");
        assert_eq!(
            api_name("DescribeUserScramCredentialsRequest"),
            "describe-user-scram-credentials"
        );
        let mut gates = Gates {
            each_api: Some(r#"feature = "{api}""#.into()),
            ..Gates::default()
        };
        assert!(check(&gates).is_ok());
        let broker = ["broker".to_owned()];
        let both = ["broker".to_owned(), "controller".to_owned()];
        assert_eq!(
            text(gates.api_attribute("ApiVersionsRequest", &both)),
            r#"#[cfg(feature="api-versions")]"#
        );
        // Without a predicate for the section, it is any of the APIs'.
        let apis = [("ProduceRequest", &broker[..]), ("FetchRequest", &both[..])];
        assert_eq!(
            text(attribute(gates.any_api_predicates(apis).and_then(any))),
            r#"#[cfg(any(feature="produce",feature="fetch"))]"#
        );
        gates.any_api = Some("kafka_apis".into());
        assert_eq!(
            text(attribute(gates.any_api_predicates(apis).and_then(any))),
            "#[cfg(kafka_apis)]"
        );
        // The template must name the API, parse once it does, and not be
        // mixed with listener gates.
        let no_name = Gates {
            each_api: Some(r#"feature = "apis""#.into()),
            ..Gates::default()
        };
        assert!(check(&no_name).is_err());
        let unparsable = Gates {
            each_api: Some(r#"feature = "{api}"#.into()),
            ..Gates::default()
        };
        assert!(check(&unparsable).is_err());
        let mixed = Gates {
            listeners: vec![("broker".into(), r#"feature = "client-apis""#.into())],
            ..gates
        };
        assert!(check(&mixed).is_err());
    }
}
