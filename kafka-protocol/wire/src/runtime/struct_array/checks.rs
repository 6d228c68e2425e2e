//! The debug self-checks of reading arrays of structs (debug builds only,
//! and so every test): what `decode_from` accepts, `validate_from` accepts
//! too, and the other way round, on the same bytes.

use std::cell::Cell;

use super::ArrayStart;
use crate::runtime::error::DecodeError;
use crate::runtime::message::Decode;
use crate::runtime::reader::Reader;

/// The debug self-checks' view of an element type: its `validate_from`,
/// and a decode that drops what it built, as plain function pointers, so
/// that the checks are compiled once rather than once per element type.
#[derive(Clone, Copy)]
pub(super) struct ElementChecks<'a> {
    validate: fn(&mut Reader<'a>, i16) -> Result<(), DecodeError>,
    decode: fn(&mut Reader<'a>, i16) -> Result<(), DecodeError>,
}

impl<'a> ElementChecks<'a> {
    pub(super) fn of<T: Decode<'a>>() -> Self {
        ElementChecks {
            validate: T::validate_from,
            decode: |reader, version| match T::decode_from(reader, version) {
                Ok(_decoded) => Ok(()),
                Err(e) => Err(e),
            },
        }
    }
}

thread_local! {
    /// Set while the debug self-check re-decodes an element, so that the
    /// arrays nested in it are not checked once more per level.
    static RECHECKING: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as re-decoding for the debug self-check until dropped,
/// even if the decode unwinds.
struct Rechecking;

impl Rechecking {
    fn start() -> Self {
        RECHECKING.with(|flag| flag.set(true));
        Rechecking
    }
}

impl Drop for Rechecking {
    fn drop(&mut self) {
        RECHECKING.with(|flag| flag.set(false));
    }
}

impl<'a> Reader<'a> {
    /// A fresh reader over the same input at `position`, allocating nothing,
    /// for the debug self-checks to read bytes again.
    fn rechecker(&self, position: usize) -> Reader<'a> {
        Reader {
            input: self.input,
            unread: self.input.get(position..).unwrap_or_default(),
            base: self.base,
            canonical: true,
            heap_budget: 0,
        }
    }

    /// In debug builds (and so in every test), checks that what decoding
    /// just accepted, `validate_from` accepts too, ending at the same byte
    /// and finding the same bytes canonical: the promise `Message::validate`
    /// and arrays kept as wire bytes rely on.
    pub(super) fn debug_check_validates(
        &self,
        array: &ArrayStart,
        version: i16,
        canonical: bool,
        checks: ElementChecks<'a>,
    ) {
        if RECHECKING.with(Cell::get) {
            return;
        }
        let start = array.start;
        let mut again = self.rechecker(start);
        let validated = {
            let _rechecking = Rechecking::start();
            (0..array.count).try_for_each(|_| (checks.validate)(&mut again, version))
        };
        debug_assert!(
            validated.is_ok()
                && again.position() == self.position()
                && again.canonical == canonical,
            "decode_from and validate_from disagree at offset {}: {:?}, {} bytes against {}, \
             canonical {} against {}",
            self.base + start,
            validated.err(),
            again.position() - start,
            self.position() - start,
            again.canonical,
            canonical,
        );
    }

    /// In debug builds (and so in every test), checks the promise iteration
    /// relies on: what `validate_from` accepted, `decode_from` decodes, using the
    /// same bytes.
    ///
    /// Arrays nested inside the element are not checked again while it is
    /// re-decoded: each was checked when its own enclosing element was
    /// validated, and checking them once per enclosing level would cost
    /// 2^depth decodes.
    pub(super) fn debug_check_decodes(
        &self,
        element_start: usize,
        version: i16,
        checks: ElementChecks<'a>,
    ) {
        if RECHECKING.with(Cell::get) {
            return;
        }
        let mut again = self.rechecker(element_start);
        let decoded = {
            let _rechecking = Rechecking::start();
            (checks.decode)(&mut again, version)
        };
        debug_assert!(
            decoded.is_ok() && again.position() == self.position(),
            "validate_from and decode_from disagree at offset {}: {:?}, {} bytes against {}",
            self.base + element_start,
            decoded.err(),
            again.position() - element_start,
            self.position() - element_start,
        );
    }
}
