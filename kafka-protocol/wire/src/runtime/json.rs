//! The JSON form of messages, following Kafka's JsonConverter conventions:
//! camelCase keys, only the fields of the given version, base64 for bytes and
//! base64url for uuids, with three deliberate differences (tagged fields at
//! their default are shown, records are written as base64, and unknown tagged
//! fields appear under `_unknownTaggedFields`).

use std::borrow::Cow;
use std::fmt;
use std::io;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Map;
pub use serde_json::Value;

use super::array::{FixedWidth, ScalarArray};
pub use super::json_writer::{BytesForm, JsonWriter};
use super::message::Decode;
use super::path::{FieldPath, PathSegment};
use super::struct_array::StructArray;
use super::tagged::{RawTaggedField, UnknownTaggedFields};
use super::uuid::Uuid;

/// The JSON key under which unknown tagged fields are kept.
pub const UNKNOWN_TAGGED_FIELDS_KEY: &str = "_unknownTaggedFields";

/// What the writer needs of the JSON form: a member whose value is a
/// [`JsonForm`], and the unknown tagged fields. They live here, beside the
/// form, so that the writer itself knows nothing of it.
impl JsonWriter<'_> {
    /// Writes a member: `key`, then the JSON form of `value` at `version`.
    #[inline]
    pub fn field<T: JsonForm>(&mut self, key: &str, value: &T, version: i16) -> io::Result<()> {
        self.key(key)?;
        value.write_json(self, version)
    }

    /// Writes the unknown tagged fields as the member
    /// `"_unknownTaggedFields": [{"tag": .., "data": <base64>}, ..]`, or
    /// nothing when there are none.
    pub fn unknown_tagged_fields(&mut self, fields: &UnknownTaggedFields<'_>) -> io::Result<()> {
        if fields.is_empty() {
            return Ok(());
        }
        self.key(UNKNOWN_TAGGED_FIELDS_KEY)?;
        self.begin_array()?;
        for field in fields.iter() {
            self.begin_object()?;
            self.key("tag")?;
            self.u64(field.tag.into())?;
            self.key("data")?;
            self.base64(&field.data)?;
            self.end_object()?;
        }
        self.end_array()
    }
}

/// A value with a JSON form at a given version.
pub trait JsonForm: Sized {
    /// Writes the JSON form of the value at `version` to `out`, straight
    /// from the value: over an [`io::Write`], the text that
    /// serde_json prints for [`to_json`](Self::to_json), without building
    /// it. This is the one description of the JSON form's shape.
    fn write_json(&self, out: &mut JsonWriter<'_>, version: i16) -> io::Result<()>;

    /// The JSON form of the value at `version`, as a tree: what
    /// [`write_json`](Self::write_json) writes, built as a [`Value`].
    fn to_json(&self, version: i16) -> Value {
        JsonWriter::build(|out| self.write_json(out, version))
    }

    /// Reads the JSON form at `version`.
    fn from_json(value: &Value, version: i16) -> Result<Self, JsonError>;
}

/// What was wrong with a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonErrorKind {
    /// The value has the wrong JSON type.
    Expected(&'static str),
    /// A number is outside the range of the field's type.
    OutOfRange {
        /// The number as written.
        value: String,
        /// The field's type.
        ty: &'static str,
    },
    /// A field the version requires is missing.
    MissingField,
    /// A key that is not a field of this version.
    UnknownField(String),
    /// A string is not valid base64 or base64url.
    InvalidBase64,
    /// A string is not a Kafka uuid.
    InvalidUuid(String),
    /// No message has this key.
    UnknownKey(i16),
    /// The version is not one the message has.
    UnsupportedVersion(i16),
}

impl fmt::Display for JsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonErrorKind::Expected(value) => write!(f, "expected {value}"),
            JsonErrorKind::OutOfRange { value, ty } => {
                write!(f, "{value} is out of range for {ty}")
            }
            JsonErrorKind::MissingField => f.write_str("missing field"),
            JsonErrorKind::UnknownField(value) => {
                write!(f, "unknown field \"{value}\" for this version")
            }
            JsonErrorKind::InvalidBase64 => f.write_str("invalid base64"),
            JsonErrorKind::InvalidUuid(value) => write!(f, "invalid uuid `{value}`"),
            JsonErrorKind::UnknownKey(value) => write!(f, "unknown key {value}"),
            JsonErrorKind::UnsupportedVersion(value) => {
                write!(f, "version {value} is not supported")
            }
        }
    }
}

