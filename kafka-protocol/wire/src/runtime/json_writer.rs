//! [`JsonWriter`]: the JSON form written piece by piece, straight from a
//! decoded value, as text or as a [`Value`].
//!
//! The text is exactly what serde_json prints for the same [`Value`]:
//! strings, numbers and whole values are formatted by serde_json itself,
//! and the layout is its compact one (no whitespace) or its pretty one (two
//! spaces of indent per level, `": "` after keys, empty containers as `[]`
//! and `{}`). Building the [`Value`] goes through the same calls, so that
//! [`JsonForm::to_json`](crate::runtime::json::JsonForm::to_json) and the text can
//! never describe two different shapes.

use std::io::{self, Write};

use base64::Engine;
use serde_json::{Map, Number, Value};

/// Writes one JSON value piece by piece: containers are opened and closed,
/// members are a [`key`](Self::key) followed by a value, and separators and
/// indentation are written where they belong.
///
/// Over an [`io::Write`], nothing is held but the depth: the text of a
/// message of any size is written in constant memory, apart from what the
/// writer buffers (and the one value [`value_if`](Self::value_if) holds
/// back). Each write goes straight to the underlying writer, so give it a
/// buffered one (such as [`io::BufWriter`]).
///
/// ```
/// use kafka_wire::runtime::json::JsonWriter;
///
/// let mut text = Vec::new();
/// let mut out = JsonWriter::pretty(&mut text);
/// out.begin_object()?;
/// out.key("versions")?;
/// out.begin_array()?;
/// out.i64(3)?;
/// out.end_array()?;
/// out.end_object()?;
/// assert_eq!(text, b"{\n  \"versions\": [\n    3\n  ]\n}");
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct JsonWriter<'w> {
    sink: Sink<'w>,
    /// How the bytes of a chosen member are written instead of base64.
    bytes_form: Option<BytesForm>,
    /// True when the last key was `bytes_form`'s.
    at_bytes_form_key: bool,
}

/// Another form for the bytes of the members named [`key`](Self::key)
/// (such as the record batches of Produce and Fetch), given to
/// [`JsonWriter::set_bytes_form`]: where the writer would write the base64 of
/// such a member's bytes, it calls [`write`](Self::write) instead.
#[derive(Debug, Clone, Copy)]
pub struct BytesForm {
    /// The key of the members whose bytes take this form.
    pub key: &'static str,
    /// Writes one value for the bytes and returns `Ok(true)`, or writes
    /// nothing and returns `Ok(false)`, leaving the bytes as base64 (see
    /// [`JsonWriter::value_if`] for a form that can fail part way).
    pub write: fn(&[u8], &mut JsonWriter<'_>) -> io::Result<bool>,
}

enum Sink<'w> {
    Text(Text<'w>),
    Tree(Tree),
}

/// The text form's state.
struct Text<'w> {
    out: &'w mut dyn Write,
    pretty: bool,
    /// The number of open containers.
    depth: usize,
    /// True until the innermost open container gets its first element or
    /// member. Closing a container gives its parent one, so one flag is
    /// enough.
    first: bool,
    /// True between a key and its value.
    after_key: bool,
    /// The buffer of [`JsonWriter::value_if`], kept between calls so that
    /// it grows once.
    scratch: Vec<u8>,
    /// The buffer base64 is encoded into before it is written, kept so
    /// that it is zeroed once (bytes are written a value at a time, most of
    /// them short, such as the records of a capture).
    base64: Vec<u8>,
}

/// The tree form's state: the open containers, innermost last.
struct Tree {
    open: Vec<Open>,
    done: Option<Value>,
}

enum Open {
    Object(Map<String, Value>, Option<String>),
    Array(Vec<Value>),
}

impl<'w> JsonWriter<'w> {
    /// Writes the text on one line, as `serde_json::to_writer` does.
    pub fn compact(out: &'w mut dyn Write) -> Self {
        JsonWriter::new(out, false)
    }

