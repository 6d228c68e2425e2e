//! Rust source from tokens, for both generators: the messages' emitters
//! ([`crate::emit`]) and the error codes' ([`crate::error_codes`]).
//!
//! It holds what writing any generated file takes, whatever the file is
//! about: identifiers, `#[doc]` attributes, and a file's tokens parsed with
//! `syn` and formatted with `prettyplease`. It imports no stage, so that
//! neither generator imports the other.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::error::EmitError;

/// A Rust identifier, escaped as `r#name` when it is a keyword.
pub fn ident(name: &str) -> Ident {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe",
        "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
        "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
    ];
    if KEYWORDS.contains(&name) {
        Ident::new_raw(name, Span::call_site())
    } else {
        format_ident!("{}", name)
    }
}

/// `#[doc]` attributes, one per line, so that they print as `///` comments.
pub fn doc_attrs(text: &str) -> TokenStream {
    let lines = text.lines().map(|line| {
        let line = if line.is_empty() {
            String::new()
        } else {
            format!(" {line}")
        };
        quote!(#[doc = #line])
    });
    quote!(#(#lines)*)
}

/// Parses `tokens` as the file named `file`; an error names the file.
pub fn parse_file(file: &str, tokens: TokenStream) -> Result<syn::File, EmitError> {
    syn::parse2(tokens).map_err(|e| EmitError {
        file: file.to_owned(),
        message: e.to_string(),
    })
}

/// Formats `parsed` after `header`, with a blank line between top-level
/// items.
pub fn unparse(header: &str, parsed: &syn::File) -> String {
    format!("{header}{}", separate_items(&prettyplease::unparse(parsed)))
}

/// Puts a blank line between top-level items and after the `use` lines,
/// which prettyplease leaves out.
fn separate_items(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut previous = "";
    for line in text.lines() {
        let item_ended = previous == "}" || previous.ends_with("};");
        let uses_ended = previous.starts_with("use ") && !line.starts_with("use ");
        let at_top_level = !line.is_empty() && !line.starts_with(' ') && !line.starts_with('}');
        if (item_ended || uses_ended) && at_top_level {
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
        previous = line;
    }
    out
}
