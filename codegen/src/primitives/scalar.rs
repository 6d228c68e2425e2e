//! The fixed-width scalar types of a schema.

/// A fixed-width scalar, written big-endian on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// `int8`.
    Int8,
    /// `int16`.
    Int16,
    /// `uint16`.
    Uint16,
    /// `int32`.
    Int32,
    /// `uint32`.
    Uint32,
    /// `int64`.
    Int64,
    /// `float64`: an IEEE 754 double.
    Float64,
    /// `uuid`: 16 bytes.
    Uuid,
}

impl Scalar {
    /// The schema's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int8 => "int8",
            Scalar::Int16 => "int16",
            Scalar::Uint16 => "uint16",
            Scalar::Int32 => "int32",
            Scalar::Uint32 => "uint32",
            Scalar::Int64 => "int64",
            Scalar::Float64 => "float64",
            Scalar::Uuid => "uuid",
        }
    }

    /// The encoded width in bytes.
    pub fn width(self) -> usize {
        match self {
            Scalar::Bool | Scalar::Int8 => 1,
            Scalar::Int16 | Scalar::Uint16 => 2,
            Scalar::Int32 | Scalar::Uint32 => 4,
            Scalar::Int64 | Scalar::Float64 => 8,
            Scalar::Uuid => 16,
        }
    }

    /// The inclusive range of an integer type, or `None` for the others.
    pub fn integer_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Scalar::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Scalar::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Scalar::Uint16 => (0, u16::MAX.into()),
            Scalar::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Scalar::Uint32 => (0, u32::MAX.into()),
            Scalar::Int64 => (i64::MIN.into(), i64::MAX.into()),
            _ => return None,
        })
    }
}
