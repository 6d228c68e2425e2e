//! Emits the struct definitions, with their documentation and defaults.

use proc_macro2::TokenStream;
use quote::quote;

use super::common::{default_is_derivable, default_value, field_ident, field_type};
use super::doc_comments::field_doc;
use crate::ir::{MessageIr, StructIr};
use crate::rust_source::{doc_attrs, ident};

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
