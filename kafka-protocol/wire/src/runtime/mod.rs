//! The primitives the generated code is built from: a bounds-checked reader,
//! writers for every wire type, lazily decoded scalar and struct arrays, uuids, tagged
//! fields, errors and (with the `json` feature) the JSON form.
//!
//! Generated code calls into this module; users mostly meet its types
//! ([`Uuid`], [`ScalarArray`], [`StructArray`], [`RawTaggedField`]) and its errors.

mod array;
mod codec;
mod error;
#[cfg(feature = "json")]
pub mod json;
mod owned;

mod path;
mod reader;
mod struct_array;
mod tagged;
mod uuid;
pub mod varint;
pub mod write;
mod writer;

pub use array::{FixedWidth, ScalarArray};
pub use codec::{Decode, Encode, Message};
pub use error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, InField};
#[cfg(feature = "json")]
pub use json::{JsonError, JsonErrorKind, JsonForm};
pub use owned::IntoOwned;
pub use path::{FieldPath, PathSegment};
pub use reader::Reader;
pub use struct_array::{IntoIter as StructArrayIntoIter, Iter as StructArrayIter, StructArray};
pub use tagged::{
    put_unknown_tagged_fields, refuse_unknown_tagged_fields, unknown_tagged_fields_len,
    unknown_tagged_section_len, RawTaggedField, TaggedFieldWriter, UnknownTaggedFields,
};
pub use uuid::{ParseUuidError, Uuid};
pub use writer::{EncodeBuf, Writer};
