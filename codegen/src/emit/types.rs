//! Emits the struct definitions, with their documentation and defaults.

use proc_macro2::TokenStream;
use quote::quote;

use super::common::{
    default_is_derivable, default_value, doc_attrs, field_doc, field_ident, field_type, ident,
};
use crate::ir::{MessageIr, StructIr};

/// The struct definition and its `Default` impl.
pub fn struct_definition(message: &MessageIr, s: &StructIr, doc: &str) -> TokenStream {
    let doc = doc_attrs(doc);
    let structs = &message.structs;
    let name = ident(&s.type_name);
    let generics = if s.has_lifetime {
        quote!(<'a>)
    } else {
        TokenStream::new()
    };
    let anonymous = if s.has_lifetime {
        quote!(<'_>)
    } else {
        TokenStream::new()
    };
    let fields = s.fields.iter().map(|field| {
        let doc = doc_attrs(&field_doc(field));
        let name = field_ident(field);
        let ty = field_type(field, structs);
        quote! {
            #doc
            pub #name: #ty,
        }
    });
    let defaults = s.fields.iter().map(|field| {
        let name = field_ident(field);
        let value = default_value(field);
        quote!(#name: #value,)
    });
    let unknown = s.flexible.is_possible().then(|| {
        quote! {
            /// Tagged fields this schema does not know, kept in tag order so
            /// that they are written back unchanged.
            pub unknown_tagged_fields: rt::UnknownTaggedFields<'a>,
        }
    });
    let unknown_default = s
        .flexible
        .is_possible()
        .then(|| quote!(unknown_tagged_fields: rt::UnknownTaggedFields::new(),));
    if default_is_derivable(s) {
        return quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, Default)]
            pub struct #name #generics {
                #(#fields)*
                #unknown
            }
        };
    }
    quote! {
        #doc
        #[derive(Debug, Clone, PartialEq)]
        pub struct #name #generics {
            #(#fields)*
            #unknown
        }

        impl Default for #name #anonymous {
            fn default() -> Self {
                Self {
                    #(#defaults)*
                    #unknown_default
                }
            }
        }
    }
}

/// The documentation of a message's top-level struct.
pub fn message_doc(message: &MessageIr) -> String {
    let mut doc = about_paragraph(message.about.as_deref());
    doc.push_str(&format!(
        "The `{}` {} schema, versions {}",
        message.name,
        message.kind.as_str(),
        message.valid_versions
    ));
    if let Some(key) = message.api_key {
        doc.push_str(&format!(", key {key}"));
    }
    doc.push('.');
    if !message.flexible_versions.is_empty() {
        doc.push_str(&format!(
            " Flexible from version {}.",
            message.flexible_versions.lowest
        ));
    }
    if message.latest_version_unstable {
        doc.push_str(&format!(
            " Version {} is unstable.",
            message.valid_versions.highest
        ));
    }
    doc
}

/// The documentation of a nested struct: its `about` (a common struct's
/// own, or that of the field declaring it), then where it is used.
pub fn struct_doc(message: &MessageIr, s: &StructIr) -> String {
    let mut doc = about_paragraph(s.about.as_deref());
    doc.push_str(&format!(
        "The `{}` struct of `{}`, used in versions {}.",
        s.schema_name, message.name, s.context
    ));
    doc
}

/// The schema's `about` as the doc's first paragraph, or nothing.
pub fn about_paragraph(about: Option<&str>) -> String {
    about
        .map(|about| format!("{about}\n\n"))
        .unwrap_or_default()
}