impl std::error::Error for JsonErrorKind {}

/// A JSON conversion failure, with the JSON path of the offending value,
/// such as `$.topics[0].partitions[1].replicaId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    kind: JsonErrorKind,
    path: FieldPath,
}

impl JsonError {
    /// An error of `kind`.
    #[cold]
    #[inline(never)]
    pub fn new(kind: JsonErrorKind) -> Self {
        JsonError {
            kind,
            path: FieldPath::default(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &JsonErrorKind {
        &self.kind
    }

    /// Records that the error happened under `key`.
    #[cold]
    #[inline(never)]
    pub fn in_field(mut self, key: &'static str) -> Self {
        self.path.push_outer(PathSegment::Field(key));
        self
    }

    /// Records that the error happened in list element `index`.
    #[cold]
    #[inline(never)]
    pub fn at_index(mut self, index: usize) -> Self {
        self.path.push_outer(PathSegment::Index(index));
        self
    }

    /// The JSON path, such as `$.topics[0].name`.
    pub fn json_path(&self) -> String {
        let mut out = String::from("$");
        for segment in self.path.segments() {
            match segment {
                PathSegment::Field(key) | PathSegment::Root(key) => {
                    out.push('.');
                    out.push_str(key);
                }
                PathSegment::Index(i) => out.push_str(&format!("[{i}]")),
                PathSegment::Tag(tag) => out.push_str(&format!(".<tag {tag}>")),
            }
        }
        out
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.json_path(), self.kind)
    }
}

impl std::error::Error for JsonError {}

fn expected(what: &'static str) -> JsonError {
    JsonError::new(JsonErrorKind::Expected(what))
}

macro_rules! json_integer {
    ($($ty:ty => $name:literal, $write:ident),*) => {$(
        impl JsonForm for $ty {
            fn write_json(&self, out: &mut JsonWriter<'_>, _version: i16) -> io::Result<()> {
                out.$write((*self).into())
            }

            fn from_json(value: &Value, _version: i16) -> Result<Self, JsonError> {
                let Value::Number(number) = value else {
                    return Err(expected(concat!("an integer (", $name, ")")));
                };
                let fitted = if let Some(n) = number.as_i64() {
                    <$ty>::try_from(n).ok()
                } else if let Some(n) = number.as_u64() {
                    <$ty>::try_from(n).ok()
                } else {
                    return Err(expected(concat!("an integer (", $name, ")")));
                };
                fitted.ok_or_else(|| JsonError::new(JsonErrorKind::OutOfRange {
                    value: number.to_string(),
                    ty: $name,
                }))
            }
        }
    )*};
}

json_integer!(
    i8 => "int8", i64,
    i16 => "int16", i64,
    u16 => "uint16", u64,
    i32 => "int32", i64,
    u32 => "uint32", u64,
    i64 => "int64", i64
);

impl JsonForm for bool {
    fn write_json(&self, out: &mut JsonWriter<'_>, _version: i16) -> io::Result<()> {
        out.bool(*self)
    }

    fn from_json(value: &Value, _version: i16) -> Result<Self, JsonError> {
        value.as_bool().ok_or_else(|| expected("true or false"))
    }
}

impl JsonForm for f64 {
    fn write_json(&self, out: &mut JsonWriter<'_>, _version: i16) -> io::Result<()> {
        out.f64(*self)
    }

    fn from_json(value: &Value, _version: i16) -> Result<Self, JsonError> {
        match value {
            Value::Number(n) => n.as_f64().ok_or_else(|| expected("a number")),
            Value::String(s) if s == "NaN" => Ok(f64::NAN),
            Value::String(s) if s == "Infinity" => Ok(f64::INFINITY),
            Value::String(s) if s == "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(expected("a number, \"NaN\", \"Infinity\" or \"-Infinity\"")),
        }
    }
}

impl JsonForm for Uuid {
    fn write_json(&self, out: &mut JsonWriter<'_>, _version: i16) -> io::Result<()> {
        out.str(&self.to_string())
    }

    fn from_json(value: &Value, _version: i16) -> Result<Self, JsonError> {
        let text = value.as_str().ok_or_else(|| expected("a uuid string"))?;
        text.parse()
            .map_err(|_| JsonError::new(JsonErrorKind::InvalidUuid(text.to_owned())))
    }
}