    /// Writes the text indented, as `serde_json::to_writer_pretty` does.
    pub fn pretty(out: &'w mut dyn Write) -> Self {
        JsonWriter::new(out, true)
    }

    /// Writes the text indented when `pretty`, else on one line.
    pub fn new(out: &'w mut dyn Write, pretty: bool) -> Self {
        JsonWriter::over(Sink::Text(Text {
            out,
            pretty,
            depth: 0,
            first: true,
            after_key: false,
            scratch: Vec::new(),
            base64: Vec::new(),
        }))
    }

    fn over(sink: Sink<'w>) -> Self {
        JsonWriter {
            sink,
            bytes_form: None,
            at_bytes_form_key: false,
        }
    }
}

impl JsonWriter<'static> {
    /// The [`Value`] that `write` writes.
    pub(crate) fn build(write: impl FnOnce(&mut JsonWriter<'_>) -> io::Result<()>) -> Value {
        let built = JsonWriter::try_build(write);
        // Building a tree writes to no io::Write, so it cannot fail.
        debug_assert!(built.is_ok(), "building a JSON tree failed: {built:?}");
        built.unwrap_or(Value::Null)
    }

    /// The [`Value`] that `write` writes, or the error it stops with: the
    /// tree form of text written piece by piece, for a value whose writing
    /// can fail for reasons of its own (such as bytes that do not decode).
    /// Building the tree itself never fails.
    pub fn try_build<E>(
        write: impl FnOnce(&mut JsonWriter<'_>) -> Result<(), E>,
    ) -> Result<Value, E> {
        let mut writer = JsonWriter::over(Sink::Tree(Tree {
            open: Vec::new(),
            done: None,
        }));
        write(&mut writer)?;
        Ok(match writer.sink {
            Sink::Tree(tree) => tree.done.unwrap_or(Value::Null),
            Sink::Text(_) => Value::Null,
        })
    }
}

impl Text<'_> {
    /// A line break and the indent of the current depth (pretty only).
    fn newline(&mut self) -> io::Result<()> {
        if self.pretty {
            self.out.write_all(b"\n")?;
            for _ in 0..self.depth {
                self.out.write_all(b"  ")?;
            }
        }
        Ok(())
    }

    /// What goes before a member or an element: a comma after the first,
    /// then a new line.
    fn item(&mut self) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",")?;
        }
        self.first = false;
        self.newline()
    }

    /// What goes before a value: nothing after a key or at the top, else
    /// what goes before an element.
    fn before_value(&mut self) -> io::Result<()> {
        if self.after_key {
            self.after_key = false;
            Ok(())
        } else if self.depth == 0 {
            Ok(())
        } else {
            self.item()
        }
    }

    fn open(&mut self, bracket: &[u8]) -> io::Result<()> {
        self.before_value()?;
        self.out.write_all(bracket)?;
        self.depth += 1;
        self.first = true;
        Ok(())
    }

    fn close(&mut self, bracket: &[u8]) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if !self.first {
            self.newline()?;
        }
        self.first = false;
        self.out.write_all(bracket)
    }

    /// Writes a value that `write` formats with serde_json.
    fn serialized(
        &mut self,
        write: impl FnOnce(&mut dyn Write) -> serde_json::Result<()>,
    ) -> io::Result<()> {
        self.before_value()?;
        Ok(write(&mut *self.out)?)
    }
}

impl Tree {
    /// Puts a finished value where it belongs.
    fn put(&mut self, value: Value) {
        match self.open.last_mut() {
            None => self.done = Some(value),
            Some(Open::Array(items)) => items.push(value),
            Some(Open::Object(map, key)) => {
                map.insert(key.take().unwrap_or_default(), value);
            }
        }
    }

    fn close(&mut self) {
        let value = match self.open.pop() {
            Some(Open::Object(map, _)) => Value::Object(map),
            Some(Open::Array(items)) => Value::Array(items),
            None => return,
        };
        self.put(value);
    }
}

