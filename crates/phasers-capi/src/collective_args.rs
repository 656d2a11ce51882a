//! The buffers of reductions and collectives: the C caller's `void *` and element counts turned
//! into typed Rust slices, after checking everything that would make building the slice undefined
//! behaviour, and the dispatch on the `PHASERS_TYPE_*` element type.
//!
//! A C buffer becomes a slice only after these checks, each with its own code:
//!
//! - a length of zero needs no memory: the pointer is not read and may be NULL;
//! - otherwise NULL is `PHASERS_ENULL`;
//! - a length whose size in bytes does not fit in `isize` (what a Rust slice can describe), or
//!   `parties * count` overflowing, is `PHASERS_EINVAL`;
//! - a pointer not aligned for the element type is `PHASERS_EINVAL` (C gives aligned pointers to
//!   `double` and friends; a misaligned one is a cast from `char *` gone wrong);
//! - an input and an output that overlap are `PHASERS_EINVAL`: Rust forbids a `&[T]` and a
//!   `&mut [T]` to the same memory, and the library reads inputs while writing outputs.
//!
//! What cannot be checked is that the memory is really there, as long as the count says, for as
//! long as the call (or, for a non-blocking call, its request) lives: that is the C caller's
//! promise, as with `memcpy` or MPI.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::status::Failure;

/// A C buffer of `len` elements of `T`, checked: a pointer that is aligned, non-null unless `len`
/// is 0 (then dangling), and a byte size that fits in `isize`. Not yet a slice: see [`input`] and
/// [`output`].
///
/// [`input`]: Checked::input
/// [`output`]: Checked::output
#[derive(Debug)]
pub(crate) struct Checked<T> {
    ptr: NonNull<T>,
    len: usize,
    _type: PhantomData<*mut T>,
}

impl<T> Checked<T> {
    /// Checks `len` elements of `T` at `ptr`, the C argument `argument`.
    pub(crate) fn new(ptr: *const c_void, len: usize, argument: &str) -> Result<Self, Failure> {
        if len == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(Checked {
                ptr: NonNull::dangling(),
                len,
                _type: PhantomData,
            });
        }
        let Some(ptr) = NonNull::new(ptr.cast_mut().cast::<T>()) else {
            return Err(Failure::null(argument));
        };
        len.checked_mul(std::mem::size_of::<T>())
            .filter(|bytes| isize::try_from(*bytes).is_ok())
            .filter(|bytes| (ptr.as_ptr() as usize).checked_add(*bytes).is_some())
            .ok_or_else(|| {
                Failure::invalid(format!(
                    "{argument} would hold {len} elements of {} bytes, more memory than a process \
                     can address; pass a smaller count",
                    std::mem::size_of::<T>()
                ))
            })?;
        if ptr.as_ptr().align_offset(std::mem::align_of::<T>()) != 0 {
            return Err(Failure::invalid(format!(
                "{argument} ({:p}) is not aligned for its element type ({} bytes); pass a pointer \
                 to an array of that type",
                ptr.as_ptr(),
                std::mem::align_of::<T>()
            )));
        }
        Ok(Checked {
            ptr,
            len,
            _type: PhantomData,
        })
    }

    fn byte_range(&self) -> std::ops::Range<usize> {
        let start = self.ptr.as_ptr() as usize;
        // No overflow: `new` checked that the end fits in a usize.
        start..start + self.len * std::mem::size_of::<T>()
    }

    /// `PHASERS_EINVAL` when `self` (the input) and `output` share a byte.
    pub(crate) fn disjoint_from(&self, output: &Checked<T>, what: &str) -> Result<(), Failure> {
        let (a, b) = (self.byte_range(), output.byte_range());
        if a.is_empty() || b.is_empty() || a.end <= b.start || b.end <= a.start {
            Ok(())
        } else {
            Err(Failure::invalid(format!(
                "{what}: the input and the output overlap; pass separate arrays (the library \
                 reads the input while it writes the output)"
            )))
        }
    }

    /// The buffer as an input slice.
    ///
    /// # Safety
    ///
    /// The C caller's promise: unless `len` is 0, the pointer given to [`new`](Checked::new)
    /// points to `len` initialized elements that stay valid, and are not written by anyone, for
    /// `'a`.
    pub(crate) unsafe fn input<'a>(self) -> &'a [T] {
        // SAFETY: `new` made the pointer non-null and aligned (dangling but aligned for length 0)
        // and checked that the byte size fits in isize without wrapping the address space; the
        // caller promises the memory and its lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The buffer as an output slice.
    ///
    /// # Safety
    ///
    /// The C caller's promise: unless `len` is 0, the pointer given to [`new`](Checked::new)
    /// points to `len` elements (any bit pattern is a valid value of the element types used here)
    /// that stay valid for `'a` and that nothing else reads or writes during `'a`; no other slice
    /// made from these checks overlaps it ([`disjoint_from`](Checked::disjoint_from)).
    pub(crate) unsafe fn output<'a>(self) -> &'a mut [T] {
        // SAFETY: as in `input`; exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{PHASERS_EINVAL, PHASERS_ENULL};

    #[test]
    fn null_is_fine_only_for_nothing() {
        assert!(Checked::<f64>::new(std::ptr::null(), 0, "input").is_ok());
        let null = Checked::<f64>::new(std::ptr::null(), 1, "input").unwrap_err();
        assert_eq!(null.code, PHASERS_ENULL);
        assert!(null.message.contains("input"), "{null:?}");
    }

    #[test]
    fn sizes_past_isize_are_refused() {
        let data = [0u64; 2];
        let huge = Checked::<u64>::new(data.as_ptr().cast(), usize::MAX / 4, "output");
        assert_eq!(huge.unwrap_err().code, PHASERS_EINVAL);
    }

    #[test]
    fn misaligned_pointers_are_refused() {
        let data = [0u64; 2];
        let misaligned = data.as_ptr().cast::<u8>().wrapping_add(1).cast::<c_void>();
        let refused = Checked::<u64>::new(misaligned, 1, "input").unwrap_err();
        assert_eq!(refused.code, PHASERS_EINVAL);
        assert!(refused.message.contains("aligned"), "{refused:?}");
    }

    #[test]
    fn overlap_is_refused_and_neighbours_are_not() {
        let data = [0i32; 8];
        let at = |i: usize| data.as_ptr().wrapping_add(i).cast::<c_void>();
        let input = Checked::<i32>::new(at(0), 4, "input").unwrap();
        let neighbour = Checked::<i32>::new(at(4), 4, "output").unwrap();
        assert!(input.disjoint_from(&neighbour, "allreduce").is_ok());
        let overlapping = Checked::<i32>::new(at(3), 4, "output").unwrap();
        let refused = input.disjoint_from(&overlapping, "allreduce").unwrap_err();
        assert_eq!(refused.code, PHASERS_EINVAL);
        let empty = Checked::<i32>::new(at(1), 0, "output").unwrap();
        assert!(input.disjoint_from(&empty, "allreduce").is_ok());
    }
}