impl JsonForm for Cow<'_, str> {
    fn write_json(&self, out: &mut JsonWriter<'_>, _version: i16) -> io::Result<()> {
        out.str(self)
    }

    fn from_json(value: &Value, _version: i16) -> Result<Self, JsonError> {
        let text = value.as_str().ok_or_else(|| expected("a string"))?;
        Ok(Cow::Owned(text.to_owned()))
    }
}

impl JsonForm for Cow<'_, [u8]> {
    fn write_json(&self, out: &mut JsonWriter<'_>, _version: i16) -> io::Result<()> {
        out.base64(self)
    }

    fn from_json(value: &Value, _version: i16) -> Result<Self, JsonError> {
        let text = value.as_str().ok_or_else(|| expected("a base64 string"))?;
        STANDARD
            .decode(text)
            .map(Cow::Owned)
            .map_err(|_| JsonError::new(JsonErrorKind::InvalidBase64))
    }
}

/// Reads a JSON list element by element into any collection, naming the
/// index of a bad element.
fn list_from_json<T: JsonForm, C: FromIterator<T>>(
    value: &Value,
    version: i16,
) -> Result<C, JsonError> {
    let items = value.as_array().ok_or_else(|| expected("a list"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| T::from_json(item, version).map_err(|e| e.at_index(i)))
        .collect()
}

impl<T: FixedWidth + JsonForm> JsonForm for ScalarArray<'_, T> {
    fn write_json(&self, out: &mut JsonWriter<'_>, version: i16) -> io::Result<()> {
        out.begin_array()?;
        for item in self.iter() {
            item.write_json(out, version)?;
        }
        out.end_array()
    }

    fn from_json(value: &Value, version: i16) -> Result<Self, JsonError> {
        list_from_json(value, version)
    }
}

impl<'a, T: JsonForm + Decode<'a> + Clone> JsonForm for StructArray<'a, T> {
    fn write_json(&self, out: &mut JsonWriter<'_>, version: i16) -> io::Result<()> {
        out.begin_array()?;
        for item in self.iter() {
            item.write_json(out, version)?;
        }
        out.end_array()
    }

    fn from_json(value: &Value, version: i16) -> Result<Self, JsonError> {
        list_from_json(value, version)
    }
}

impl<T: JsonForm> JsonForm for Vec<T> {
    fn write_json(&self, out: &mut JsonWriter<'_>, version: i16) -> io::Result<()> {
        out.begin_array()?;
        for item in self.iter() {
            item.write_json(out, version)?;
        }
        out.end_array()
    }

    fn from_json(value: &Value, version: i16) -> Result<Self, JsonError> {
        list_from_json(value, version)
    }
}

impl<T: JsonForm> JsonForm for Option<T> {
    fn write_json(&self, out: &mut JsonWriter<'_>, version: i16) -> io::Result<()> {
        match self {
            Some(v) => v.write_json(out, version),
            None => out.null(),
        }
    }

    fn from_json(value: &Value, version: i16) -> Result<Self, JsonError> {
        match value {
            Value::Null => Ok(None),
            other => T::from_json(other, version).map(Some),
        }
    }
}

/// Reads a struct's JSON object, key by key, and rejects keys that are not
/// fields of the version.
#[derive(Debug)]
pub struct JsonObjectReader<'v> {
    map: &'v Map<String, Value>,
    read: Vec<&'static str>,
}

impl<'v> JsonObjectReader<'v> {
    /// Starts reading `value`, which must be an object.
    pub fn new(value: &'v Value) -> Result<Self, JsonError> {
        let map = value.as_object().ok_or_else(|| expected("an object"))?;
        Ok(JsonObjectReader {
            map,
            read: Vec::new(),
        })
    }

    /// Reads a field that must be present.
    pub fn required<T: JsonForm>(
        &mut self,
        key: &'static str,
        version: i16,
    ) -> Result<T, JsonError> {
        match self.map.get(key) {
            Some(value) => {
                self.read.push(key);
                T::from_json(value, version).map_err(|e| e.in_field(key))
            }
            None => Err(JsonError::new(JsonErrorKind::MissingField).in_field(key)),
        }
    }

    /// Reads a field that may be missing, such as a tagged field.
    pub fn optional<T: JsonForm>(
        &mut self,
        key: &'static str,
        version: i16,
    ) -> Result<Option<T>, JsonError> {
        match self.map.get(key) {
            Some(value) => {
                self.read.push(key);
                T::from_json(value, version)
                    .map(Some)
                    .map_err(|e| e.in_field(key))
            }
            None => Ok(None),
        }
    }

