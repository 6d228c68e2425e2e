//! `#[inline]` on every generated function, under a `cfg` predicate's
//! negation (see [`Gates::compiled_here`](super::Gates::compiled_here)).
//!
//! Rust compiles a function that is neither generic nor `#[inline]` in the
//! crate that defines it, whether or not any dependent calls it. A library
//! that ships the generated messages would then compile all of them, in
//! every user's build, for the few that a user calls. Marked `#[inline]`,
//! a function is compiled only in the crates that use it, and only when
//! they do. Where the predicate holds, the attribute is off and the
//! library compiles every message itself, once: for programs that use most
//! of them, whose own rebuilds then compile none.

use proc_macro2::TokenStream;
use syn::visit_mut::{self, VisitMut};

/// Adds `attribute` to every function and method in `file` that has no
/// `#[inline]` of its own.
pub(super) fn mark_functions(file: &mut syn::File, attribute: &syn::Attribute) {
    Marker { attribute }.visit_file_mut(file);
}

/// The `#[cfg_attr(not(predicate), inline)]` attribute.
pub(super) fn attribute(predicate: &TokenStream) -> syn::Attribute {
    syn::parse_quote!(#[cfg_attr(not(#predicate), inline)])
}

struct Marker<'a> {
    attribute: &'a syn::Attribute,
}

impl Marker<'_> {
    fn mark(&self, attrs: &mut Vec<syn::Attribute>) {
        if !attrs.iter().any(|a| a.path().is_ident("inline")) {
            attrs.push(self.attribute.clone());
        }
    }
}

impl VisitMut for Marker<'_> {
    fn visit_item_fn_mut(&mut self, function: &mut syn::ItemFn) {
        self.mark(&mut function.attrs);
        visit_mut::visit_item_fn_mut(self, function);
    }

    fn visit_impl_item_fn_mut(&mut self, function: &mut syn::ImplItemFn) {
        self.mark(&mut function.attrs);
        visit_mut::visit_impl_item_fn_mut(self, function);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn every_function_gets_the_attribute_once() {
        let mut file: syn::File = syn::parse2(quote! {
            fn free() {}
            impl A { pub fn method(&self) {} #[inline] fn already() {} }
            impl T for A { fn required(&self) { fn nested() {} } }
            struct A;
        })
        .expect("test source parses");
        mark_functions(&mut file, &attribute(&quote!(feature = "precompile")));
        let text = prettyplease::unparse(&file);
        assert_eq!(
            text.matches(r#"#[cfg_attr(not(feature = "precompile"), inline)]"#)
                .count(),
            4,
            "{text}"
        );
        assert_eq!(text.matches("#[inline]").count(), 1, "{text}");
    }
}
