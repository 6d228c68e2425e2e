//! Emits `Decode` for each struct: `decode_from`, one read per field or
//! run of fixed-width fields, with version branches only where the IR left
//! them, then the tagged-field section; and, for the structs that arrays
//! hold or that nest in them, `validate_from`, the same reads with nothing
//! kept.
//!
//! A message's root struct gets no `validate_from`: nothing holds it, so
//! only `Message::validate` checks it, and the trait's default (decode and
//! drop, with a reader that keeps every array as checked bytes) does that
//! at the cost of building one struct of borrowed fields.

use proc_macro2::TokenStream;
use quote::quote;

use super::common::{
    bind_flexible, choose, choose_flexible, compact_arg, cond_tokens, default_value, field_ident,
    field_type, flexible_cond, mentions_local, negate, paren, scalar_type, struct_type, when,
    when_flexible,
};
use super::runs::{pieces, run_layout, run_method, run_width, Piece};
use crate::ir::{Cond, FieldIr, FieldKind, StructIr};
use crate::primitives::Scalar;
use crate::rust_source::ident;

/// The `impl Decode` block of one struct; `validate_from` only when
/// `validator` (every struct but a message's root).
pub fn decode_impl(s: &StructIr, structs: &[StructIr], validator: bool) -> TokenStream {
    let ty = struct_type(&s.type_name, structs);
    // Each field is read into a local, in wire order, and the struct is
    // built once at the end, straight into the return value: a struct built
    // first and then changed by the tagged section would be copied out whole.
    let pieces = pieces(&s.fields);
    let reads = pieces.iter().map(|piece| match piece {
        Piece::Single(field) => decode_single(field, structs),
        Piece::Run { cond, fields } => decode_run(*cond, fields),
    });
    let fields = s.fields.iter().map(|field| {
        let name = field_ident(field);
        let local = local_ident(field);
        if name == local {
            quote!(#name,)
        } else {
            quote!(#name: #local,)
        }
    });
    let body = if s.flexible.is_possible() {
        let tagged_section = decode_tagged_section(s);
        quote! {
            #(#reads)*
            #tagged_section
            Ok(Self {
                #(#fields)*
                unknown_tagged_fields,
            })
        }
    } else {
        quote! {
            #(#reads)*
            Ok(Self { #(#fields)* })
        }
    };
    let body = bind_flexible(s.flexible, body);
    let version = version_param(&body);
    let checks = pieces.iter().map(|piece| match piece {
        Piece::Single(field) => {
            let read = read_field(field, false, Mode::Validate);
            when(field.untagged, quote!(#read;))
        }
        Piece::Run { cond, fields } => {
            let (width, layout) = (run_width(fields), run_layout(fields));
            when(*cond, quote!(r.skip_fixed(#width, #layout)?;))
        }
    });
    let skip_tagged = validate_tagged_section(s);
    let check_body = quote! {
        #(#checks)*
        #skip_tagged
        Ok(())
    };
    let check_body = bind_flexible(s.flexible, check_body);
    let check_version = version_param(&check_body);
    let validate = validator.then(|| {
        quote! {
            fn validate_from(r: &mut rt::Reader<'a>, #check_version: i16) -> Result<(), rt::DecodeError> {
                #check_body
            }
        }
    });
    let holds_arrays = holds_struct_arrays(s, structs).then(|| {
        quote! {
            const HOLDS_STRUCT_ARRAYS: bool = true;
        }
    });
    quote! {
        impl<'a> rt::Decode<'a> for #ty {
            #holds_arrays

            fn decode_from(r: &mut rt::Reader<'a>, #version: i16) -> Result<Self, rt::DecodeError> {
                #body
            }

            #validate
        }
    }
}

/// `let field = ..;`, reading one field into its local: its value where
/// it is not tagged, else its default, which the tagged section may
/// replace.
fn decode_single(field: &FieldIr, structs: &[StructIr]) -> TokenStream {
    let local = local_ident(field);
    let value = choose(
        field.untagged,
        read_field(field, false, Mode::Decode),
        default_value(field),
    );
    // An empty byte string's default (`&[]`) has no type of its own.
    if matches!(field.kind, FieldKind::Bytes | FieldKind::Records) {
        let ty = field_type(field, structs);
        quote!(let #local: #ty = #value;)
    } else {
        quote!(let #local = #value;)
    }
}

/// The reads of a run of fixed-width fields into their locals: one length
/// check, then each field at its offset; where the run is not always in the
/// body, all of them or all their defaults.
fn decode_run(cond: Cond, fields: &[(&FieldIr, Scalar)]) -> TokenStream {
    let (width, layout) = (run_width(fields), run_layout(fields));
    let take = quote!(let mut fixed: rt::FixedFields<#width> = r.read_fixed(#layout)?;);
    let locals = fields.iter().map(|(field, _)| local_ident(field));
    let values = fields.iter().map(|(_, scalar)| {
        let method = run_method(*scalar);
        quote!(fixed.#method())
    });
    if cond == Cond::Always {
        return quote! {
            #take
            #(let #locals = #values;)*
        };
    }
    let c = cond_tokens(cond);
    let defaults = fields.iter().map(|(field, _)| default_value(field));
    quote! {
        let (#(#locals),*) = if #c {
            #take
            (#(#values),*)
        } else {
            (#(#defaults),*)
        };
    }
}

/// Whether a value of `s` holds arrays of structs that are never null,
/// directly or in a nested struct field. Arrays that may be null (a Fetch
/// partition's aborted transactions) are usually absent or short, so
/// checking them once more when their element is read costs less than
/// decoding the outer array up front.
fn holds_struct_arrays(s: &StructIr, structs: &[StructIr]) -> bool {
    s.fields.iter().any(|field| match &field.kind {
        FieldKind::StructArray(_) => field.nullable_versions.is_empty(),
        FieldKind::Struct(name) => structs
            .iter()
            .find(|inner| &inner.type_name == name)
            .is_some_and(|inner| holds_struct_arrays(inner, structs)),
        _ => false,
    })
}

/// The local a field is read into: its own name, unless that would hide
/// the `version` parameter or the reader `r`, or a local the tagged section
/// uses.
fn local_ident(field: &FieldIr) -> proc_macro2::Ident {
    match field.rust_name.as_str() {
        "version" | "flexible" | "r" | "tag" | "fixed" | "unknown_tagged_fields" => {
            ident(&format!("{}_value", field.rust_name))
        }
        _ => field_ident(field),
    }
}

/// What the generated reads are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Build the value.
    Decode,
    /// Check the input and build nothing.
    Validate,
}

/// `version`, or `_version` when the body never looks at it. A field
/// named `version` (`self.version`) does not count.
pub fn version_param(body: &TokenStream) -> TokenStream {
    if mentions_local(body.clone(), "version") {
        quote!(version)
    } else {
        quote!(_version)
    }
}

/// Reads the tagged-field section into the locals of the tagged fields and
/// `unknown_tagged_fields`. The usual section, a single zero count, is
/// taken apart from the others: its locals keep the values read before
/// (their defaults, or the field's untagged value in versions where it has
/// one) without their address ever being taken, so that they stay in
/// registers; only a section with fields goes through the callback that
/// assigns them.
fn decode_tagged_section(s: &StructIr) -> TokenStream {
    let Some(callback) = tag_callback(s, Mode::Decode) else {
        let read = choose_flexible(
            s.flexible,
            quote!(r.read_unknown_tagged_section()?),
            quote!(rt::UnknownTaggedFields::new()),
        );
        return quote!(let unknown_tagged_fields = #read;);
    };
    let locals: Vec<_> = s
        .fields
        .iter()
        .filter(|field| field.tagged.is_some())
        .map(local_ident)
        .collect();
    let fields_present = match s.flexible {
        Cond::Always => quote!(!r.skip_empty_tagged_section()),
        flexible => {
            let c = flexible_cond(flexible);
            quote!(#c && !r.skip_empty_tagged_section())
        }
    };
    quote! {
        let (#(#locals,)* unknown_tagged_fields) = if #fields_present {
            #(let mut #locals = #locals;)*
            let mut unknown_tagged_fields = rt::UnknownTaggedFields::new();
            r.read_tagged_fields(&mut unknown_tagged_fields, #callback)?;
            (#(#locals,)* unknown_tagged_fields)
        } else {
            (#(#locals,)* rt::UnknownTaggedFields::new())
        };
    }
}

/// Checks the tagged-field section where the struct is flexible, with one
/// match arm per known tag.
fn validate_tagged_section(s: &StructIr) -> TokenStream {
    let read = match tag_callback(s, Mode::Validate) {
        Some(callback) => quote!(r.skip_tagged_fields(#callback)?;),
        None => quote!(r.skip_unknown_tagged_section()?;),
    };
    when_flexible(s.flexible, read)
}

/// The callback that reads the struct's known tagged fields, one match arm
/// per tag (into the field's local in [`Mode::Decode`]), or `None` when it
/// has none.
fn tag_callback(s: &StructIr, mode: Mode) -> Option<TokenStream> {
    let arms: Vec<_> = s
        .fields
        .iter()
        .filter_map(|field| {
            let (tag, cond) = field.tagged?;
            // The section is only read where the struct is flexible.
            let cond = cond.given(s.flexible);
            let read = read_field(field, true, mode);
            let local = local_ident(field);
            let keep = match mode {
                Mode::Decode => quote!(#local = #read;),
                Mode::Validate => quote!(#read;),
            };
            let check = match cond {
                Cond::Always => TokenStream::new(),
                _ => {
                    let absent = negate(cond);
                    quote! {
                        if #absent {
                            return Err(r.error(rt::DecodeErrorKind::TagNotInVersion(#tag)));
                        }
                    }
                }
            };
            Some(quote! {
                #tag => {
                    #check
                    #keep
                }
            })
        })
        .collect();
    (!arms.is_empty()).then(|| {
        quote! {
            |tag, r| {
                match tag {
                    #(#arms)*
                    _ => return Ok(false),
                }
                Ok(true)
            }
        }
    })
}

/// An expression of the field's Rust type, reading it and naming the field
/// in any error.
fn read_field(field: &FieldIr, tagged: bool, mode: Mode) -> TokenStream {
    let read = read_value(field, tagged, mode);
    let name = &field.rust_name;
    quote!(#read.in_field(#name)?)
}

/// A `Result` expression reading the field's value; in [`Mode::Validate`],
/// nested structs are only checked.
fn read_value(field: &FieldIr, tagged: bool, mode: Mode) -> TokenStream {
    let k = compact_arg(field, tagged);
    let (nullable, plain) = match &field.kind {
        FieldKind::Scalar(s) => return read_scalar(*s),
        FieldKind::String => (
            quote!(r.read_nullable_string(#k)),
            quote!(r.read_string(#k)),
        ),
        FieldKind::Bytes | FieldKind::Records => {
            (quote!(r.read_nullable_bytes(#k)), quote!(r.read_bytes(#k)))
        }
        FieldKind::ScalarArray(element) => {
            // Named, since a checked array is dropped unseen.
            let element = scalar_type(*element);
            (
                quote!(r.read_nullable_scalar_array::<#element>(#k)),
                quote!(r.read_scalar_array::<#element>(#k)),
            )
        }
        FieldKind::StringArray => {
            let element = match mode {
                Mode::Decode => quote!(r.read_string(#k)),
                // A `Vec<()>` never allocates.
                Mode::Validate => quote!(r.read_string(#k).map(drop)),
            };
            (
                quote!(r.read_nullable_array(#k, |r| #element)),
                quote!(r.read_array(#k, |r| #element)),
            )
        }
        FieldKind::StructArray(name) if mode == Mode::Validate => {
            // Checked in place: no array to build, return and drop.
            let ty = ident(name);
            let plain = quote!(r.skip_struct_array::<#ty>(#k, version));
            if !field.optional {
                return plain;
            }
            let nullable = quote!(r.skip_nullable_struct_array::<#ty>(#k, version));
            return paren(field.nullable, choose(field.nullable, nullable, plain));
        }
        FieldKind::StructArray(name) => {
            let ty = ident(name);
            (
                quote!(r.read_nullable_struct_array::<#ty>(#k, version)),
                quote!(r.read_struct_array::<#ty>(#k, version)),
            )
        }
        FieldKind::Struct(name) => {
            let ty = ident(name);
            let read = match mode {
                Mode::Decode => quote!(#ty::decode_from(r, version)),
                Mode::Validate => quote!(#ty::validate_from(r, version)),
            };
            let nullable = if tagged {
                quote!(r.read_tagged_nullable_struct(|r| #read))
            } else {
                quote!(r.read_nullable_struct(|r| #read))
            };
            (nullable, read)
        }
    };
    if !field.optional {
        return plain;
    }
    paren(
        field.nullable,
        choose(field.nullable, nullable, quote!(#plain.map(Some))),
    )
}

fn read_scalar(scalar: Scalar) -> TokenStream {
    match scalar {
        Scalar::Bool => quote!(r.read_bool()),
        Scalar::Int8 => quote!(r.read_i8()),
        Scalar::Int16 => quote!(r.read_i16()),
        Scalar::Uint16 => quote!(r.read_u16()),
        Scalar::Int32 => quote!(r.read_i32()),
        Scalar::Uint32 => quote!(r.read_u32()),
        Scalar::Int64 => quote!(r.read_i64()),
        Scalar::Float64 => quote!(r.read_f64()),
        Scalar::Uuid => quote!(r.read_uuid()),
    }
}
