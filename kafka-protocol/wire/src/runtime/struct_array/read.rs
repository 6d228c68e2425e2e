//! Reading an array of structs from a [`Reader`]: decoding it into a `Vec`,
//! or checking it and keeping its wire bytes, and checking one without
//! keeping anything (`skip_*`).

#[cfg(debug_assertions)]
use super::checks::ElementChecks;
use super::{ArrayStart, StructArray, WireOrigin};
use crate::runtime::element_vec::ElementVec;
use crate::runtime::error::{DecodeError, DecodeErrorKind};
use crate::runtime::message::Decode;
use crate::runtime::reader::Reader;

impl<'a> Reader<'a> {
    /// Reads an array of structs that may be null. Two or more elements that
    /// hold arrays of structs themselves ([`Decode::HOLDS_STRUCT_ARRAYS`])
    /// are decoded into a `Vec` when the heap budget allows (see
    /// [`Reader::new`]);
    /// otherwise each element is checked with [`Decode::validate_from`] and
    /// the array keeps only the checked bytes, which [`StructArray::iter`]
    /// decodes. Either way a fault anywhere is reported now, with its index.
    #[inline]
    pub fn read_nullable_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        version: i16,
    ) -> Result<Option<StructArray<'a, T>>, DecodeError> {
        let Some(array) = self.begin_struct_array(compact)? else {
            return Ok(None);
        };
        if array.count == 0 {
            // Nothing to check or decode: the reader stays as canonical as
            // it was.
            self.canonical = array.canonical_before;
            return Ok(Some(StructArray::empty_from_wire(version)));
        }
        // A constant test first: for the many element types that hold no
        // arrays of structs, the branch that decodes into a `Vec` is then
        // never instantiated at all, in debug builds as in release ones.
        if T::HOLDS_STRUCT_ARRAYS && self.take_heap_for_vec(array.count, size_of::<T>()) {
            let items = self.decode_elements::<T>(array.count, version)?;
            let origin = self.end_struct_array(&array, version, false);
            #[cfg(debug_assertions)]
            self.debug_check_validates(&array, version, origin.canonical, ElementChecks::of::<T>());
            return Ok(Some(StructArray {
                items: ElementVec::from_vec(items),
                origin: Some(origin),
            }));
        }
        self.validate_elements::<T>(array.count, version)?;
        Ok(Some(StructArray {
            items: ElementVec::new(),
            origin: Some(self.end_struct_array(&array, version, true)),
        }))
    }

    /// Checks an array of structs that may not be null and builds nothing,
    /// for `validate_from`: it accepts and rejects exactly what
    /// [`Reader::read_struct_array`] does, with the same errors, without an
    /// array to return and drop.
    #[inline]
    pub fn skip_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        version: i16,
    ) -> Result<(), DecodeError> {
        let start = self.offset();
        match self.read_array_len(compact, 1)? {
            Some(0) => Ok(()),
            Some(count) => self.validate_elements::<T>(count, version),
            None => Err(DecodeError::new(start, DecodeErrorKind::UnexpectedNull)),
        }
    }

    /// Checks an array of structs that may be null and builds nothing, as
    /// [`Reader::read_nullable_struct_array`] would accept or reject it.
    #[inline]
    pub fn skip_nullable_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        version: i16,
    ) -> Result<(), DecodeError> {
        match self.read_array_len(compact, 1)? {
            Some(0) | None => Ok(()),
            Some(count) => self.validate_elements::<T>(count, version),
        }
    }

    /// Reads the count of an array of structs: `None` for null. Always
    /// inlined in release builds: called as a function, it cost each array
    /// of a Produce request's partitions some four instructions more.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn begin_struct_array(&mut self, compact: bool) -> Result<Option<ArrayStart>, DecodeError> {
        let Some(count) = self.read_array_len(compact, 1)? else {
            return Ok(None);
        };
        Ok(Some(ArrayStart {
            count,
            start: self.position(),
            canonical_before: std::mem::replace(&mut self.canonical, true),
        }))
    }

    /// Whether an array of `count` elements of `element_size` bytes each,
    /// elements that hold arrays of structs, is decoded into a `Vec`, taking
    /// that much of the heap budget if so: when there are two or more of
    /// them (a single element is worth no allocation: reading it checks its
    /// nested arrays once more, once) and the budget has room.
    fn take_heap_for_vec(&mut self, count: usize, element_size: usize) -> bool {
        let heap = count.saturating_mul(element_size);
        let fits = count > 1 && heap <= self.heap_budget;
        if fits {
            self.heap_budget -= heap;
        }
        fits
    }

    /// Ends an array of structs read at `version` since `array` began: where
    /// its elements' bytes are, and whether they are canonical. The reader
    /// is canonical from here when it was before the array and the array is.
    #[inline]
    fn end_struct_array(
        &mut self,
        array: &ArrayStart,
        version: i16,
        bytes_only: bool,
    ) -> WireOrigin<'a> {
        let canonical = self.canonical;
        self.canonical = array.canonical_before && canonical;
        WireOrigin {
            bytes: &self.input[array.start..self.position()],
            // A count fits in 32 bits: it came from an int32 or a uvarint.
            count: u32::try_from(array.count).unwrap_or(u32::MAX),
            version,
            canonical,
            bytes_only,
        }
    }

    /// Decodes `count` elements into a `Vec` of exactly that capacity.
    /// Never inlined, like [`Reader::validate_elements`], so that each
    /// element type's decoder is compiled into one loop rather than into
    /// every decoder of an enclosing struct; it runs once per array.
    #[inline(never)]
    fn decode_elements<T: Decode<'a>>(
        &mut self,
        count: usize,
        version: i16,
    ) -> Result<Vec<T>, DecodeError> {
        let mut items = Vec::with_capacity(count);
        for index in 0..count {
            match T::decode_from(self, version) {
                Ok(item) => items.push(item),
                Err(e) => return Err(e.at_index(index)),
            }
        }
        Ok(items)
    }

    /// Checks `count` elements, building nothing: arrays nested in them are
    /// kept as wire bytes too, whatever budget is left. Generic, unlike the
    /// other loops over elements, because it is the hot loop of decoding:
    /// each element type's `validate_from` is inlined into it.
    ///
    /// Never inlined itself: it is compiled once per element type, where
    /// inlining put a copy of the loop, and of every element check inlined
    /// into it, in each decoder and validator of an enclosing struct. In a
    /// consumer that compiles its messages (kafka-wire without
    /// `precompile`), that halved the time of rebuilding a program that
    /// decodes one MetadataResponse, for about one call per array decoded.
    #[inline(never)]
    fn validate_elements<T: Decode<'a>>(
        &mut self,
        count: usize,
        version: i16,
    ) -> Result<(), DecodeError> {
        let budget = std::mem::take(&mut self.heap_budget);
        let mut result = Ok(());
        for index in 0..count {
            #[cfg(debug_assertions)]
            let element_start = self.position();
            if let Err(e) = T::validate_from(self, version) {
                result = Err(e.at_index(index));
                break;
            }
            #[cfg(debug_assertions)]
            self.debug_check_decodes(element_start, version, ElementChecks::of::<T>());
        }
        self.heap_budget = budget;
        result
    }

    /// Reads an array of structs that must not be null.
    #[inline]
    pub fn read_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        version: i16,
    ) -> Result<StructArray<'a, T>, DecodeError> {
        let start = self.offset();
        match self.read_nullable_struct_array(compact, version)? {
            Some(array) => Ok(array),
            None => Err(DecodeError::new(start, DecodeErrorKind::UnexpectedNull)),
        }
    }
}
