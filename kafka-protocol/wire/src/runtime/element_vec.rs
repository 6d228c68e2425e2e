//! The `Vec` of an array of structs, whose drop is compiled where the
//! array was filled, not where it is dropped.
//!
//! A release build compiles the drop of a type in every crate that drops a
//! value of it. A program that drops any decoded request or response would
//! then compile, in its own crate, the drop of every struct nested in it:
//! for a broker or a proxy that dispatches on the body enums, about two
//! thirds of its own code, compiled again at every edit of it. An
//! [`ElementVec`] keeps, beside its `Vec`, a pointer to the function that
//! drops it, taken where the `Vec` was put in: by the decoder, which the
//! `precompile` feature compiles in kafka-wire, or by the user's code that
//! built the array. Dropping an array is then a call, whatever its type.
//!
//! # Why this module is unsafe
//!
//! The `Vec<T>` is stored in a field that does not name `T`, so that the
//! type whose `Drop` runs is not generic: a `Drop` implementation on a
//! generic type would make every borrow inside it last until the value is
//! dropped, which breaks ordinary code (`match decode(&input) { .. }` as
//! the last expression of a function, a buffer reused while a message
//! decoded from it is still in scope). This module, `section_box` and
//! `utf8` are the only unsafe code in the crate. Its invariant:
//!
//! > When `ErasedVec::drop_fn` is `Some`, `ErasedVec::storage` holds a
//! > valid `Vec<T>`, owned by the [`ElementVec<T>`] that holds the
//! > `ErasedVec`, and `drop_fn` is `drop_vec::<T>` for that same `T`. When it
//! > is `None`, `storage` is not read, and the `Vec` is empty.
//!
//! Every function below keeps it; none hands out the `ErasedVec`. The drop
//! function depends on `T` only through its drop glue, which does not
//! depend on lifetimes, so a covariant change of `T`'s lifetimes (which
//! `PhantomData<T>` allows, as `Vec<T>` does) cannot make it wrong.
//! `PhantomData<T>` also gives the drop check and the auto traits (`Send`,
//! `Sync`, unwind safety) exactly what a `Vec<T>` field would.
#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::mem::{align_of, size_of, MaybeUninit};

/// Room for a `Vec` of any sized element type: a pointer, a capacity and
/// a length.
type Storage = MaybeUninit<[usize; 3]>;

/// A `Vec<T>` that drops its elements through a function pointer taken
/// where it was filled. It derefs to nothing: [`ElementVec::as_slice`],
/// [`ElementVec::vec_mut`] and [`ElementVec::take`] are its whole interface.
pub(crate) struct ElementVec<T> {
    erased: ErasedVec,
    /// Owns `T`s, for the drop check, variance and auto traits.
    _owns: PhantomData<T>,
}

/// The `Vec` with its type erased. Not generic, so its `Drop` puts no
/// bound on the lifetimes of the elements (see the module doc).
struct ErasedVec {
    storage: Storage,
    drop_fn: Option<unsafe fn(&mut Storage)>,
}

impl Drop for ErasedVec {
    #[inline]
    fn drop(&mut self) {
        if let Some(drop_fn) = self.drop_fn.take() {
            // SAFETY: by the invariant, `storage` holds a valid `Vec` of the
            // element type `drop_fn` was instantiated for, and nothing reads
            // it after this: `drop_fn` is now `None`.
            unsafe { drop_fn(&mut self.storage) }
        }
    }
}

/// Drops the `Vec<T>` in `storage`.
///
/// # Safety
/// `storage` holds a valid `Vec<T>` that nothing reads or drops afterwards.
unsafe fn drop_vec<T>(storage: &mut Storage) {
    // SAFETY: the caller's contract; the read moves the `Vec` out, and it is
    // dropped here, once.
    drop(unsafe { storage.as_ptr().cast::<Vec<T>>().read() });
}

impl<T> ElementVec<T> {
    /// Fails to compile for an element type whose `Vec` does not fit in
    /// [`Storage`] (none does: a `Vec` of a sized type is three words).
    const FITS: () = assert!(
        size_of::<Vec<T>>() <= size_of::<Storage>()
            && align_of::<Vec<T>>() <= align_of::<Storage>()
    );

    /// An empty `Vec`, which allocates nothing.
    #[inline]
    pub(crate) const fn new() -> Self {
        ElementVec {
            erased: ErasedVec {
                storage: MaybeUninit::uninit(),
                drop_fn: None,
            },
            _owns: PhantomData,
        }
    }

