//! Typed errors for decoding and encoding, each with the field path and,
//! for decoding, the byte offset of the fault.

use std::fmt;

use super::path::{FieldPath, PathSegment};

/// What went wrong while decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The input ended before the value did.
    Truncated {
        /// Bytes the value needed.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A length or count was negative and not -1.
    InvalidLength(i64),
    /// A length or count claims more than the remaining input could hold.
    LengthExceedsInput {
        /// The claimed length or element count.
        length: u64,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A string was longer than 0x7fff bytes.
    StringTooLong(usize),
    /// Null was read where the version does not allow it.
    UnexpectedNull,
    /// A string was not valid UTF-8.
    InvalidUtf8 {
        /// Length of the valid prefix.
        valid_up_to: usize,
    },
    /// A varint ran past its maximum length or value.
    VarintTooLong,
    /// A known tag appeared in a version where it is not tagged.
    TagNotInVersion(u32),
    /// The same tag appeared twice in one tagged-field section.
    DuplicateTag(u32),
    /// A tagged field's declared size disagrees with its content.
    TaggedFieldSize {
        /// The tag.
        tag: u32,
        /// The declared size.
        declared: usize,
        /// The bytes its value actually took.
        used: usize,
    },
    /// The version is not one this message has.
    UnsupportedVersion {
        /// The version asked for.
        version: i16,
        /// The lowest valid version.
        lowest: i16,
        /// The highest valid version.
        highest: i16,
    },
    /// The api key is not known.
    UnknownApiKey(i16),
    /// Bytes were left after the message ended.
    TrailingBytes(usize),
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeErrorKind::Truncated { needed, remaining } => write!(
                f,
                "truncated: needed {needed} more byte(s), {remaining} left"
            ),
            DecodeErrorKind::InvalidLength(value) => write!(f, "invalid length {value}"),
            DecodeErrorKind::LengthExceedsInput { length, remaining } => {
                write!(f, "length {length} exceeds the {remaining} byte(s) left")
            }
            DecodeErrorKind::StringTooLong(value) => {
                write!(f, "string length {value} exceeds 32767")
            }
            DecodeErrorKind::UnexpectedNull => f.write_str("null is not allowed here"),
            DecodeErrorKind::InvalidUtf8 { valid_up_to } => {
                write!(f, "invalid UTF-8 at byte {valid_up_to} of the string")
            }
            DecodeErrorKind::VarintTooLong => f.write_str("varint is too long"),
            DecodeErrorKind::TagNotInVersion(value) => {
                write!(f, "tag {value} is not valid in this version")
            }
            DecodeErrorKind::DuplicateTag(value) => write!(f, "duplicate tag {value}"),
            DecodeErrorKind::TaggedFieldSize {
                tag,
                declared,
                used,
            } => write!(
                f,
                "tagged field {tag} declares {declared} byte(s) but its value used {used}"
            ),
            DecodeErrorKind::UnsupportedVersion {
                version,
                lowest,
                highest,
            } => write!(
                f,
                "version {version} is not supported (valid: {lowest}-{highest})"
            ),
            DecodeErrorKind::UnknownApiKey(value) => write!(f, "unknown api key {value}"),
            DecodeErrorKind::TrailingBytes(value) => {
                write!(f, "{value} trailing byte(s) after the message")
            }
        }
    }
}

impl std::error::Error for DecodeErrorKind {}

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
    #[inline(never)]
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
    #[inline(never)]
    pub fn in_field(mut self, field: &'static str) -> Self {
        self.0.path.push_outer(PathSegment::Field(field));
        self
    }

    /// Records that the error happened inside array element `index`.
    #[cold]
    #[inline(never)]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0.path.push_outer(PathSegment::Index(index));
        self
    }

    /// Records the message at the root of the path.
    #[cold]
    #[inline(never)]
    pub fn in_message(mut self, name: &'static str) -> Self {
        self.0.path.push_outer(PathSegment::Root(name));
        self
    }

    /// Shifts the offset by `base`, for errors found in a sub-slice.
    #[cold]
    #[inline(never)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeErrorKind {
    /// The version is not one this message has.
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
    FieldNotInVersion(i16),
    /// A null value in a version where the field is not nullable.
    NullNotAllowed(i16),
    /// A string longer than 0x7fff bytes.
    StringTooLong(usize),
    /// A length or count that does not fit the wire format.
    LengthOverflow(usize),
    /// An unknown tagged field was given twice, or reuses a known tag.
    DuplicateTag(u32),
    /// A request frame whose header names another api than its body.
    ApiKeyMismatch {
        /// The api key in the header.
        header: i16,
        /// The api key of the body.
        body: i16,
    },
    /// Unknown tagged fields are set on a struct encoded at a version that
    /// has no tagged-field section, where they would be lost.
    TaggedFieldsNotInVersion(i16),
}

impl fmt::Display for EncodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeErrorKind::UnsupportedVersion {
                version,
                lowest,
                highest,
            } => write!(
                f,
                "version {version} is not supported (valid: {lowest}-{highest})"
            ),
            EncodeErrorKind::FieldNotInVersion(value) => write!(
                f,
                "field is not in version {value} and holds a non-default value"
            ),
            EncodeErrorKind::NullNotAllowed(value) => {
                write!(f, "null is not allowed in version {value}")
            }
            EncodeErrorKind::StringTooLong(value) => {
                write!(f, "string length {value} exceeds 32767")
            }
            EncodeErrorKind::LengthOverflow(value) => {
                write!(f, "length {value} does not fit the wire format")
            }
            EncodeErrorKind::DuplicateTag(value) => write!(f, "duplicate tag {value}"),
            EncodeErrorKind::ApiKeyMismatch { header, body } => write!(
                f,
                "the header's api key {header} is not the body's api key {body}"
            ),
            EncodeErrorKind::TaggedFieldsNotInVersion(value) => write!(
                f,
                "tagged fields were set, but version {value} does not support them"
            ),
        }
    }
}

impl std::error::Error for EncodeErrorKind {}

/// An encoding failure: what, and in which field.
#[derive(Clone, PartialEq, Eq)]
pub struct EncodeError(Box<(EncodeErrorKind, FieldPath)>);

impl EncodeError {
    /// An error of `kind`.
    #[cold]
    #[inline(never)]
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
    #[inline(never)]
    pub fn in_field(mut self, field: &'static str) -> Self {
        self.0 .1.push_outer(PathSegment::Field(field));
        self
    }

    /// Records that the error happened inside array element `index`.
    #[cold]
    #[inline(never)]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0 .1.push_outer(PathSegment::Index(index));
        self
    }

    /// Records the message at the root of the path.
    #[cold]
    #[inline(never)]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn in_field(self, field: &'static str) -> Self {
        match self {
            Ok(value) => Ok(value),
            Err(error) => Err(error.in_field(field)),
        }
    }
}

impl<T> InField for Result<T, EncodeError> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
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
