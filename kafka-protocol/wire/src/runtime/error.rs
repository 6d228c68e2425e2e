//! Typed errors for decoding and encoding, each with the field path and,
//! for decoding, the byte offset of the fault.

use std::fmt;

use super::path::{FieldPath, PathSegment};

/// What went wrong while decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// The input ended before the value did.
    #[error("truncated: needed {needed} more byte(s), {remaining} left")]
    Truncated {
        /// Bytes the value needed.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A length or count was negative and not -1.
    #[error("invalid length {0}")]
    InvalidLength(i64),
    /// A length or count claims more than the remaining input could hold.
    #[error("length {length} exceeds the {remaining} byte(s) left")]
    LengthExceedsInput {
        /// The claimed length or element count.
        length: u64,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A string was longer than 0x7fff bytes.
    #[error("string length {0} exceeds 32767")]
    StringTooLong(usize),
    /// Null was read where the version does not allow it.
    #[error("null is not allowed here")]
    UnexpectedNull,
    /// A string was not valid UTF-8.
    #[error("invalid UTF-8 at byte {valid_up_to} of the string")]
    InvalidUtf8 {
        /// Length of the valid prefix.
        valid_up_to: usize,
    },
    /// A varint ran past its maximum length or value.
    #[error("varint is too long")]
    VarintTooLong,
    /// A known tag appeared in a version where it is not tagged.
    #[error("tag {0} is not valid in this version")]
    TagNotInVersion(u32),
    /// The same tag appeared twice in one tagged-field section.
    #[error("duplicate tag {0}")]
    DuplicateTag(u32),
    /// A tagged field's declared size disagrees with its content.
    #[error("tagged field {tag} declares {declared} byte(s) but its value used {used}")]
    TaggedFieldSize {
        /// The tag.
        tag: u32,
        /// The declared size.
        declared: usize,
        /// The bytes its value actually took.
        used: usize,
    },
    /// The version is not one this message has.
    #[error("version {version} is not supported (valid: {lowest}-{highest})")]
    UnsupportedVersion {
        /// The version asked for.
        version: i16,
        /// The lowest valid version.
        lowest: i16,
        /// The highest valid version.
        highest: i16,
    },
    /// The api key is not known.
    #[error("unknown api key {0}")]
    UnknownApiKey(i16),
    /// Bytes were left after the message ended.
    #[error("{0} trailing byte(s) after the message")]
    TrailingBytes(usize),
}

/// A decoding failure: what, at which byte offset, and in which field.
///
/// Boxed so that `Result<T, DecodeError>` stays small on the success path.
#[derive(Clone, PartialEq, Eq)]
pub struct DecodeError(Box<DecodeErrorInner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct DecodeErrorInner {
    offset: usize,
    kind: DecodeErrorKind,
    path: FieldPath,
}

impl DecodeError {
    /// An error of `kind` at byte `offset`.
    #[cold]
    pub fn new(offset: usize, kind: DecodeErrorKind) -> Self {
        DecodeError(Box::new(DecodeErrorInner {
            offset,
            kind,
            path: FieldPath::default(),
        }))
    }

    /// The byte offset of the fault, from the start of the input.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// What went wrong.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.0.kind
    }

    /// The field path, outermost first.
    pub fn path(&self) -> &FieldPath {
        &self.0.path
    }

    /// Records that the error happened inside `field`.
    #[cold]
    pub fn in_field(mut self, field: &'static str) -> Self {
        self.0.path.push_outer(PathSegment::Field(field));
        self
    }

    /// Records that the error happened inside array element `index`.
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0.path.push_outer(PathSegment::Index(index));
        self
    }

    /// Records the message at the root of the path.
    #[cold]
    pub fn in_message(mut self, name: &'static str) -> Self {
        self.0.path.push_outer(PathSegment::Root(name));
        self
    }

    /// Shifts the offset by `base`, for errors found in a sub-slice.
    #[cold]
    pub fn shifted(mut self, base: usize) -> Self {
        self.0.offset += base;
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.path.is_empty() {
            write!(f, "at byte {}: {}", self.0.offset, self.0.kind)
        } else {
            write!(
                f,
                "{} at byte {}: {}",
                self.0.path, self.0.offset, self.0.kind
            )
        }
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DecodeError({self})")
    }
}

