//! Pieces every emitter needs: identifiers, conditions, Rust types and
//! default values of fields.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

use crate::ir::{Cond, FieldIr, FieldKind, StructIr};
use crate::primitives::{DefaultValue, Scalar};
use crate::rust_source::ident;

/// The field's identifier.
pub fn field_ident(field: &FieldIr) -> Ident {
    ident(&field.rust_name)
}

/// `version >= 3`, `version <= 5`, `(3..=5).contains(&version)` or
/// `version == 4`. Callers never pass `Always` or `Never`; those are
/// decided at generation time.
pub fn cond_tokens(cond: Cond) -> TokenStream {
    match cond {
        Cond::Always => quote!(true),
        Cond::Never => quote!(false),
        Cond::Between {
            lowest: Some(lo),
            highest: Some(hi),
        } if lo == hi => {
            let v = Literal::i16_unsuffixed(lo);
            quote!(version == #v)
        }
        Cond::Between {
            lowest: Some(lo),
            highest: Some(hi),
        } => {
            let (lo, hi) = (Literal::i16_unsuffixed(lo), Literal::i16_unsuffixed(hi));
            quote!((#lo..=#hi).contains(&version))
        }
        Cond::Between {
            lowest: Some(lo),
            highest: None,
        } => {
            let lo = Literal::i16_unsuffixed(lo);
            quote!(version >= #lo)
        }
        Cond::Between {
            lowest: None,
            highest: Some(hi),
        } => {
            let hi = Literal::i16_unsuffixed(hi);
            quote!(version <= #hi)
        }
        Cond::Between {
            lowest: None,
            highest: None,
        } => quote!(true),
    }
}

/// The negation of a condition, written the way a person would.
pub fn negate(cond: Cond) -> TokenStream {
    match cond {
        Cond::Always => quote!(false),
        Cond::Never => quote!(true),
        Cond::Between {
            lowest: Some(lo),
            highest: None,
        } => {
            let lo = proc_macro2::Literal::i16_unsuffixed(lo);
            quote!(version < #lo)
        }
        Cond::Between {
            lowest: None,
            highest: Some(hi),
        } => {
            let hi = proc_macro2::Literal::i16_unsuffixed(hi);
            quote!(version > #hi)
        }
        Cond::Between {
            lowest: Some(lo),
            highest: Some(hi),
        } if lo == hi => {
            let v = proc_macro2::Literal::i16_unsuffixed(lo);
            quote!(version != #v)
        }
        _ => {
            let c = cond_tokens(cond);
            quote!(!#c)
        }
    }
}

/// The struct's flexible-versions condition in a function body: the local
/// `flexible` where it depends on the version (see [`bind_flexible`]),
/// else `true` or `false`.
pub fn flexible_cond(flexible: Cond) -> TokenStream {
    match flexible {
        Cond::Always | Cond::Never => cond_tokens(flexible),
        _ => quote!(flexible),
    }
}

/// The `compact` argument of a length-prefixed read, write or size: the
/// local `flexible` where the field's length form depends on the version
/// (within its versions it is compact exactly where the struct is
/// flexible), else `rt::COMPACT` or `rt::CLASSIC`, never a bare `true` or
/// `false`. A tagged field is always compact.
pub fn compact_arg(field: &FieldIr, tagged: bool) -> TokenStream {
    match field.compact {
        _ if tagged => quote!(rt::COMPACT),
        Cond::Always => quote!(rt::COMPACT),
        Cond::Never => quote!(rt::CLASSIC),
        _ => quote!(flexible),
    }
}

/// [`when`] for the struct's flexible versions, naming them `flexible`.
pub fn when_flexible(flexible: Cond, body: TokenStream) -> TokenStream {
    match flexible {
        Cond::Always | Cond::Never => when(flexible, body),
        _ => quote!(if flexible { #body }),
    }
}

/// [`choose`] on the struct's flexible versions, naming them `flexible`.
pub fn choose_flexible(flexible: Cond, then: TokenStream, otherwise: TokenStream) -> TokenStream {
    match flexible {
        Cond::Always | Cond::Never => choose(flexible, then, otherwise),
        _ => quote!(if flexible { #then } else { #otherwise }),
    }
}

/// `let flexible = version >= N;` at the top of a function body that uses
/// the local `flexible`, bound once rather than the condition written out
/// at every use.
pub fn bind_flexible(flexible: Cond, body: TokenStream) -> TokenStream {
    if !mentions_local(body.clone(), "flexible") {
        return body;
    }
    let c = cond_tokens(flexible);
    quote! {
        let flexible = #c;
        #body
    }
}

/// True when `tokens` read the local or parameter `name`: not a field
/// access (`.name`) and not a field name in a struct literal (`name: ..`).
pub fn mentions_local(tokens: TokenStream, name: &str) -> bool {
    let tokens: Vec<_> = tokens.into_iter().collect();
    tokens.iter().enumerate().any(|(i, token)| match token {
        proc_macro2::TokenTree::Group(g) => mentions_local(g.stream(), name),
        proc_macro2::TokenTree::Ident(ident) if ident == name => {
            let after_dot = i > 0
                && matches!(&tokens[i - 1], proc_macro2::TokenTree::Punct(p) if p.as_char() == '.');
            let field_name = matches!(
                tokens.get(i + 1),
                Some(proc_macro2::TokenTree::Punct(p))
                    if p.as_char() == ':' && p.spacing() == proc_macro2::Spacing::Alone
            );
            !after_dot && !field_name
        }
        _ => false,
    })
}

/// Wraps `body` in `if cond { .. }`, or emits it bare, or not at all.
pub fn when(cond: Cond, body: TokenStream) -> TokenStream {
    match cond {
        Cond::Always => body,
        Cond::Never => TokenStream::new(),
        _ => {
            let c = cond_tokens(cond);
            quote!(if #c { #body })
        }
    }
}

/// `then` when `cond` holds, `otherwise` when not, as an expression.
pub fn choose(cond: Cond, then: TokenStream, otherwise: TokenStream) -> TokenStream {
    match cond {
        Cond::Always => then,
        Cond::Never => otherwise,
        _ => {
            let c = cond_tokens(cond);
            quote!(if #c { #then } else { #otherwise })
        }
    }
}

/// Parenthesizes an expression built by [`choose`] when it is a branch, so
/// that a method can be called on it.
pub fn paren(cond: Cond, expr: TokenStream) -> TokenStream {
    match cond {
        Cond::Always | Cond::Never => expr,
        _ => quote!((#expr)),
    }
}

/// The Rust type of a scalar.
pub fn scalar_type(scalar: Scalar) -> TokenStream {
    match scalar {
        Scalar::Bool => quote!(bool),
        Scalar::Int8 => quote!(i8),
        Scalar::Int16 => quote!(i16),
        Scalar::Uint16 => quote!(u16),
        Scalar::Int32 => quote!(i32),
        Scalar::Uint32 => quote!(u32),
        Scalar::Int64 => quote!(i64),
        Scalar::Float64 => quote!(f64),
        Scalar::Uuid => quote!(rt::Uuid),
    }
}

/// The name of a struct type, with `<'a>` when it borrows.
pub fn struct_type(name: &str, structs: &[StructIr]) -> TokenStream {
    let ty = ident(name);
    if borrows(name, structs) {
        quote!(#ty<'a>)
    } else {
        quote!(#ty)
    }
}

/// True when the named struct has a lifetime.
pub fn borrows(name: &str, structs: &[StructIr]) -> bool {
    structs
        .iter()
        .any(|s| s.type_name == name && s.has_lifetime)
}

/// The Rust type of a field, without the `Option` for nullable fields.
pub fn value_type(field: &FieldIr, structs: &[StructIr]) -> TokenStream {
    match &field.kind {
        FieldKind::Scalar(s) => scalar_type(*s),
        FieldKind::String => quote!(Cow<'a, str>),
        FieldKind::Bytes | FieldKind::Records => quote!(Cow<'a, [u8]>),
        FieldKind::ScalarArray(s) => {
            let element = scalar_type(*s);
            quote!(rt::ScalarArray<'a, #element>)
        }
        FieldKind::StringArray => quote!(Vec<Cow<'a, str>>),
        FieldKind::StructArray(name) => {
            let ty = struct_type(name, structs);
            quote!(rt::StructArray<'a, #ty>)
        }
        FieldKind::Struct(name) => struct_type(name, structs),
    }
}

/// The Rust type of a field.
pub fn field_type(field: &FieldIr, structs: &[StructIr]) -> TokenStream {
    let ty = value_type(field, structs);
    if field.optional {
        quote!(Option<#ty>)
    } else {
        ty
    }
}

/// The natural default of a field's value type, ignoring nullability.
fn natural_default(kind: &FieldKind) -> TokenStream {
    match kind {
        FieldKind::Scalar(Scalar::Bool) => quote!(false),
        FieldKind::Scalar(Scalar::Uuid) => quote!(rt::Uuid::ZERO),
        FieldKind::Scalar(Scalar::Float64) => quote!(0.0),
        FieldKind::Scalar(_) => quote!(0),
        FieldKind::String => quote!(Cow::Borrowed("")),
        FieldKind::Bytes | FieldKind::Records => quote!(Cow::Borrowed(&[])),
        FieldKind::ScalarArray(_) => quote!(rt::ScalarArray::new()),
        FieldKind::StringArray => quote!(Vec::new()),
        FieldKind::StructArray(_) => quote!(rt::StructArray::new()),
        FieldKind::Struct(name) => {
            let ty = ident(name);
            quote!(#ty::default())
        }
    }
}

/// The field's default value as a Rust expression of its type.
pub fn default_value(field: &FieldIr) -> TokenStream {
    let value = match (&field.default, &field.kind) {
        (DefaultValue::Null, _) => return quote!(None),
        (DefaultValue::Implicit, FieldKind::Records) => return quote!(None),
        (DefaultValue::Implicit, kind) => natural_default(kind),
        (DefaultValue::Bool(b), _) => quote!(#b),
        (DefaultValue::Int(n), FieldKind::Scalar(scalar)) => int_literal(*n, *scalar),
        (DefaultValue::Int(n), _) => {
            let lit = Literal::i128_unsuffixed(*n);
            quote!(#lit)
        }
        (DefaultValue::Float(f), _) => {
            let lit = Literal::f64_unsuffixed(*f);
            quote!(#lit)
        }
        (DefaultValue::String(s), _) => quote!(Cow::Borrowed(#s)),
        (DefaultValue::Uuid(bytes), _) if bytes.iter().all(|b| *b == 0) => quote!(rt::Uuid::ZERO),
        (DefaultValue::Uuid(bytes), _) => {
            let bytes = bytes.iter().map(|b| Literal::u8_unsuffixed(*b));
            quote!(rt::Uuid([#(#bytes),*]))
        }
    };
    if field.optional {
        quote!(Some(#value))
    } else {
        value
    }
}

/// An integer default as a person writes it: an extreme of its type by
/// name (`i32::MIN`), a large `int64` in hex, any other in decimal.
fn int_literal(n: i128, scalar: Scalar) -> TokenStream {
    let lit = Literal::i128_unsuffixed(n);
    if let Some(extreme) = int_extreme(n, scalar) {
        return extreme;
    }
    match scalar {
        // A hex default such as 0xcafcacafcacafca reads best in hex.
        Scalar::Int64 if n > 0xffff => {
            let hex: TokenStream = format!("{n:#x}").parse().unwrap_or_else(|_| quote!(#lit));
            hex
        }
        _ => quote!(#lit),
    }
}

/// `i32::MIN` and the like, when `n` is the least or greatest value of the
/// scalar's type.
fn int_extreme(n: i128, scalar: Scalar) -> Option<TokenStream> {
    let (ty, min, max) = match scalar {
        Scalar::Int8 => (quote!(i8), i128::from(i8::MIN), i128::from(i8::MAX)),
        Scalar::Int16 => (quote!(i16), i128::from(i16::MIN), i128::from(i16::MAX)),
        Scalar::Uint16 => (quote!(u16), i128::from(u16::MIN), i128::from(u16::MAX)),
        Scalar::Int32 => (quote!(i32), i128::from(i32::MIN), i128::from(i32::MAX)),
        Scalar::Uint32 => (quote!(u32), i128::from(u32::MIN), i128::from(u32::MAX)),
        Scalar::Int64 => (quote!(i64), i128::from(i64::MIN), i128::from(i64::MAX)),
        _ => return None,
    };
    // Zero, the least unsigned value, stays `0`.
    if n == min && n != 0 {
        Some(quote!(#ty::MIN))
    } else if n == max {
        Some(quote!(#ty::MAX))
    } else {
        None
    }
}

/// An expression that is true when the field's value differs from its
/// default. Floats compare by bits, so that -0.0 and NaN are not lost.
pub fn differs_from_default(field: &FieldIr) -> TokenStream {
    let name = field_ident(field);
    let default = default_value(field);
    match &field.kind {
        FieldKind::Scalar(Scalar::Float64) if !field.optional => {
            quote!(self.#name.to_bits() != f64::to_bits(#default))
        }
        FieldKind::String
        | FieldKind::Bytes
        | FieldKind::StringArray
        | FieldKind::StructArray(_)
        | FieldKind::ScalarArray(_)
            if !field.optional && matches!(field.default, DefaultValue::Implicit) =>
        {
            quote!(!self.#name.is_empty())
        }
        FieldKind::Scalar(Scalar::Bool) if !field.optional => {
            if matches!(field.default, DefaultValue::Bool(true)) {
                quote!(!self.#name)
            } else {
                quote!(self.#name)
            }
        }
        _ if field.optional && matches!(field.default, DefaultValue::Null) => {
            quote!(self.#name.is_some())
        }
        _ => quote!(self.#name != #default),
    }
}

/// True when `#[derive(Default)]` gives every field its schema default.
pub fn default_is_derivable(s: &StructIr) -> bool {
    s.fields.iter().all(|f| match &f.default {
        DefaultValue::Null => true,
        DefaultValue::Implicit => !f.optional || f.kind == FieldKind::Records,
        DefaultValue::Bool(b) => !f.optional && !b,
        DefaultValue::Int(n) => !f.optional && *n == 0,
        DefaultValue::Float(x) => !f.optional && x.to_bits() == 0,
        DefaultValue::String(s) => !f.optional && s.is_empty(),
        DefaultValue::Uuid(bytes) => !f.optional && bytes.iter().all(|b| *b == 0),
    })
}