impl JsonWriter<'_> {
    /// Opens an object (`{`).
    pub fn begin_object(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Text(text) => text.open(b"{"),
            Sink::Tree(tree) => {
                tree.open.push(Open::Object(Map::new(), None));
                Ok(())
            }
        }
    }

    /// Closes the innermost object (`}`).
    pub fn end_object(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Text(text) => text.close(b"}"),
            Sink::Tree(tree) => {
                tree.close();
                Ok(())
            }
        }
    }

    /// Opens an array (`[`).
    pub fn begin_array(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Text(text) => text.open(b"["),
            Sink::Tree(tree) => {
                tree.open.push(Open::Array(Vec::new()));
                Ok(())
            }
        }
    }

    /// Closes the innermost array (`]`).
    pub fn end_array(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Text(text) => text.close(b"]"),
            Sink::Tree(tree) => {
                tree.close();
                Ok(())
            }
        }
    }

    /// Starts a member of the innermost object: its key, then its value
    /// is the next one written.
    pub fn key(&mut self, key: &str) -> io::Result<()> {
        self.at_bytes_form_key = self.bytes_form.is_some_and(|form| form.key == key);
        match &mut self.sink {
            Sink::Text(text) => {
                text.after_key = true;
                // A short key with nothing to escape, as almost every key
                // is, goes out with its separators in one write.
                let mut short = [0u8; 64];
                let separator: &[u8] = if text.pretty { b": " } else { b":" };
                let comma = usize::from(!text.first);
                let len = comma + key.len() + 2 + separator.len();
                if !text.pretty && len <= short.len() && !needs_escape(key.as_bytes()) {
                    text.first = false;
                    short[0] = b',';
                    short[comma] = b'"';
                    short[comma + 1..comma + 1 + key.len()].copy_from_slice(key.as_bytes());
                    short[comma + 1 + key.len()] = b'"';
                    short[comma + 2 + key.len()..len].copy_from_slice(separator);
                    return text.out.write_all(&short[..len]);
                }
                text.item()?;
                write_str(&mut *text.out, key)?;
                text.out.write_all(separator)
            }
            Sink::Tree(tree) => {
                if let Some(Open::Object(_, pending)) = tree.open.last_mut() {
                    *pending = Some(key.to_owned());
                }
                Ok(())
            }
        }
    }

    /// Writes `null`.
    pub fn null(&mut self) -> io::Result<()> {
        self.scalar(|out| serde_json::to_writer(out, &()), || Value::Null)
    }

    /// Writes `true` or `false`.
    pub fn bool(&mut self, value: bool) -> io::Result<()> {
        self.scalar(
            |out| serde_json::to_writer(out, &value),
            || Value::Bool(value),
        )
    }

    /// Writes a signed integer.
    pub fn i64(&mut self, value: i64) -> io::Result<()> {
        self.scalar(
            |out| serde_json::to_writer(out, &value),
            || Value::from(value),
        )
    }

    /// Writes an unsigned integer.
    pub fn u64(&mut self, value: u64) -> io::Result<()> {
        self.scalar(
            |out| serde_json::to_writer(out, &value),
            || Value::from(value),
        )
    }

    /// Writes a float as serde_json writes it, or, as JSON has no such
    /// numbers, `"NaN"`, `"Infinity"` or `"-Infinity"`.
    pub fn f64(&mut self, value: f64) -> io::Result<()> {
        match Number::from_f64(value) {
            Some(number) => self.scalar(
                |out| serde_json::to_writer(out, &number),
                || Value::Number(number.clone()),
            ),
            None if value.is_nan() => self.str("NaN"),
            None if value > 0.0 => self.str("Infinity"),
            None => self.str("-Infinity"),
        }
    }

    /// Writes a string, escaped as serde_json escapes it.
    pub fn str(&mut self, value: &str) -> io::Result<()> {
        self.scalar(
            |out| write_str(out, value).map_err(serde_json::Error::io),
            || Value::String(value.to_owned()),
        )
    }

    /// Writes bytes as a standard base64 string with padding, encoded
    /// straight into the output; or, as the value of a member that
    /// [`set_bytes_form`](Self::set_bytes_form) chose, in that form when it
    /// writes one.
    pub fn base64(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.at_bytes_form_key && self.after_key() {
            self.at_bytes_form_key = false;
            if let Some(form) = self.bytes_form {
                if (form.write)(bytes, self)? {
                    return Ok(());
                }
            }
        }
        match &mut self.sink {
            Sink::Text(text) => {
                text.before_value()?;
                // Base64 needs no escaping.
                text.out.write_all(b"\"")?;
                write_base64(&mut *text.out, &mut text.base64, bytes)?;
                text.out.write_all(b"\"")
            }
            Sink::Tree(tree) => {
                tree.put(Value::String(base64_engine().encode(bytes)));
                Ok(())
            }
        }
    }

    /// Writes the bytes of every later member named `form.key` in `form`
    /// rather than as base64, or, with `None`, as base64 again. Returns the
    /// form this replaces.
    pub fn set_bytes_form(&mut self, form: Option<BytesForm>) -> Option<BytesForm> {
        self.at_bytes_form_key = false;
        std::mem::replace(&mut self.bytes_form, form)
    }

    /// Whether the next value is a member's, right after its key.
    fn after_key(&self) -> bool {
        match &self.sink {
            Sink::Text(text) => text.after_key,
            Sink::Tree(tree) => matches!(tree.open.last(), Some(Open::Object(_, Some(_)))),
        }
    }

    /// Writes the one value that `write` writes, or nothing: `write` writes
    /// to a buffer, laid out as the rest of the text, which is kept when it
    /// returns `Ok(true)` and dropped when it returns `Ok(false)` or fails.
    /// Returns what `write` returned. For a value that can turn out part
    /// way not to have this form, such as bytes decoded as they are
    /// written. The buffer holds one such value; the rest of the text is
    /// written as before.
    pub fn value_if(
        &mut self,
        write: impl FnOnce(&mut JsonWriter<'_>) -> io::Result<bool>,
    ) -> io::Result<bool> {
        match &mut self.sink {
            Sink::Text(text) => {
                let mut buffer = std::mem::take(&mut text.scratch);
                buffer.clear();
                let mut inner = JsonWriter::over(Sink::Text(Text {
                    out: &mut buffer,
                    pretty: text.pretty,
                    depth: text.depth,
                    first: true,
                    // The value is the buffer's first: nothing before it.
                    after_key: true,
                    scratch: Vec::new(),
                    base64: std::mem::take(&mut text.base64),
                }));
                let kept = write(&mut inner);
                if let Sink::Text(inner) = inner.sink {
                    text.base64 = inner.base64;
                }
                let written = match kept {
                    Ok(true) => text
                        .before_value()
                        .and_then(|()| text.out.write_all(&buffer))
                        .map(|()| true),
                    other => other,
                };
                text.scratch = buffer;
                written
            }
            Sink::Tree(tree) => {
                let mut kept = false;
                let value = JsonWriter::try_build(|out| {
                    kept = write(out)?;
                    Ok::<(), io::Error>(())
                })?;
                if kept {
                    tree.put(value);
                }
                Ok(kept)
            }
        }
    }

    /// Writes a whole [`Value`], laid out as the rest of the text.
    pub fn value(&mut self, value: &Value) -> io::Result<()> {
        match &mut self.sink {
            Sink::Text(text) if text.pretty => {
                text.before_value()?;
                // Strings escape their line breaks, so every line break of
                // the pretty text starts a line, indented by the depth.
                let pretty = serde_json::to_vec_pretty(value)?;
                for (index, line) in pretty.split(|&byte| byte == b'\n').enumerate() {
                    if index > 0 {
                        text.newline()?;
                    }
                    text.out.write_all(line)?;
                }
                Ok(())
            }
            Sink::Text(_) => self.walk(value),
            Sink::Tree(tree) => {
                tree.put(value.clone());
                Ok(())
            }
        }
    }

    /// Writes `value` call by call (compact text): its strings go through
    /// [`write_str`], its numbers through serde_json.
    fn walk(&mut self, value: &Value) -> io::Result<()> {
        match value {
            Value::Null => self.null(),
            Value::Bool(b) => self.bool(*b),
            Value::Number(number) => self.scalar(
                |out| serde_json::to_writer(out, number),
                || Value::Number(number.clone()),
            ),
            Value::String(text) => self.str(text),
            Value::Array(items) => {
                self.begin_array()?;
                for item in items {
                    self.walk(item)?;
                }
                self.end_array()
            }
            Value::Object(map) => {
                self.begin_object()?;
                for (key, item) in map {
                    self.key(key)?;
                    self.walk(item)?;
                }
                self.end_object()
            }
        }
    }

    /// A value that `text` formats with serde_json, or the tree's
    /// `Value` for it.
    fn scalar(
        &mut self,
        text: impl FnOnce(&mut dyn Write) -> serde_json::Result<()>,
        tree_value: impl FnOnce() -> Value,
    ) -> io::Result<()> {
        match &mut self.sink {
            Sink::Text(sink) => sink.serialized(text),
            Sink::Tree(tree) => {
                tree.put(tree_value());
                Ok(())
            }
        }
    }
}

