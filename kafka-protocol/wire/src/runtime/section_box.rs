//! The box that holds a struct's unknown tagged fields, dropped by one call
//! to a function compiled once, here.
//!
//! Every generated struct of a flexible version has an
//! [`UnknownTaggedFields`](super::UnknownTaggedFields), nearly always empty.
//! Held as an `Option<Box<Section>>`, each one puts two deallocations (the
//! section's bytes, then the box) into the drop glue of every struct that
//! holds it, compiled in the crate that drops the struct. A struct with a
//! few of them (a Fetch partition has four: its own and those of its three
//! tagged struct fields) then has drop glue too large for LLVM to inline,
//! and an element decoded and dropped in a loop is written out to memory
//! only so that its address can be passed to that function. Measured with
//! `benches/instructions ours read`, the drop and what it kept in memory
//! cost 7% of reading a Fetch response and 12% of reading a Metadata
//! response. A [`SectionBox`] drops through [`drop_section`], which is not
//! generic: the drop glue of a struct is then one test of a pointer per
//! field, which LLVM inlines and, for a struct just decoded without unknown
//! fields, removes.
//!
//! # Why this module is unsafe
//!
//! The box is kept as a pointer to a `Section<'static>`, a type without the
//! lifetime of the input it borrows, so that the type whose `Drop` runs is
//! not generic: a `Drop` implementation on a type with a lifetime would make
//! every borrow inside it last until the value is dropped, which breaks
//! ordinary code (see `element_vec`, which erases a `Vec` for the same
//! reason). Its invariant:
//!
//! > `ErasedSection`'s pointer comes from `Box::<Section<'a>>::leak`, for
//! > the `'a` of the [`SectionBox`] that holds it, which owns that box;
//! > nothing else holds or frees it.
//!
//! Every function below keeps it; none hands out the `ErasedSection`. The
//! drop of a `Section` depends on its lifetime in no way (a borrowed
//! `Cow` frees nothing, an owned one frees its `Vec`), so dropping it as a
//! `Section<'static>` is dropping it. `PhantomData<Box<Section<'a>>>` gives
//! the drop check, variance and auto traits what a `Box` field would; the
//! pointer itself is neither `Send` nor `Sync`, and the `unsafe impl`s
//! below give back what `Box<Section>` has.
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

/// Unknown tagged fields in wire form: a non-empty run of (tag, size, bytes)
/// entries with shortest uvarints, in ascending tag order (equal tags in the
/// order they were added).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct Section<'a> {
    /// The entries, without the count that starts a tagged-field section.
    pub(super) entries: Cow<'a, [u8]>,
    /// The number of entries.
    pub(super) count: usize,
}

/// A `Box<Section<'a>>` whose drop is a call to [`drop_section`].
pub(super) struct SectionBox<'a> {
    erased: ErasedSection,
    /// Owns a `Box<Section<'a>>`, for the drop check, variance and auto
    /// traits.
    _owns: PhantomData<Box<Section<'a>>>,
}

/// The boxed section with its lifetime erased. Not generic, so its `Drop`
/// puts no bound on the lifetime of the input (see the module doc).
struct ErasedSection(NonNull<Section<'static>>);

// SAFETY: an `ErasedSection` owns a `Box<Section>`, which is `Send` and
// `Sync` (a `Cow<[u8]>` and a `usize`), and gives no shared access to it
// that a `Box` would not.
unsafe impl Send for ErasedSection {}
// SAFETY: as for `Send`.
unsafe impl Sync for ErasedSection {}

impl Drop for ErasedSection {
    #[inline]
    fn drop(&mut self) {
        drop_section(self.0);
    }
}

/// Frees a boxed section: compiled once, in kafka-wire, and called only for
/// a struct that holds unknown tagged fields.
#[inline(never)]
extern "C" fn drop_section(section: NonNull<Section<'static>>) {
    // SAFETY: by the invariant, the pointer came from a leaked
    // `Box<Section>`, owned by the `ErasedSection` being dropped, which is
    // its only holder; the lifetime does not change what dropping does.
    drop(unsafe { Box::from_raw(section.as_ptr()) });
}

impl<'a> SectionBox<'a> {
    /// Boxes `section`.
    pub(super) fn new(section: Section<'a>) -> Self {
        let leaked: NonNull<Section<'a>> = NonNull::from(Box::leak(Box::new(section)));
        SectionBox {
            erased: ErasedSection(leaked.cast()),
            _owns: PhantomData,
        }
    }

    /// The section.
    #[inline]
    pub(super) fn get(&self) -> &Section<'a> {
        // SAFETY: by the invariant, the pointer is to a live `Section<'a>`
        // that `self` owns; it is borrowed for as long as `self` is.
        unsafe { self.erased.0.cast::<Section<'a>>().as_ref() }
    }

    /// The section, to change.
    pub(super) fn get_mut(&mut self) -> &mut Section<'a> {
        // SAFETY: as in `get`, and `&mut self` makes the borrow unique.
        unsafe { self.erased.0.cast::<Section<'a>>().as_mut() }
    }

    /// The section, out of its box.
    pub(super) fn into_inner(self) -> Section<'a> {
        // The `ErasedSection` must not free the box: it is taken here.
        let this = ManuallyDrop::new(self);
        // SAFETY: by the invariant, the pointer came from a leaked
        // `Box<Section<'a>>` that `self` owned; `self` is never dropped, so
        // the box is taken back once.
        *unsafe { Box::from_raw(this.erased.0.cast::<Section<'a>>().as_ptr()) }
    }
}

impl Clone for SectionBox<'_> {
    fn clone(&self) -> Self {
        SectionBox::new(self.get().clone())
    }
}

impl PartialEq for SectionBox<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for SectionBox<'_> {}

impl Hash for SectionBox<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.get().hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(bytes: &[u8]) -> Section<'_> {
        Section {
            entries: Cow::Borrowed(bytes),
            count: 1,
        }
    }

    #[test]
    fn borrowed_and_owned_sections_are_kept_and_freed() {
        let input = vec![3u8, 1, 9];
        let borrowed = SectionBox::new(section(&input));
        assert_eq!(&*borrowed.get().entries, &[3, 1, 9]);
        let mut owned = borrowed.clone();
        owned.get_mut().entries.to_mut().push(7);
        owned.get_mut().count = 2;
        assert_eq!(&*owned.get().entries, &[3, 1, 9, 7]);
        assert!(owned != borrowed);
        assert!(owned.clone() == owned);
        drop(borrowed);
        let inner = owned.into_inner();
        assert_eq!((inner.count, inner.entries.len()), (2, 4));
    }

    #[test]
    fn a_box_may_be_dropped_after_the_input_it_borrows() {
        // What `Box<Section<'a>>` allows, this allows: `kept` is declared
        // first, so it is dropped after `input`, which its box borrows.
        // This compiles only because the drop puts no bound on the lifetime.
        let mut kept = Vec::new();
        let input = vec![5u8, 1, 0];
        kept.push(SectionBox::new(section(&input)));
        assert_eq!(kept[0].get().count, 1);
    }

    #[test]
    fn it_is_one_pointer_and_crosses_threads() {
        assert_eq!(std::mem::size_of::<Option<SectionBox<'static>>>(), 8);
        fn send_sync<T: Send + Sync>(_: &T) {}
        let boxed = SectionBox::new(section(&[1, 2]));
        send_sync(&boxed);
        let moved = std::thread::spawn(move || boxed.get().count)
            .join()
            .unwrap();
        assert_eq!(moved, 1);
    }
}
