//! Emits `Encode` for each struct: the writer and its exact size, side by
//! side, so that the two can be read against each other. Runs of
//! fixed-width fields are written as one block (see `runs`).

use proc_macro2::TokenStream;
use quote::quote;

use super::common::{
    bind_flexible, choose, compact_arg, cond_tokens, differs_from_default, field_ident,
    flexible_cond, negate, paren, struct_type, when,
};
use super::decode::version_param;
use super::runs::{pieces, run_method, run_width, Piece};
use crate::ir::{Cond, FieldIr, FieldKind, StructIr};
use crate::primitives::Scalar;

/// The `impl Encode` block of one struct.
pub fn encode_impl(s: &StructIr, structs: &[StructIr]) -> TokenStream {
    let ty = struct_type(&s.type_name, structs);
    let generics = if s.has_lifetime {
        quote!(<'a>)
    } else {
        TokenStream::new()
    };
    let checks = s.fields.iter().map(absent_check);
    let writes = pieces(&s.fields).into_iter().map(|piece| match piece {
        Piece::Single(field) => {
            let write = write_field(field, false);
            when(field.untagged, quote!(#write;))
        }
        Piece::Run { cond, fields } => when(cond, write_run(&fields)),
    });
    let tagged_write = tagged_section_write(s);
    // One term per piece, as the reader takes them: a run of fixed-width
    // fields adds its width once.
    let sizes = pieces(&s.fields)
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Single(field) if field.untagged.is_possible() => {
                let size = field_len(field, false);
                Some(paren(
                    field.untagged,
                    choose(field.untagged, size, quote!(0)),
                ))
            }
            Piece::Single(_) => None,
            Piece::Run { cond, fields } => {
                let width = run_width(&fields);
                Some(paren(cond, choose(cond, quote!(#width), quote!(0))))
            }
        });
    let (tagged_len, tagged_term) = tagged_section_len(s);

    let encode_body = quote! {
        #(#checks)*
        #(#writes)*
        #tagged_write
        Ok(())
    };
    let terms: Vec<TokenStream> = sizes.chain(tagged_term).collect();
    let sum = if terms.is_empty() {
        quote!(0)
    } else {
        quote!(#(#terms)+*)
    };
    let len_body = quote! {
        #tagged_len
        #sum
    };
    let encode_body = bind_flexible(s.flexible, encode_body);
    let len_body = bind_flexible(s.flexible, len_body);
    let encode_version = version_param(&encode_body);
    let len_version = version_param(&len_body);
    quote! {
        impl #generics rt::Encode for #ty {
            fn encode_to(&self, buf: &mut rt::Writer<'_>, #encode_version: i16) -> Result<(), rt::EncodeError> {
                #encode_body
            }

            fn encoded_len(&self, #len_version: i16) -> usize {
                #len_body
            }
        }
    }
}

/// Writes a run of fixed-width fields: assembled on the stack, appended
/// with one capacity check.
fn write_run(fields: &[(&FieldIr, Scalar)]) -> TokenStream {
    let width = run_width(fields);
    let puts = fields.iter().map(|(field, scalar)| {
        let method = run_method(*scalar);
        let name = field_ident(field);
        quote!(.#method(self.#name))
    });
    quote! {
        buf.put_fixed(rt::FixedFieldsWriter::<#width>::new() #(#puts)*);
    }
}

/// Fails when a field the version lacks holds a non-default value, unless
/// the field is ignorable.
fn absent_check(field: &FieldIr) -> TokenStream {
    if field.ignorable || field.present == Cond::Always {
        return TokenStream::new();
    }
    let absent = negate(field.present);
    let differs = differs_from_default(field);
    let name = &field.rust_name;
    quote! {
        if #absent && #differs {
            return Err(rt::EncodeError::new(rt::EncodeErrorKind::FieldNotInVersion(version)).in_field(#name));
        }
    }
}

/// The tagged-field section: the count, then known and unknown fields
/// merged in tag order. A known field at its default is skipped. At a
/// version without the section, unknown fields are refused, not dropped.
fn tagged_section_write(s: &StructIr) -> TokenStream {
    if !s.flexible.is_possible() {
        return TokenStream::new();
    }
    let section = tagged_section_body(s);
    match s.flexible {
        Cond::Always => section,
        cond => {
            let c = flexible_cond(cond);
            quote! {
                if #c {
                    #section
                } else {
                    rt::refuse_unknown_tagged_fields(&self.unknown_tagged_fields, version)?;
                }
            }
        }
    }
}

/// The statements writing the tagged-field section, where there is one.
fn tagged_section_body(s: &StructIr) -> TokenStream {
    let tagged = tagged_fields(s);
    if tagged.is_empty() {
        return quote!(buf.put_unknown_tagged_section(&self.unknown_tagged_fields)?;);
    }
    let (flags, count) = tagged_count(&tagged, s.flexible);
    let writes = tagged.iter().map(|field| {
        let flag = tagged_flag(field);
        let (tag, _) = field.tagged.unwrap_or((0, Cond::Never));
        let size = field_len(field, true);
        let write = write_field(field, true);
        quote! {
            tagged.write_before(buf, #tag, #flag)?;
            if #flag {
                buf.put_tag_header(#tag, #size);
                #write;
            }
        }
    });
    quote! {
        #flags
        let mut tagged = rt::TaggedFieldWriter::new(&self.unknown_tagged_fields)?;
        #count
        buf.put_uvarint(count as u32);
        #(#writes)*
        tagged.finish(buf);
    }
}

/// The statement computing the tagged section's size, and the term that
/// adds it to the struct's size.
fn tagged_section_len(s: &StructIr) -> (TokenStream, Option<TokenStream>) {
    if !s.flexible.is_possible() {
        return (TokenStream::new(), None);
    }
    let tagged = tagged_fields(s);
    if tagged.is_empty() {
        let len = quote!(rt::unknown_tagged_section_len(&self.unknown_tagged_fields));
        let term = match s.flexible {
            Cond::Always => len,
            cond => {
                let c = flexible_cond(cond);
                quote!((if #c { #len } else { 0 }))
            }
        };
        return (TokenStream::new(), Some(term));
    }
    let (flags, count) = tagged_count(&tagged, s.flexible);
    let sizes = tagged.iter().map(|field| {
        let flag = tagged_flag(field);
        let (tag, _) = field.tagged.unwrap_or((0, Cond::Never));
        let size = field_len(field, true);
        quote!(+ if #flag { rt::tagged_field_len(#tag, #size) } else { 0 })
    });
    let body = quote! {
        #flags
        #count
    };
    let total = quote! {
        rt::varint::uvarint_len(count as u32)
            + rt::unknown_tagged_fields_len(&self.unknown_tagged_fields)
            #(#sizes)*
    };
    match s.flexible {
        Cond::Always => (body, Some(total)),
        cond => {
            let c = flexible_cond(cond);
            let term = quote! {
                (if #c {
                    #body
                    #total
                } else {
                    0
                })
            };
            (TokenStream::new(), Some(term))
        }
    }
}

/// The known tagged fields of a struct, in tag order.
fn tagged_fields(s: &StructIr) -> Vec<&FieldIr> {
    let mut tagged: Vec<&FieldIr> = s.fields.iter().filter(|f| f.tagged.is_some()).collect();
    tagged.sort_by_key(|f| f.tagged.map(|(tag, _)| tag));
    tagged
}

/// One `let write_x = ..;` per tagged field, saying whether it is written,
/// and the `let count = ..;` of fields in the section, unknown ones included.
fn tagged_count(tagged: &[&FieldIr], flexible: Cond) -> (TokenStream, TokenStream) {
    let flags = tagged.iter().map(|field| {
        let flag = tagged_flag(field);
        let value = tagged_presence(field, flexible);
        quote!(let #flag = #value;)
    });
    let names = tagged.iter().map(|f| tagged_flag(f));
    (
        quote!(#(#flags)*),
        quote!(let count = self.unknown_tagged_fields.len() #(+ usize::from(#names))*;),
    )
}

fn tagged_flag(field: &FieldIr) -> proc_macro2::Ident {
    quote::format_ident!("write_{}", field.rust_name.trim_start_matches("r#"))
}

/// True when a tagged field is written: in its tagged versions, and not at
/// its default. The section is only written where the struct is `flexible`.
fn tagged_presence(field: &FieldIr, flexible: Cond) -> TokenStream {
    let (_, cond) = field.tagged.unwrap_or((0, Cond::Never));
    let cond = cond.given(flexible);
    let differs = differs_from_default(field);
    match cond {
        Cond::Always => differs,
        _ => {
            let c = cond_tokens(cond);
            quote!(#c && #differs)
        }
    }
}

/// A `Result` expression writing the field, naming it in any error.
fn write_field(field: &FieldIr, tagged: bool) -> TokenStream {
    let name = field_ident(field);
    let k = compact_arg(field, tagged);
    let path = &field.rust_name;
    let located = |write: TokenStream| quote!(#write.in_field(#path)?);
    let (nullable, plain): (TokenStream, Box<dyn Fn(TokenStream) -> TokenStream>) = match &field
        .kind
    {
        FieldKind::Scalar(s) => return write_scalar(*s, quote!(self.#name)),
        FieldKind::String => (
            quote!(buf.put_nullable_string(self.#name.as_deref(), #k)),
            Box::new(move |v| quote!(buf.put_string(#v, #k))),
        ),
        FieldKind::Bytes | FieldKind::Records => (
            quote!(buf.put_nullable_bytes(self.#name.as_deref(), #k)),
            Box::new(move |v| quote!(buf.put_bytes(#v, #k))),
        ),
        FieldKind::ScalarArray(_) => (
            quote!(buf.put_nullable_scalar_array(self.#name.as_ref(), #k)),
            Box::new(move |v| quote!(buf.put_scalar_array(#v, #k))),
        ),
        FieldKind::StringArray => (
            quote!(buf.put_nullable_array(self.#name.as_deref(), #k, |buf, v| buf.put_string(v, #k))),
            Box::new(move |v| quote!(buf.put_array(#v, #k, |buf, v| buf.put_string(v, #k)))),
        ),
        FieldKind::StructArray(_) => (
            quote!(buf.put_nullable_struct_array(self.#name.as_ref(), #k, version)),
            Box::new(move |v| quote!(buf.put_struct_array(#v, #k, version))),
        ),
        FieldKind::Struct(_) => {
            let put = if tagged {
                quote!(put_tagged_nullable_struct)
            } else {
                quote!(put_nullable_struct)
            };
            (
                quote!(buf.#put(self.#name.as_ref(), |buf, v| v.encode_to(buf, version))),
                Box::new(move |v| quote!(#v.encode_to(buf, version))),
            )
        }
    };
    if !field.optional {
        let value = match field.kind {
            FieldKind::Struct(_) => quote!(self.#name),
            _ => quote!(&self.#name),
        };
        return located(plain(value));
    }
    if field.kind == FieldKind::Records && field.nullable == Cond::Never {
        // A null records field in a version where it is not nullable is
        // written as empty, since records default to null (see crate docs).
        let write = plain(quote!(self.#name.as_deref().unwrap_or_default()));
        return located(write);
    }
    let non_null = {
        let write = plain(quote!(v));
        quote!(rt::non_null(self.#name.as_ref(), version).and_then(|v| #write))
    };
    located(paren(
        field.nullable,
        choose(field.nullable, nullable, non_null),
    ))
}

fn write_scalar(scalar: Scalar, value: TokenStream) -> TokenStream {
    match scalar {
        Scalar::Bool => quote!(buf.put_bool(#value)),
        Scalar::Int8 => quote!(buf.put_i8(#value)),
        Scalar::Int16 => quote!(buf.put_i16(#value)),
        Scalar::Uint16 => quote!(buf.put_u16(#value)),
        Scalar::Int32 => quote!(buf.put_i32(#value)),
        Scalar::Uint32 => quote!(buf.put_u32(#value)),
        Scalar::Int64 => quote!(buf.put_i64(#value)),
        Scalar::Float64 => quote!(buf.put_f64(#value)),
        Scalar::Uuid => quote!(buf.put_slice(#value.as_bytes())),
    }
}

/// The exact encoded size of the field's value.
fn field_len(field: &FieldIr, tagged: bool) -> TokenStream {
    let name = field_ident(field);
    let k = compact_arg(field, tagged);
    if let FieldKind::Scalar(s) = field.kind {
        let width = proc_macro2::Literal::usize_unsuffixed(s.width());
        return quote!(#width);
    }
    if field.optional {
        return match &field.kind {
            FieldKind::String => quote!(rt::nullable_string_len(self.#name.as_deref(), #k)),
            FieldKind::Bytes | FieldKind::Records => {
                quote!(rt::nullable_bytes_len(self.#name.as_deref(), #k))
            }
            FieldKind::ScalarArray(_) => {
                quote!(rt::nullable_scalar_array_len(self.#name.as_ref(), #k))
            }
            FieldKind::StringArray => quote!(
                rt::nullable_array_len(self.#name.as_deref(), #k, |v| rt::string_len(v, #k))
            ),
            FieldKind::StructArray(_) => {
                quote!(rt::nullable_struct_array_len(self.#name.as_ref(), #k, version))
            }
            FieldKind::Struct(_) => {
                let marker = if tagged {
                    quote!(1)
                } else {
                    match field.nullable {
                        Cond::Never => quote!(0),
                        Cond::Always => quote!(1),
                        cond => {
                            let c = cond_tokens(cond);
                            quote!(usize::from(#c))
                        }
                    }
                };
                quote!(#marker + self.#name.as_ref().map_or(0, |v| v.encoded_len(version)))
            }
            FieldKind::Scalar(_) => quote!(0),
        };
    }
    match &field.kind {
        FieldKind::String => quote!(rt::string_len(&self.#name, #k)),
        FieldKind::Bytes | FieldKind::Records => quote!(rt::bytes_len(&self.#name, #k)),
        FieldKind::ScalarArray(_) => quote!(rt::scalar_array_len(&self.#name, #k)),
        FieldKind::StringArray => {
            quote!(rt::array_len(&self.#name, #k, |v| rt::string_len(v, #k)))
        }
        FieldKind::StructArray(_) => {
            quote!(rt::struct_array_len(&self.#name, #k, version))
        }
        FieldKind::Struct(_) => quote!(self.#name.encoded_len(version)),
        FieldKind::Scalar(_) => quote!(0),
    }
}
