//! Owned values: the same types with a `'static` lifetime, for code that
//! keeps a message beyond the buffer it was decoded from.
//!
//! Decoded values borrow strings, bytes and arrays from their input.
//! [`IntoOwned::into_owned`] copies exactly what still borrows and moves
//! everything else, so a value built in code (which owns its data) costs
//! nothing to convert. Every generated struct and message implements it,
//! and also has an inherent `into_owned` so that no import is needed.
//!
//! An array of structs decoded from the wire (see [`StructArray`]) becomes
//! a `Vec` of owned elements: each element is decoded once and copied. The
//! owned array then re-encodes element by element rather than by copying
//! its original bytes; the bytes are the same either way.

use std::borrow::Cow;

use super::array::{FixedWidth, ScalarArray};
use super::message::Decode;
use super::struct_array::StructArray;
use super::tagged::UnknownTaggedFields;
use super::uuid::Uuid;

/// A value that can be detached from the input it borrows.
///
/// `Owned` is the same type with a `'static` lifetime: it is `Send` and
/// `Sync` whenever the value's parts are, which holds for every generated
/// message.
pub trait IntoOwned {
    /// The same type, owning all of its data.
    type Owned: 'static;

    /// Copies what still borrows from the input; moves the rest.
    fn into_owned(self) -> Self::Owned;
}

macro_rules! owned_as_is {
    ($($ty:ty),* $(,)?) => {
        $(
            impl IntoOwned for $ty {
                type Owned = $ty;

                #[inline]
                fn into_owned(self) -> $ty {
                    self
                }
            }
        )*
    };
}

owned_as_is!(bool, i8, i16, i32, i64, u16, u32, f64, Uuid);

impl IntoOwned for Cow<'_, str> {
    type Owned = Cow<'static, str>;

    #[inline]
    fn into_owned(self) -> Cow<'static, str> {
        Cow::Owned(Cow::into_owned(self))
    }
}

impl IntoOwned for Cow<'_, [u8]> {
    type Owned = Cow<'static, [u8]>;

    #[inline]
    fn into_owned(self) -> Cow<'static, [u8]> {
        Cow::Owned(Cow::into_owned(self))
    }
}

impl<T: IntoOwned> IntoOwned for Option<T> {
    type Owned = Option<T::Owned>;

    #[inline]
    fn into_owned(self) -> Option<T::Owned> {
        self.map(T::into_owned)
    }
}

impl<T: IntoOwned> IntoOwned for Vec<T> {
    type Owned = Vec<T::Owned>;

    fn into_owned(self) -> Vec<T::Owned> {
        self.into_iter().map(T::into_owned).collect()
    }
}

impl<T: FixedWidth + 'static> IntoOwned for ScalarArray<'_, T> {
    type Owned = ScalarArray<'static, T>;

    #[inline]
    fn into_owned(self) -> ScalarArray<'static, T> {
        ScalarArray::into_owned(self)
    }
}

impl IntoOwned for UnknownTaggedFields<'_> {
    type Owned = UnknownTaggedFields<'static>;

    #[inline]
    fn into_owned(self) -> UnknownTaggedFields<'static> {
        UnknownTaggedFields::into_owned(self)
    }
}

impl<'a, T: Decode<'a> + Default + IntoOwned> IntoOwned for StructArray<'a, T> {
    type Owned = StructArray<'static, T::Owned>;

    fn into_owned(self) -> StructArray<'static, T::Owned> {
        self.map_into_vec(IntoOwned::into_owned).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{RawTaggedField, Reader};

    fn assert_static_send_sync<T: Send + Sync + 'static>(_: &T) {}

    #[test]
    fn borrowed_parts_are_copied_and_owned_ones_moved() {
        let input = String::from("borrowed");
        let borrowed: Cow<'_, str> = Cow::Borrowed(&input);
        let owned = IntoOwned::into_owned(borrowed);
        drop(input);
        assert_eq!(owned, "borrowed");
        assert!(matches!(owned, Cow::Owned(_)));
        assert_static_send_sync(&owned);

        let built: Cow<'_, [u8]> = Cow::Owned(vec![1, 2, 3]);
        let pointer = built.as_ptr();
        let moved = IntoOwned::into_owned(built);
        assert_eq!(moved.as_ptr(), pointer, "owned data is moved, not copied");
    }

    #[test]
    fn arrays_and_tagged_fields_outlive_their_input() {
        // Six bytes of an int16 array, then a tagged section: one field,
        // tag 7, two bytes of data.
        let input = vec![0u8, 1, 0, 2, 0, 3, 1, 7, 2, 0, 1];
        let scalars = ScalarArray::<i16>::from_wire(&input[..6]);
        let mut tagged = UnknownTaggedFields::new();
        let mut reader = Reader::new(&input[6..]);
        reader
            .read_tagged_fields(&mut tagged, |_, _| Ok(false))
            .unwrap();
        let owned = (
            IntoOwned::into_owned(scalars),
            IntoOwned::into_owned(tagged),
        );
        drop(input);
        assert_eq!(owned.0.to_vec(), vec![1, 2, 3]);
        let fields: Vec<RawTaggedField<'_>> = owned.1.iter().collect();
        assert_eq!(fields.len(), 1);
        assert_eq!((fields[0].tag, &*fields[0].data), (7, &[0u8, 1][..]));
        assert_static_send_sync(&owned);
    }

    /// A struct of one borrowed string, for the struct-array test.
    #[derive(Debug, Clone, Default, PartialEq)]
    struct Name<'a>(Cow<'a, str>);

    impl<'a> Decode<'a> for Name<'a> {
        fn decode_from(
            reader: &mut Reader<'a>,
            _: i16,
        ) -> Result<Self, crate::runtime::DecodeError> {
            reader.read_string(false).map(Name)
        }
    }

    impl IntoOwned for Name<'_> {
        type Owned = Name<'static>;
        fn into_owned(self) -> Name<'static> {
            Name(IntoOwned::into_owned(self.0))
        }
    }

    #[test]
    fn a_decoded_struct_array_becomes_a_vec_of_owned_elements() {
        let input = vec![0u8, 0, 0, 2, 0, 1, b'a', 0, 2, b'b', b'c'];
        let mut reader = Reader::new(&input);
        let array: StructArray<'_, Name<'_>> = reader.read_struct_array(false, 0).unwrap();
        assert!(array.wire().is_some());
        let owned = IntoOwned::into_owned(array);
        drop(input);
        assert_eq!(
            owned.as_slice(),
            Some(&[Name("a".into()), Name("bc".into())][..])
        );
        assert_static_send_sync(&owned);
    }
}