    /// `items`, to be dropped by code compiled here.
    #[inline]
    pub(crate) fn from_vec(items: Vec<T>) -> Self {
        let mut this = ElementVec::new();
        if items.capacity() != 0 {
            this.put(items);
        }
        this
    }

    /// Stores `items` in an `ElementVec` that holds none.
    #[inline]
    fn put(&mut self, items: Vec<T>) {
        let () = Self::FITS;
        debug_assert!(self.erased.drop_fn.is_none());
        // SAFETY: `FITS` says that `storage` has the size and alignment of a
        // `Vec<T>`; it holds nothing that needs dropping (`drop_fn` is
        // `None`), and the write makes the invariant hold with `Some`.
        unsafe {
            self.erased
                .storage
                .as_mut_ptr()
                .cast::<Vec<T>>()
                .write(items)
        };
        self.erased.drop_fn = Some(drop_vec::<T>);
    }

    /// The number of elements.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// The elements.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[T] {
        match self.erased.drop_fn {
            // SAFETY: by the invariant, `storage` holds a valid `Vec<T>`,
            // borrowed here for as long as `self` is.
            Some(_) => unsafe { (*self.erased.storage.as_ptr().cast::<Vec<T>>()).as_slice() },
            None => &[],
        }
    }

    /// The elements, to change in place.
    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        match self.erased.drop_fn {
            Some(_) => self.vec_mut().as_mut_slice(),
            None => &mut [],
        }
    }

    /// The `Vec` itself, to change in any way; an empty one is put in first
    /// when there is none, so this is where the drop function of an array
    /// built in code is taken.
    #[inline]
    pub(crate) fn vec_mut(&mut self) -> &mut Vec<T> {
        if self.erased.drop_fn.is_none() {
            self.put(Vec::new());
        }
        // SAFETY: `drop_fn` is `Some` now, so by the invariant `storage`
        // holds a valid `Vec<T>`, borrowed mutably for as long as `self` is.
        // Whatever is done to it, it stays a valid `Vec<T>`.
        unsafe { &mut *self.erased.storage.as_mut_ptr().cast::<Vec<T>>() }
    }

    /// The `Vec`, taken out; an empty one is left.
    #[inline]
    pub(crate) fn take(&mut self) -> Vec<T> {
        match self.erased.drop_fn.take() {
            // SAFETY: `drop_fn` was `Some`, so `storage` held a valid
            // `Vec<T>`; it is moved out, and with `drop_fn` now `None`
            // nothing reads or drops it again.
            Some(_) => unsafe { self.erased.storage.as_ptr().cast::<Vec<T>>().read() },
            None => Vec::new(),
        }
    }
}

impl<T: Clone> Clone for ElementVec<T> {
    fn clone(&self) -> Self {
        ElementVec::from_vec(self.as_slice().to_vec())
    }
}

