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

use phasers_core::{Element, Member, Pending};

use crate::enums::OpKind;
use crate::status::Failure;

/// `blocks * count` elements (a root's gather output, an alltoall buffer), or `PHASERS_EINVAL`
/// when the product overflows.
pub(crate) fn elements(blocks: usize, count: usize, what: &str) -> Result<usize, Failure> {
    blocks.checked_mul(count).ok_or_else(|| {
        Failure::invalid(format!(
            "{what} would hold {blocks} blocks of {count} elements, more than a size_t can \
             count; pass a smaller count"
        ))
    })
}

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

/// Runs `$body` with the type alias `$t` set to the Rust type of the `ElementType` `$element`:
/// the one place where a `PHASERS_TYPE_*` value picks a monomorphized code path.
macro_rules! with_element {
    ($element:expr, |$t:ident| $body:expr) => {
        match $element {
            $crate::enums::ElementType::I32 => {
                type $t = i32;
                $body
            }
            $crate::enums::ElementType::I64 => {
                type $t = i64;
                $body
            }
            $crate::enums::ElementType::U32 => {
                type $t = u32;
                $body
            }
            $crate::enums::ElementType::U64 => {
                type $t = u64;
                $body
            }
            $crate::enums::ElementType::F32 => {
                type $t = f32;
                $body
            }
            $crate::enums::ElementType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}
pub(crate) use with_element;

/// A team collective that moves data, with its root and operator: what a `phasers_member_*`
/// function and its `i` form ask for, apart from the buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Collective {
    /// `phasers_member_broadcast`: one in-out buffer.
    Broadcast { root: usize },
    /// `phasers_member_reduce`.
    Reduce { root: usize, op: OpKind },
    /// `phasers_member_allreduce`.
    Allreduce { op: OpKind },
    /// `phasers_member_gather`.
    Gather { root: usize },
    /// `phasers_member_allgather`.
    Allgather,
    /// `phasers_member_scatter`.
    Scatter { root: usize },
    /// `phasers_member_alltoall`.
    Alltoall,
    /// `phasers_member_scan_inclusive`.
    ScanInclusive { op: OpKind },
    /// `phasers_member_scan_exclusive`.
    ScanExclusive { op: OpKind },
}

impl Collective {
    /// The C function's name, for messages.
    pub(crate) fn c_name(self) -> &'static str {
        match self {
            Collective::Broadcast { .. } => "phasers_member_broadcast",
            Collective::Reduce { .. } => "phasers_member_reduce",
            Collective::Allreduce { .. } => "phasers_member_allreduce",
            Collective::Gather { .. } => "phasers_member_gather",
            Collective::Allgather => "phasers_member_allgather",
            Collective::Scatter { .. } => "phasers_member_scatter",
            Collective::Alltoall => "phasers_member_alltoall",
            Collective::ScanInclusive { .. } => "phasers_member_scan_inclusive",
            Collective::ScanExclusive { .. } => "phasers_member_scan_exclusive",
        }
    }

    /// How many elements member `rank` of a team of `parties` has in its input and its output
    /// for `count`, as the header documents each call; 0 for a buffer the call ignores at this
    /// member (a non-root's reduce or gather output, a non-root's scatter input), whose pointer is
    /// then not read.
    fn lengths(self, rank: usize, parties: usize, count: usize) -> Result<(usize, usize), Failure> {
        let blocks = |what| elements(parties, count, what);
        Ok(match self {
            Collective::Broadcast { .. } => (0, count),
            Collective::Reduce { root, .. } => (count, if rank == root { count } else { 0 }),
            Collective::Allreduce { .. }
            | Collective::ScanInclusive { .. }
            | Collective::ScanExclusive { .. } => (count, count),
            Collective::Gather { root } => {
                let output = if rank == root {
                    blocks("the root's output")?
                } else {
                    0
                };
                (count, output)
            }
            Collective::Allgather => (count, blocks("the output")?),
            Collective::Scatter { root } => {
                let input = if rank == root {
                    blocks("the root's input")?
                } else {
                    0
                };
                (input, count)
            }
            Collective::Alltoall => (blocks("the input")?, blocks("the output")?),
        })
    }
}

/// A collective's arguments at one member, checked: its buffers, ready to become slices.
#[derive(Debug)]
pub(crate) struct Args<T> {
    collective: Collective,
    input: Checked<T>,
    output: Checked<T>,
}

impl<T> Args<T> {
    /// Checks the C buffers of `collective` at member `rank` of a team of `parties`.
    pub(crate) fn check(
        collective: Collective,
        rank: usize,
        parties: usize,
        input: *const c_void,
        output: *mut c_void,
        count: usize,
    ) -> Result<Self, Failure> {
        let (input_len, output_len) = collective.lengths(rank, parties, count)?;
        let output_name = match collective {
            Collective::Broadcast { .. } => "buffer",
            _ => "output",
        };
        let input = Checked::new(input, input_len, "input")?;
        let output = Checked::new(output.cast_const(), output_len, output_name)?;
        input.disjoint_from(&output, collective.c_name())?;
        Ok(Args {
            collective,
            input,
            output,
        })
    }
}

