//! Emits `JsonForm` for each struct: camelCase keys, only the fields of the
//! version, tagged fields always shown, unknown tagged fields kept.
//!
//! The shape is written once, as `write_json` calls on the runtime's
//! `JsonWriter`, which writes text or builds the `Value` of `to_json`.

use proc_macro2::TokenStream;
use quote::quote;

use super::common::{choose, cond_tokens, default_value, field_ident, struct_type, when};
use super::decode::version_param;
use crate::ir::{Cond, FieldIr, StructIr};

/// The `impl JsonForm` block of one struct.
pub fn json_impl(s: &StructIr, structs: &[StructIr]) -> TokenStream {
    let ty = struct_type(&s.type_name, structs);
    let generics = if s.has_lifetime {
        quote!(<'a>)
    } else {
        TokenStream::new()
    };
    let writes = s.fields.iter().map(|field| {
        let name = field_ident(field);
        let key = &field.json_name;
        when(
            field.present,
            quote!(out.field(#key, &self.#name, version)?;),
        )
    });
    let write_unknown = s
        .flexible
        .is_possible()
        .then(|| quote!(out.unknown_tagged_fields(&self.unknown_tagged_fields)?;));
    let reads = s.fields.iter().map(|field| {
        let name = field_ident(field);
        let value = read_field(field);
        quote!(#name: #value,)
    });
    let read_unknown = s.flexible.is_possible().then(|| {
        let value = choose(
            s.flexible,
            quote!(object.unknown_tagged_fields()?),
            quote!(rt::UnknownTaggedFields::new()),
        );
        quote!(unknown_tagged_fields: #value,)
    });

    let write_body = quote! {
        out.begin_object()?;
        #(#writes)*
        #write_unknown
        out.end_object()
    };
    let from_body = quote! {
        let mut object = rt::json::JsonObjectReader::new(value)?;
        let decoded = Self {
            #(#reads)*
            #read_unknown
        };
        object.finish()?;
        Ok(decoded)
    };
    let write_version = version_param(&write_body);
    let from_version = version_param(&from_body);
    quote! {
        impl #generics rt::JsonForm for #ty {
            fn write_json(&self, out: &mut rt::json::JsonWriter<'_>, #write_version: i16) -> ::std::io::Result<()> {
                #write_body
            }

            fn from_json(value: &rt::json::Value, #from_version: i16) -> Result<Self, rt::JsonError> {
                #from_body
            }
        }
    }
}

/// Reads one field: required where it is untagged, optional (taking its
/// default) where it is tagged, and its default where it is absent.
fn read_field(field: &FieldIr) -> TokenStream {
    let key = &field.json_name;
    let default = default_value(field);
    let required = quote!(object.required(#key, version)?);
    let optional = quote!(object.optional(#key, version)?.unwrap_or(#default));
    match field.tagged {
        None => choose(field.present, required, default),
        Some((_, tagged)) => {
            let untagged = choose(field.untagged, required, default);
            match tagged {
                Cond::Always => optional,
                Cond::Never => untagged,
                _ => {
                    let c = cond_tokens(tagged);
                    quote!(if #c { #optional } else { #untagged })
                }
            }
        }
    }
}

/// The body enum's `write_json`, for the runtime's `json` feature: each
/// variant writes its message.
pub fn body_write_json(
    variants: impl Iterator<Item = (proc_macro2::Ident, TokenStream)>,
    gate: &TokenStream,
) -> TokenStream {
    let arms = variants.map(
        |(name, gate)| quote!(#gate Self::#name(m) => rt::JsonForm::write_json(m, out, version),),
    );
    quote! {
        /// Writes the JSON form at `version` to `out`, straight from the
        /// message: the text serde_json prints for `to_json`.
        #gate
        pub fn write_json(&self, out: &mut rt::json::JsonWriter<'_>, version: i16) -> ::std::io::Result<()> {
            match self {
                #(#arms)*
            }
        }
    }
}