impl<T> Default for ElementVec<T> {
    fn default() -> Self {
        ElementVec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// Counts its drops in a shared cell.
    #[derive(Clone)]
    struct Counted(Rc<Cell<usize>>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn every_element_is_dropped_once() {
        let drops = Rc::new(Cell::new(0));
        let counted = || Counted(Rc::clone(&drops));

        let items = ElementVec::from_vec(vec![counted(), counted(), counted()]);
        let copy = items.clone();
        assert_eq!(copy.len(), 3);
        drop(items);
        assert_eq!(drops.get(), 3);
        drop(copy);
        assert_eq!(drops.get(), 6);

        let mut items = ElementVec::new();
        items.vec_mut().push(counted());
        items.vec_mut().extend([counted(), counted()]);
        items.vec_mut().truncate(2);
        assert_eq!(drops.get(), 7);
        let taken = items.take();
        assert_eq!((taken.len(), items.len()), (2, 0));
        drop(items);
        assert_eq!(drops.get(), 7, "an emptied vec owns nothing");
        drop(taken);
        assert_eq!(drops.get(), 9);

        let mut items = ElementVec::from_vec(vec![counted()]);
        *items.vec_mut() = vec![counted(), counted()];
        assert_eq!(drops.get(), 10, "the replaced element is dropped");
        items.as_mut_slice()[0] = counted();
        assert_eq!(drops.get(), 11, "the overwritten element is dropped");
        drop(items);
        assert_eq!(drops.get(), 13);
    }

    #[test]
    fn zero_sized_and_large_elements() {
        let mut units = ElementVec::from_vec(vec![(); 5]);
        units.vec_mut().push(());
        assert_eq!(units.len(), 6);
        assert_eq!(units.take().len(), 6);

        let big = ElementVec::from_vec(vec![[7u64; 64]; 3]);
        let moved = big; // the storage moves with it
        assert_eq!(moved.as_slice()[2][63], 7);
        assert_eq!(moved.clone().as_slice(), moved.as_slice());
    }

    #[test]
    fn empty_vecs_allocate_nothing_and_take_no_drop_function() {
        let items = ElementVec::<String>::from_vec(Vec::new());
        assert!(items.erased.drop_fn.is_none());
        assert!(ElementVec::<String>::new().as_slice().is_empty());
        let mut items = ElementVec::<String>::new();
        assert!(items.as_mut_slice().is_empty());
        assert!(items.erased.drop_fn.is_none());
    }

    /// What a sequence of operations does to an `ElementVec` of counted
    /// strings.
    #[derive(Debug, Clone)]
    enum Op {
        Push(u8),
        Pop,
        Truncate(usize),
        Overwrite(usize, u8),
        Replace(Vec<u8>),
        Take,
        CloneAndDrop,
        MoveAround,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            4 => any::<u8>().prop_map(Op::Push),
            1 => Just(Op::Pop),
            1 => (0..6usize).prop_map(Op::Truncate),
            1 => (0..6usize, any::<u8>()).prop_map(|(i, v)| Op::Overwrite(i, v)),
            1 => proptest::collection::vec(any::<u8>(), 0..4).prop_map(Op::Replace),
            1 => Just(Op::Take),
            1 => Just(Op::CloneAndDrop),
            1 => Just(Op::MoveAround),
        ]
    }

    /// An element that owns heap memory and counts its drops.
    #[derive(Clone)]
    struct Tracked(String, Rc<Cell<usize>>);

    impl Drop for Tracked {
        fn drop(&mut self) {
            self.1.set(self.1.get() + 1);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: if cfg!(miri) { 8 } else { 256 },
            ..Default::default()
        })]

        /// An `ElementVec` holds what a `Vec` would after the same
        /// operations, and drops every element exactly once: as many drops
        /// as elements made, at the end, none while an element is held.
        #[test]
        fn behaves_as_a_vec(ops in proptest::collection::vec(op(), 0..24)) {
            let drops = Rc::new(Cell::new(0));
            let made = Cell::new(0usize);
            let make = |v: u8| {
                made.set(made.get() + 1);
                Tracked(format!("element {v}"), Rc::clone(&drops))
            };
            let mut items: ElementVec<Tracked> = ElementVec::new();
            let mut model: Vec<u8> = Vec::new();
            for op in ops {
                match op {
                    Op::Push(v) => {
                        items.vec_mut().push(make(v));
                        model.push(v);
                    }
                    Op::Pop => {
                        drop(items.vec_mut().pop());
                        model.pop();
                    }
                    Op::Truncate(n) => {
                        items.vec_mut().truncate(n);
                        model.truncate(n);
                    }
                    Op::Overwrite(i, v) => {
                        if i < model.len() {
                            items.as_mut_slice()[i] = make(v);
                            model[i] = v;
                        }
                    }
                    Op::Replace(values) => {
                        *items.vec_mut() = values.iter().map(|&v| make(v)).collect();
                        model = values;
                    }
                    Op::Take => {
                        let taken = items.take();
                        proptest::prop_assert_eq!(taken.len(), model.len());
                        drop(taken);
                        model.clear();
                    }
                    Op::CloneAndDrop => {
                        let copy = items.clone();
                        made.set(made.get() + copy.len());
                        proptest::prop_assert_eq!(copy.len(), items.len());
                    }
                    Op::MoveAround => {
                        let boxed = Box::new(items);
                        items = *boxed;
                    }
                }
                let held: Vec<String> = items.as_slice().iter().map(|t| t.0.clone()).collect();
                let expected: Vec<String> = model.iter().map(|v| format!("element {v}")).collect();
                proptest::prop_assert_eq!(held, expected);
                proptest::prop_assert_eq!(drops.get() + items.len(), made.get());
            }
            drop(items);
            proptest::prop_assert_eq!(drops.get(), made.get());
        }
    }

    /// `Send` and `Sync` follow the element type, as for `Vec`.
    #[test]
    fn auto_traits_follow_the_element_type() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ElementVec<String>>();
        // `ElementVec<Rc<()>>: Send` would not compile; `Vec` is the same.
    }
}