/// Writes `bytes` as standard base64 with padding, a chunk at a time
/// through `buffer` (grown to the chunk's text once).
fn write_base64(out: &mut dyn Write, buffer: &mut Vec<u8>, bytes: &[u8]) -> io::Result<()> {
    // A multiple of three, so that only the last chunk may be padded.
    const CHUNK: usize = 3 * 4096;
    for chunk in bytes.chunks(CHUNK) {
        let needed = chunk.len().div_ceil(3) * 4;
        if buffer.len() < needed {
            buffer.resize(needed, 0);
        }
        let len = base64_engine()
            .encode_slice(chunk, buffer)
            .map_err(io::Error::other)?;
        out.write_all(&buffer[..len])?;
    }
    Ok(())
}

/// The standard base64 alphabet with padding, on the widest vector
/// instructions the processor has (detected once): records and batches in
/// base64 are most of the text of a capture or a Produce.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn base64_engine() -> &'static impl Engine {
    use base64::engine::Simd;
    use std::sync::LazyLock;
    static ENGINE: LazyLock<Simd> =
        LazyLock::new(|| Simd::standard(base64::engine::general_purpose::PAD));
    &*ENGINE
}

/// The standard base64 alphabet with padding.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn base64_engine() -> &'static impl Engine {
    &base64::engine::general_purpose::STANDARD
}

/// Writes `text` as a JSON string, as serde_json writes it: a string with
/// nothing to escape (no control character, no `"` and no backslash: what
/// serde_json escapes), such as base64, is written whole, in one write;
/// any other goes through serde_json.
fn write_str(out: &mut dyn Write, text: &str) -> io::Result<()> {
    if needs_escape(text.as_bytes()) {
        return Ok(serde_json::to_writer(out, text)?);
    }
    out.write_all(b"\"")?;
    out.write_all(text.as_bytes())?;
    out.write_all(b"\"")
}

/// Whether serde_json escapes any byte of `bytes`. Checked a block at a
/// time without a branch per byte, so that the compiler can vectorize it:
/// long strings (base64 records, megabytes in a capture) are the case that
/// counts.
fn needs_escape(bytes: &[u8]) -> bool {
    bytes.chunks(64).any(|block| {
        block.iter().fold(false, |any, &b| {
            any | (b < 0x20) | (b == b'"') | (b == b'\\')
        })
    })
}
