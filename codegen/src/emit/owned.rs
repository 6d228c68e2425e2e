//! Emits `IntoOwned` for each struct: borrowed fields are copied, the rest
//! moved. The trait is the one way in (`use kafka_wire::IntoOwned`), for
//! a message as for the generic containers that hold one.
//!
//! Every `into_owned` is `#[inline]`, even where the crate that includes the
//! messages compiles them all itself (see `emit/inline.rs`): few programs
//! keep values past their input, and those keep a few types, so each
//! conversion is compiled in the crates that call it rather than in every
//! build of the library, where it would be a sixth of the machine code.

use proc_macro2::TokenStream;
use quote::quote;

use super::common::{borrows, field_ident, struct_type};
use crate::ir::{FieldIr, FieldKind, StructIr};
use crate::rust_source::ident;

/// The `impl IntoOwned` block of one struct.
pub fn owned_impl(s: &StructIr, structs: &[StructIr]) -> TokenStream {
    let name = ident(&s.type_name);
    let ty = struct_type(&s.type_name, structs);
    if !s.has_lifetime {
        return quote! {
            impl rt::IntoOwned for #ty {
                type Owned = #ty;

                #[inline]
                fn into_owned(self) -> Self {
                    self
                }
            }
        };
    }
    let fields = s.fields.iter().map(|field| {
        let name = field_ident(field);
        if moves_as_is(field, structs) {
            quote!(#name: self.#name,)
        } else {
            quote!(#name: rt::IntoOwned::into_owned(self.#name),)
        }
    });
    let unknown = s.flexible.is_possible().then(
        || quote!(unknown_tagged_fields: rt::IntoOwned::into_owned(self.unknown_tagged_fields),),
    );
    quote! {
        impl<'a> rt::IntoOwned for #ty {
            type Owned = #name<'static>;

            #[inline]
            fn into_owned(self) -> #name<'static> {
                #name {
                    #(#fields)*
                    #unknown
                }
            }
        }
    }
}

/// True when the field's type borrows nothing, so it is moved unchanged.
fn moves_as_is(field: &FieldIr, structs: &[StructIr]) -> bool {
    match &field.kind {
        FieldKind::Scalar(_) => true,
        FieldKind::Struct(name) => !borrows(name, structs),
        _ => false,
    }
}
