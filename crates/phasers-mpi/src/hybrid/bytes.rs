//! A pointer-free, 8-byte-aligned byte buffer: staged inputs, MPI buffers and results.
//!
//! Members copy their inputs in and their outputs out, so nothing the engine or MPI holds ever
//! points into a member's own buffers, and a call that cannot finish (a timeout) never leaves
//! MPI writing into memory the user got back.

use std::marker::PhantomData;

use phasers::Element;

/// Bytes stored in `u64` words, so that any [`Element`] (at most 8-byte aligned) can be viewed
/// in place. Always fully initialized (zeroed when made).
#[derive(Default)]
pub(crate) struct Bytes {
    words: Vec<u64>,
    len: usize,
}

impl Bytes {
    /// `len` zero bytes. Large buffers come from the allocator's zeroed pages, so this is cheap.
    pub(crate) fn zeroed(len: usize) -> Bytes {
        Bytes {
            words: vec![0u64; len.div_ceil(8)],
            len,
        }
    }

    /// A copy of `values`' bytes.
    #[cfg(test)]
    pub(crate) fn copy_of<T: Copy>(values: &[T]) -> Bytes {
        let len = std::mem::size_of_val(values);
        let mut bytes = Bytes::zeroed(len);
        // SAFETY: `values` is `len` readable bytes; `bytes` owns at least `len` writable bytes;
        // the two do not overlap. Only bytes are copied, no `T` is made.
        unsafe {
            std::ptr::copy_nonoverlapping(values.as_ptr().cast::<u8>(), bytes.as_mut_ptr(), len)
        };
        bytes
    }

    /// Makes this `len` bytes long, keeping the storage it has (growing it only when `len` is
    /// larger than any length before). The bytes are left as they were (a reused buffer's old
    /// contents, zeros past them): for buffers that are written in full before being read.
    pub(crate) fn reuse(&mut self, len: usize) {
        self.words.resize(len.div_ceil(8), 0);
        self.len = len;
    }

    /// As [`reuse`](Self::reuse), every byte zero.
    pub(crate) fn reuse_zeroed(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len.div_ceil(8), 0);
        self.len = len;
    }

    /// Makes room for `len` bytes, so that growing to them later allocates nothing.
    pub(crate) fn hold(&mut self, len: usize) {
        let words = len.div_ceil(8);
        if self.words.capacity() < words {
            self.words.reserve_exact(words - self.words.len());
        }
    }

    /// How many bytes this can hold without growing.
    pub(crate) fn capacity(&self) -> usize {
        self.words.capacity() * 8
    }

    /// Makes this a copy of `source`'s bytes, reusing the storage as [`reuse`](Self::reuse).
    pub(crate) fn copy_from(&mut self, source: &Source<'_>) {
        self.reuse(source.len);
        // SAFETY: `source` is `len` readable bytes (see `Source`), `self` now owns at least
        // `len` writable bytes, and the two do not overlap (`self` is ours alone).
        unsafe { std::ptr::copy_nonoverlapping(source.ptr, self.as_mut_ptr(), source.len) };
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.words.as_ptr().cast()
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast()
    }

    /// The bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: the words hold at least `len` initialized bytes, and `u8` has no alignment.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as for `as_slice`, borrowed mutably through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(), self.len) }
    }

    /// Appends `other`'s bytes.
    #[cfg(test)]
    pub(crate) fn extend(&mut self, other: &[u8]) {
        let start = self.len;
        let len = start + other.len();
        self.words.resize(len.div_ceil(8), 0);
        self.len = len;
        self.as_mut_slice()[start..].copy_from_slice(other);
    }

    /// The bytes as elements; a trailing partial element is left out.
    pub(crate) fn elements<T: Element>(&self) -> &[T] {
        const { assert!(std::mem::align_of::<T>() <= 8) };
        let count = self.len / std::mem::size_of::<T>();
        // SAFETY: the storage is 8-byte aligned, enough for every `Element` (checked above); it
        // holds `count` elements' worth of initialized bytes; every bit pattern is a valid
        // integer or float, the only `Element` types.
        unsafe { std::slice::from_raw_parts(self.as_ptr().cast::<T>(), count) }
    }

    pub(crate) fn elements_mut<T: Element>(&mut self) -> &mut [T] {
        const { assert!(std::mem::align_of::<T>() <= 8) };
        let count = self.len / std::mem::size_of::<T>();
        // SAFETY: as for `elements`, borrowed mutably through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr().cast::<T>(), count) }
    }
}

/// A member's input, borrowed until the engine copies it into a buffer of the call's slot
/// (`Spare`), so that the copy reuses the slot's storage instead of allocating per call.
pub(crate) struct Source<'a> {
    ptr: *const u8,
    len: usize,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> Source<'a> {
    /// `values`' bytes, borrowed until the engine copies them.
    pub(crate) fn of<T: Copy>(values: &'a [T]) -> Source<'a> {
        Source {
            ptr: values.as_ptr().cast(),
            len: std::mem::size_of_val(values),
            _borrow: PhantomData,
        }
    }

    /// No input (the member contributes nothing, or its post carries its input already).
    pub(crate) fn none() -> Source<'static> {
        Source {
            ptr: std::ptr::NonNull::<u64>::dangling().as_ptr().cast(),
            len: 0,
            _borrow: PhantomData,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}
