//! The element-wise operator, compiled once per element type and op so the loops vectorize.
//!
//! Teams use these kernels too: a team's built-in ops run through [`Kernel::from_op`], and its
//! functions of the caller's (borrowed, so never a `Kernel`) through [`ElementWise`] and the same
//! loops.

use std::mem::MaybeUninit;
use std::sync::Arc as StdArc;

use crate::accumulator::{Element, Op};
use crate::error::{Error, Result};

type Accumulate<T> = dyn Fn(&mut [T], &[T]) + Send + Sync;
type Combine<T> = dyn Fn(&mut [MaybeUninit<T>], &[T], &[T]) + Send + Sync;

/// `dest = dest op src` and `dest = a op b`, element by element.
///
/// The built-in ops are monomorphized closures over plain loops, which the compiler vectorizes; a
/// user function is called once per element through a pointer. Destinations may be uninitialized
/// scratch memory, hence `MaybeUninit` for `combine`.
pub(crate) struct Kernel<T> {
    accumulate: Box<Accumulate<T>>,
    combine: Box<Combine<T>>,
}

#[inline(always)]
pub(crate) fn accumulate_with<T: Copy>(dest: &mut [T], src: &[T], op: impl Fn(T, T) -> T) {
    for (d, s) in dest.iter_mut().zip(src) {
        *d = op(*d, *s);
    }
}

#[inline(always)]
pub(crate) fn combine_with<T: Copy>(
    dest: &mut [MaybeUninit<T>],
    a: &[T],
    b: &[T],
    op: impl Fn(T, T) -> T,
) {
    for ((d, x), y) in dest.iter_mut().zip(a).zip(b) {
        d.write(op(*x, *y));
    }
}

/// What the reduction loops need of an operator: `dest = dest op src` and `dest = a op b`,
/// element by element, where `dest` may be uninitialized for the second.
pub(crate) trait ElementWise<T> {
    fn accumulate(&self, dest: &mut [T], src: &[T]);
    fn combine(&self, dest: &mut [MaybeUninit<T>], a: &[T], b: &[T]);
}

impl<T> ElementWise<T> for Kernel<T> {
    #[inline]
    fn accumulate(&self, dest: &mut [T], src: &[T]) {
        (self.accumulate)(dest, src)
    }

    #[inline]
    fn combine(&self, dest: &mut [MaybeUninit<T>], a: &[T], b: &[T]) {
        (self.combine)(dest, a, b)
    }
}

impl<T: Copy + Send + Sync + 'static> Kernel<T> {
    /// A kernel for a user function (associative and commutative).
    pub(crate) fn from_fn(f: StdArc<dyn Fn(T, T) -> T + Send + Sync>) -> Self {
        let g = StdArc::clone(&f);
        Kernel {
            accumulate: Box::new(move |d, s| accumulate_with(d, s, &*f)),
            combine: Box::new(move |d, a, b| combine_with(d, a, b, &*g)),
        }
    }
}

/// One monomorphized kernel per op, so each closure body is a plain loop over a known operator.
macro_rules! kernel_for {
    ($op:expr) => {{
        let op = $op;
        Kernel {
            accumulate: Box::new(move |d: &mut [T], s: &[T]| accumulate_with(d, s, op)),
            combine: Box::new(move |d: &mut [MaybeUninit<T>], a: &[T], b: &[T]| {
                combine_with(d, a, b, op)
            }),
        }
    }};
}

impl<T: Element> Kernel<T> {
    /// The kernel for `op`; bitwise ops on floating-point types are refused.
    pub(crate) fn from_op(op: Op<T>) -> Result<Self> {
        if matches!(op, Op::And | Op::Or | Op::Xor) && !T::INTEGER {
            return Err(Error::invalid(format!(
                "Op::{} is a bitwise operator and applies to integers only, not {}; use Sum, \
                 Product, Min, Max or a function of your own",
                op.name(),
                std::any::type_name::<T>()
            )));
        }
        Ok(match op {
            Op::Sum => kernel_for!(|a: T, b: T| a.add(b)),
            Op::Product => kernel_for!(|a: T, b: T| a.mul(b)),
            Op::Min => kernel_for!(|a: T, b: T| Element::min(a, b)),
            Op::Max => kernel_for!(|a: T, b: T| Element::max(a, b)),
            Op::And => kernel_for!(|a: T, b: T| a.bitwise(b, |x, y| x & y)),
            Op::Or => kernel_for!(|a: T, b: T| a.bitwise(b, |x, y| x | y)),
            Op::Xor => kernel_for!(|a: T, b: T| a.bitwise(b, |x, y| x ^ y)),
            Op::Custom { combine, .. } => Self::from_fn(combine),
        })
    }
}