impl std::error::Error for DecodeError {}

/// What went wrong while encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeErrorKind {
    /// The version is not one this message has.
    #[error("version {version} is not supported (valid: {lowest}-{highest})")]
    UnsupportedVersion {
        /// The version asked for.
        version: i16,
        /// The lowest valid version.
        lowest: i16,
        /// The highest valid version.
        highest: i16,
    },
    /// A field that the version lacks holds a non-default value, and the
    /// field is not ignorable.
    #[error("field is not in version {0} and holds a non-default value")]
    FieldNotInVersion(i16),
    /// A null value in a version where the field is not nullable.
    #[error("null is not allowed in version {0}")]
    NullNotAllowed(i16),
    /// A string longer than 0x7fff bytes.
    #[error("string length {0} exceeds 32767")]
    StringTooLong(usize),
    /// A length or count that does not fit the wire format.
    #[error("length {0} does not fit the wire format")]
    LengthOverflow(usize),
    /// An unknown tagged field was given twice, or reuses a known tag.
    #[error("duplicate tag {0}")]
    DuplicateTag(u32),
    /// A request frame whose header names another api than its body.
    #[error("the header's api key {header} is not the body's api key {body}")]
    ApiKeyMismatch {
        /// The api key in the header.
        header: i16,
        /// The api key of the body.
        body: i16,
    },
    /// Unknown tagged fields are set on a struct encoded at a version that
    /// has no tagged-field section, where they would be lost.
    #[error("tagged fields were set, but version {0} does not support them")]
    TaggedFieldsNotInVersion(i16),
}

/// An encoding failure: what, and in which field.
#[derive(Clone, PartialEq, Eq)]
pub struct EncodeError(Box<(EncodeErrorKind, FieldPath)>);

impl EncodeError {
    /// An error of `kind`.
    #[cold]
    pub fn new(kind: EncodeErrorKind) -> Self {
        EncodeError(Box::new((kind, FieldPath::default())))
    }

    /// What went wrong.
    pub fn kind(&self) -> &EncodeErrorKind {
        &self.0 .0
    }

    /// The field path, outermost first.
    pub fn path(&self) -> &FieldPath {
        &self.0 .1
    }

    /// Records that the error happened inside `field`.
    #[cold]
    pub fn in_field(mut self, field: &'static str) -> Self {
        self.0 .1.push_outer(PathSegment::Field(field));
        self
    }

    /// Records that the error happened inside array element `index`.
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0 .1.push_outer(PathSegment::Index(index));
        self
    }

    /// Records the message at the root of the path.
    #[cold]
    pub fn in_message(mut self, name: &'static str) -> Self {
        self.0 .1.push_outer(PathSegment::Root(name));
        self
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path().is_empty() {
            write!(f, "{}", self.kind())
        } else {
            write!(f, "{}: {}", self.path(), self.kind())
        }
    }
}

impl fmt::Debug for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EncodeError({self})")
    }
}

impl std::error::Error for EncodeError {}

/// Names the field a failed read or write was for, on the `Result` itself:
/// generated code reads `r.read_i32().in_field("replica_id")?`.
///
/// One method for every result, instead of a closure per call site, keeps
/// the generated code small to compile.
pub trait InField {
    /// Adds `field` to the error's path; an `Ok` passes through unchanged.
    fn in_field(self, field: &'static str) -> Self;
}

impl<T> InField for Result<T, DecodeError> {
    #[inline(always)]
    fn in_field(self, field: &'static str) -> Self {
        match self {
            Ok(value) => Ok(value),
            Err(error) => Err(error.in_field(field)),
        }
    }
}

impl<T> InField for Result<T, EncodeError> {
    #[inline(always)]
    fn in_field(self, field: &'static str) -> Self {
        match self {
            Ok(value) => Ok(value),
            Err(error) => Err(error.in_field(field)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_error_names_offset_and_path() {
        let error = DecodeError::new(7, DecodeErrorKind::VarintTooLong)
            .in_field("replica_id")
            .at_index(2)
            .in_field("partitions")
            .in_message("VoteRequest");
        assert_eq!(
            error.to_string(),
            "VoteRequest.partitions[2].replica_id at byte 7: varint is too long"
        );
        assert_eq!(std::mem::size_of::<Result<u64, DecodeError>>(), 16);
    }
}
