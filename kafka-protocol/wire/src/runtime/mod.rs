//! The primitives the generated code is built from, one module per wire
//! type, each with its reading, writing and exact size together: length
//! prefixes, strings and bytes, scalar and generic arrays, arrays of
//! structs, nullable structs, tagged fields and varints; under them the
//! bounds-checked [`Reader`] and the [`Writer`], and beside them uuids,
//! errors and (with the `json` feature) the JSON form.
//!
//! Generated code calls into this module; users mostly meet its types
//! ([`Uuid`], [`ScalarArray`], [`StructArray`], [`RawTaggedField`]) and its errors.
//!
//! The smallest primitives (a fixed-width read, a length, a field's error
//! context) are `#[inline(always)]` in optimized builds, where the reader
//! then stays in registers through a struct's decoder, and only `#[inline]`
//! when debug assertions are on: a debug build inlines nothing else, and
//! copying them into every generated decoder there doubled the code of a
//! program that uses every message (its debug binary's `.text`, 10.8 MB ->
//! 5.7 MB), which the linker then writes in each of its rebuilds.

mod array;
mod element_vec;
mod error;
mod fixed;
#[cfg(feature = "json")]
pub mod json;
#[cfg(feature = "json")]
mod json_writer;
mod length;
mod message;
mod nullable;
mod owned;
mod path;
mod reader;
mod section_box;
mod strings;
mod struct_array;
mod tagged;
mod utf8;
mod uuid;
pub mod varint;
mod writer;

pub use array::{
    array_len, nullable_array_len, nullable_scalar_array_len, scalar_array_len, FixedWidth,
    ScalarArray,
};
pub use error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, InField};
pub use fixed::{FixedField, FixedFields, FixedFieldsWriter};
#[cfg(feature = "json")]
pub use json::{JsonError, JsonErrorKind, JsonForm};
pub use length::{array_len_len, CLASSIC, COMPACT};
pub use message::{Decode, Encode, Message};
pub use nullable::non_null;
pub use owned::IntoOwned;
pub use path::{FieldPath, PathSegment};
pub use reader::{DecodeOptions, Reader};
pub use strings::{bytes_len, nullable_bytes_len, nullable_string_len, string_len};
pub use struct_array::{
    nullable_struct_array_len, struct_array_len, IntoIter as StructArrayIntoIter,
    Iter as StructArrayIter, StructArray,
};
pub use tagged::{
    refuse_unknown_tagged_fields, tagged_field_len, unknown_tagged_fields_len,
    unknown_tagged_section_len, RawTaggedField, TaggedFieldWriter, UnknownTaggedFields,
};
pub use uuid::{ParseUuidError, Uuid};
pub use writer::{EncodeBuf, Writer};