impl<T: Element> Args<T> {
    /// The buffers as slices, for `'a`.
    ///
    /// # Safety
    ///
    /// The C caller's promise for the buffers (see [`Checked::input`] and [`Checked::output`]),
    /// for `'a`.
    unsafe fn slices<'a>(self) -> (&'a [T], &'a mut [T]) {
        // SAFETY: forwarded from the caller; `check` verified the pointers, sizes and that the
        // two do not overlap.
        unsafe { (self.input.input(), self.output.output()) }
    }

    /// Runs the collective to its end on `member`.
    ///
    /// # Safety
    ///
    /// The C caller's promise for the buffers, until this returns.
    pub(crate) unsafe fn run(self, member: &mut Member) -> phasers_core::Result<()> {
        let collective = self.collective;
        // SAFETY: forwarded from the caller; the slices do not outlive this call.
        let (input, output) = unsafe { self.slices() };
        match collective {
            Collective::Broadcast { root } => member.broadcast(root, output),
            Collective::Reduce { root, op } => member.reduce(root, input, output, op.to_op()),
            Collective::Allreduce { op } => member.allreduce(input, output, op.to_op()),
            Collective::Gather { root } => member.gather(root, input, output),
            Collective::Allgather => member.allgather(input, output),
            Collective::Scatter { root } => member.scatter(root, input, output),
            Collective::Alltoall => member.alltoall(input, output),
            Collective::ScanInclusive { op } => member.scan_inclusive(input, output, op.to_op()),
            Collective::ScanExclusive { op } => member.scan_exclusive(input, output, op.to_op()),
        }
    }

    /// Starts the collective on `member` without waiting; the pending call borrows the member and
    /// the buffers for `'a`.
    ///
    /// # Safety
    ///
    /// The C caller's promise for the buffers, for `'a`: until the request completes.
    pub(crate) unsafe fn start<'a>(
        self,
        member: &'a mut Member,
    ) -> phasers_core::Result<Pending<'a, T>> {
        let collective = self.collective;
        // SAFETY: forwarded from the caller.
        let (input, output) = unsafe { self.slices::<'a>() };
        match collective {
            Collective::Broadcast { root } => member.ibroadcast(root, output),
            Collective::Reduce { root, op } => member.ireduce(root, input, output, op.to_op()),
            Collective::Allreduce { op } => member.iallreduce(input, output, op.to_op()),
            Collective::Gather { root } => member.igather(root, input, output),
            Collective::Allgather => member.iallgather(input, output),
            Collective::Scatter { root } => member.iscatter(root, input, output),
            Collective::Alltoall => member.ialltoall(input, output),
            Collective::ScanInclusive { op } => member.iscan_inclusive(input, output, op.to_op()),
            Collective::ScanExclusive { op } => member.iscan_exclusive(input, output, op.to_op()),
        }
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
    fn sizes_past_isize_and_products_that_overflow_are_refused() {
        let data = [0u64; 2];
        let huge = Checked::<u64>::new(data.as_ptr().cast(), usize::MAX / 4, "output");
        assert_eq!(huge.unwrap_err().code, PHASERS_EINVAL);
        assert_eq!(
            elements(usize::MAX, 2, "the output").unwrap_err().code,
            PHASERS_EINVAL
        );
        assert_eq!(elements(3, 4, "x").unwrap(), 12);
    }

    #[test]
    fn ignored_buffers_are_not_read_and_blocks_are_counted() {
        let gather = Collective::Gather { root: 1 };
        assert_eq!(gather.lengths(0, 3, 4).unwrap(), (4, 0));
        assert_eq!(gather.lengths(1, 3, 4).unwrap(), (4, 12));
        let scatter = Collective::Scatter { root: 0 };
        assert_eq!(scatter.lengths(0, 3, 4).unwrap(), (12, 4));
        assert_eq!(scatter.lengths(2, 3, 4).unwrap(), (0, 4));
        assert_eq!(Collective::Alltoall.lengths(0, 2, 5).unwrap(), (10, 10));
        let broadcast = Collective::Broadcast { root: 0 };
        assert_eq!(broadcast.lengths(1, 2, 5).unwrap(), (0, 5));
        let overflow = Collective::Allgather.lengths(0, 3, usize::MAX).unwrap_err();
        assert_eq!(overflow.code, PHASERS_EINVAL);
        // A non-root's NULL output is fine; the root's is not.
        let reduce = Collective::Reduce {
            root: 0,
            op: OpKind::Sum,
        };
        let input = [1.0f64; 4];
        let args = Args::<f64>::check(reduce, 1, 2, input.as_ptr().cast(), std::ptr::null_mut(), 4);
        assert!(args.is_ok());
        let args = Args::<f64>::check(reduce, 0, 2, input.as_ptr().cast(), std::ptr::null_mut(), 4);
        assert_eq!(args.unwrap_err().code, PHASERS_ENULL);
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