    /// Reads `_unknownTaggedFields`, if present.
    pub fn unknown_tagged_fields(&mut self) -> Result<UnknownTaggedFields<'static>, JsonError> {
        let key = UNKNOWN_TAGGED_FIELDS_KEY;
        let Some(value) = self.map.get(key) else {
            return Ok(UnknownTaggedFields::new());
        };
        self.read.push(key);
        let items = value
            .as_array()
            .ok_or_else(|| expected("a list").in_field(key))?;
        let mut fields = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = (|| {
                let mut entry = JsonObjectReader::new(item)?;
                let tag: u32 = entry.required("tag", 0)?;
                let data: Cow<'static, [u8]> = entry.required("data", 0)?;
                entry.finish()?;
                Ok(RawTaggedField { tag, data })
            })()
            .map_err(|e: JsonError| e.at_index(i).in_field(key))?;
            fields.push(field);
        }
        Ok(fields.into())
    }

    /// Fails if the object has a key that was not read.
    pub fn finish(self) -> Result<(), JsonError> {
        match self.map.keys().find(|k| !self.read.contains(&k.as_str())) {
            None => Ok(()),
            Some(unknown) => Err(JsonError::new(JsonErrorKind::UnknownField(unknown.clone()))),
        }
    }
}

/// Lays `given` over `base`: each member of an object in `given` replaces
/// the member of that key in `base` (objects within objects are laid over
/// each other in turn), and members `given` leaves out keep `base`'s value.
/// Any other value of `given`, an array included, replaces `base` whole.
///
/// This is how a request written in part takes the rest from a default
/// body: lay it over [`RequestBody::default_for`]'s JSON form.
///
/// [`RequestBody::default_for`]: crate::RequestBody::default_for
pub fn overlay(base: &mut Value, given: Value) {
    match (base, given) {
        (Value::Object(base), Value::Object(given)) => {
            for (key, value) in given {
                match base.get_mut(&key) {
                    Some(slot) => overlay(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, given) => *base = given,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bytes_are_written_as_the_scalar_engine_writes_them_at_every_chunk_boundary() {
        let chunk = 3 * 4096;
        let lengths = [0, 1, 2, 3, 4, 767, 768, 1024, chunk - 1, chunk, chunk + 1]
            .into_iter()
            .chain([2 * chunk - 2, 2 * chunk + 2, 5 * chunk + 1]);
        for len in lengths {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 131 + len) as u8).collect();
            let mut text = Vec::new();
            let mut out = JsonWriter::new(&mut text, false);
            // Twice in one writer: the buffer kept between values is reused.
            out.begin_array().unwrap();
            out.base64(&bytes).unwrap();
            out.base64(&bytes[..len / 2]).unwrap();
            out.end_array().unwrap();
            let expected = json!([STANDARD.encode(&bytes), STANDARD.encode(&bytes[..len / 2])]);
            assert_eq!(text, serde_json::to_vec(&expected).unwrap(), "{len} bytes");
        }
    }

    #[test]
    fn overlay_keeps_what_is_left_out_at_every_depth_and_replaces_arrays_whole() {
        let mut base = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2, 3], "f": null});
        overlay(
            &mut base,
            json!({"b": {"d": 4, "g": 5}, "e": [9], "f": {"h": true}}),
        );
        assert_eq!(
            base,
            json!({"a": 1, "b": {"c": 2, "d": 4, "g": 5}, "e": [9], "f": {"h": true}})
        );
    }

    #[test]
    fn scalars() {
        assert_eq!(i64::MAX.to_json(0), json!(9_223_372_036_854_775_807i64));
        assert_eq!(
            i64::from_json(&json!(9_223_372_036_854_775_807i64), 0),
            Ok(i64::MAX)
        );
        assert!(i8::from_json(&json!(128), 0).is_err());
        assert_eq!(u32::from_json(&json!(4_294_967_295u32), 0), Ok(u32::MAX));
        assert_eq!(f64::NAN.to_json(0), json!("NaN"));
        assert_eq!(f64::NEG_INFINITY.to_json(0), json!("-Infinity"));
        assert!(f64::from_json(&json!("NaN"), 0).is_ok_and(f64::is_nan));
        assert_eq!(0.1f64.to_json(0).to_string(), "0.1");
    }

    #[test]
    fn bytes_are_standard_base64() {
        let bytes: Cow<[u8]> = Cow::Borrowed(&[0xfb, 0xff]);
        assert_eq!(bytes.to_json(0), json!("+/8="));
        assert_eq!(Cow::<[u8]>::from_json(&json!("+/8="), 0), Ok(bytes));
        assert!(Cow::<[u8]>::from_json(&json!("-_8"), 0).is_err());
    }

    /// Writes `value` call by call, as generated code does.
    fn walk(value: &Value, out: &mut JsonWriter<'_>) -> io::Result<()> {
        match value {
            Value::Null => out.null(),
            Value::Bool(b) => out.bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => out.u64(u),
                (_, Some(i), _) => out.i64(i),
                (_, _, Some(f)) => out.f64(f),
                _ => out.null(),
            },
            Value::String(s) => out.str(s),
            Value::Array(items) => {
                out.begin_array()?;
                for item in items {
                    walk(item, out)?;
                }
                out.end_array()
            }
            Value::Object(map) => {
                out.begin_object()?;
                for (key, item) in map {
                    out.key(key)?;
                    walk(item, out)?;
                }
                out.end_object()
            }
        }
    }

    fn text(pretty: bool, write: impl FnOnce(&mut JsonWriter<'_>) -> io::Result<()>) -> String {
        let mut bytes = Vec::new();
        write(&mut JsonWriter::new(&mut bytes, pretty)).unwrap_or_else(|e| panic!("{e}"));
        String::from_utf8(bytes).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_writer_prints_as_serde_json_does() {
        let values = [
            json!({}),
            json!([]),
            json!("top"),
            json!([[], {}, [[]], [{}], {"a": {}}, {"b": []}]),
            json!({
                "empty": [], "nested": {"deeper": {"deepest": [1, [2, [3]], {}]}},
                "escapes": "é✓ \n\t\"\\\u{1}\u{7f}\u{2028}</script>",
                "floats": [0.1, -0.0, 1e300, 5e-324, 123456789.0, 1.0],
                "ints": [i64::MIN, -1, 0, u64::MAX],
                "null": null, "true": true, "false": false,
                "": "the empty key", "key \"quoted\"": 1
            }),
            // Long strings, checked for escapes a block at a time: plain,
            // and with a quote or a control character past the first block.
            json!([
                "ab".repeat(100),
                format!("{}\"{}", "a".repeat(70), "b".repeat(70))
            ]),
            json!({"c".repeat(65): format!("{}\u{1f}", "d".repeat(127))}),
        ];
        for value in &values {
            for pretty in [false, true] {
                let expected = if pretty {
                    serde_json::to_string_pretty(value)
                } else {
                    serde_json::to_string(value)
                }
                .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(text(pretty, |out| walk(value, out)), expected);
                // A whole Value written at depth is laid out the same.
                let nested = json!({"outer": [value]});
                let expected = if pretty {
                    serde_json::to_string_pretty(&nested)
                } else {
                    serde_json::to_string(&nested)
                }
                .unwrap_or_else(|e| panic!("{e}"));
                let written = text(pretty, |out| {
                    out.begin_object()?;
                    out.key("outer")?;
                    out.begin_array()?;
                    out.value(value)?;
                    out.end_array()?;
                    out.end_object()
                });
                assert_eq!(written, expected);
            }
        }
    }

    #[test]
    fn floats_and_bytes_stream_as_their_json_form() {
        for f in [
            0.1,
            -0.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let expected = serde_json::to_string(&f.to_json(0)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(text(false, |out| f.write_json(out, 0)), expected);
        }
        for len in 0..5 {
            let bytes: Cow<[u8]> = Cow::Owned((0..len).map(|b| 250 + b).collect());
            let expected =
                serde_json::to_string(&bytes.to_json(0)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(text(true, |out| bytes.write_json(out, 0)), expected);
        }
    }

    #[test]
    fn object_reader_names_the_path() {
        let value = json!({"a": 1});
        let mut reader = JsonObjectReader::new(&value).unwrap_or_else(|e| panic!("{e}"));
        let error = reader.required::<i8>("b", 0).unwrap_err();
        assert_eq!(error.to_string(), "$.b: missing field");
        let error = Vec::<i8>::from_json(&json!([1, 300]), 0)
            .map_err(|e| e.in_field("list"))
            .unwrap_err();
        assert_eq!(error.to_string(), "$.list[1]: 300 is out of range for int8");
    }
}
