use super::{StructArray, WireOrigin};
use crate::runtime::element_vec::ElementVec;
use crate::runtime::error::DecodeError;
use crate::runtime::message::Decode;
use crate::runtime::reader::Reader;

impl<'a, T> StructArray<'a, T> {
    /// An array of `count` elements kept as the checked bytes `wire`,
    /// read at version 0, as the reader makes them.
    fn from_checked_wire(wire: &'a [u8], count: u32) -> Self {
        StructArray {
            items: ElementVec::new(),
            origin: Some(WireOrigin {
                bytes: wire,
                count,
                version: 0,
                canonical: true,
                bytes_only: true,
            }),
        }
    }
}

/// A two-field struct for the tests: an int8 and an int16.
#[derive(Debug, Clone, PartialEq)]
struct Pair(i8, i16);

impl<'a> Decode<'a> for Pair {
    fn decode_from(reader: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
        Ok(Pair(reader.read_i8()?, reader.read_i16()?))
    }
}

#[test]
fn decoded_arrays_equal_built_ones_and_iterate_alike() {
    let wire = [1, 0, 2, 3, 0, 4];
    let decoded = StructArray::<Pair>::from_checked_wire(&wire, 2);
    let built: StructArray<Pair> = vec![Pair(1, 2), Pair(3, 4)].into();
    assert_eq!(decoded, built);
    assert_eq!(decoded.len(), 2);
    assert_eq!(decoded.get(1).as_deref(), Some(&Pair(3, 4)));
    assert_eq!(decoded.get(2), None);
    assert_eq!(decoded.wire(), Some((&wire[..], 0)));
    assert_eq!(built.wire(), None);
    assert!(decoded.encodes_by_copy(0));
    assert!(!decoded.encodes_by_copy(1));
    assert!(!built.encodes_by_copy(0));
    assert_eq!(decoded.clone().into_vec(), vec![Pair(1, 2), Pair(3, 4)]);
    assert_ne!(decoded, vec![Pair(1, 2)].into());
    assert_ne!(decoded, vec![Pair(1, 2), Pair(3, 5)].into());
}

/// Validates like [`Pair`] but cannot decode: the disagreement a
/// checked array must never hide.
#[derive(Debug, Clone, PartialEq)]
struct Liar;

impl<'a> Decode<'a> for Liar {
    fn decode_from(reader: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
        Err(reader.error(crate::runtime::DecodeErrorKind::UnexpectedNull))
    }
}

#[test]
#[should_panic(expected = "bug in kafka-wire: a checked struct array element failed")]
fn an_element_that_does_not_decode_is_never_silently_dropped() {
    // Two elements promised: iteration must not quietly end after none.
    let wire = [1, 0, 2, 3, 0, 4];
    let array = StructArray::<Liar>::from_checked_wire(&wire, 2);
    assert_eq!(array.len(), 2);
    let _ = array.iter().count();
}

#[test]
fn changing_a_decoded_array_decodes_it_first() {
    let wire = [1, 0, 2];
    let mut array = StructArray::<Pair>::from_checked_wire(&wire, 1);
    array.push(Pair(5, 6));
    assert_eq!(array.wire(), None);
    assert_eq!(array.as_slice(), Some(&[Pair(1, 2), Pair(5, 6)][..]));
}

/// A struct holding an array of itself, counting its decodes, to
/// measure the work of reading deeply nested arrays.
#[derive(Debug, Clone)]
struct Node;

thread_local! {
    static NODE_DECODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl<'a> Decode<'a> for Node {
    fn decode_from(reader: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        NODE_DECODES.with(|n| n.set(n.get() + 1));
        reader.read_struct_array::<Node>(false, version)?;
        Ok(Node)
    }
}

#[test]
fn nested_struct_arrays_are_read_in_work_linear_per_level() {
    // A chain of nodes, each holding one, `DEPTH` deep.
    const DEPTH: usize = 14;
    let mut wire = [0, 0, 0, 1].repeat(DEPTH);
    wire.extend_from_slice(&[0, 0, 0, 0]);
    NODE_DECODES.with(|n| n.set(0));
    let mut reader = Reader::new(&wire);
    assert!(Node::decode_from(&mut reader, 0).is_ok());
    assert!(reader.finish().is_ok());
    let decodes = NODE_DECODES.with(std::cell::Cell::get);
    // Each node is validated once per enclosing level, and decoded
    // again by the debug self-check at most once more per level: about
    // DEPTH^2, never 2^DEPTH.
    let bound = 2 * (DEPTH + 1) * (DEPTH + 1);
    assert!(
        decodes <= bound,
        "{decodes} node decodes for a chain {DEPTH} deep (bound {bound})"
    );
}
