//! The operator of a reducing collective: a built-in [`Op`] (loops that vectorize), or the
//! caller's function applied element by element.

use crate::accumulator::{Element, Op};
use crate::error::{Error, Result};

/// `dest = dest op src`, element by element.
pub(crate) enum Combiner<'a, T> {
    /// A built-in op, with the loop compiled for its element type.
    Builtin {
        op: Op<T>,
        apply: fn(&Op<T>, &mut [T], &[T]),
    },
    /// The caller's function, borrowed for a blocking call.
    Borrowed(&'a (dyn Fn(T, T) -> T + 'a)),
    /// The caller's function, owned by a pending call.
    Owned(Box<dyn Fn(T, T) -> T + 'a>),
}

impl<'a, T: Copy> Combiner<'a, T> {
    /// The combiner for a built-in op; bitwise ops on floating-point types are refused.
    pub(crate) fn builtin(op: Op<T>) -> Result<Self>
    where
        T: Element,
    {
        if matches!(op, Op::And | Op::Or | Op::Xor) && !T::INTEGER {
            return Err(Error::invalid(format!(
                "Op::{} is a bitwise operator and applies to integers only, not {}; use Sum, \
                 Product, Min, Max or a function of your own",
                op.name(),
                std::any::type_name::<T>()
            )));
        }
        Ok(Combiner::Builtin {
            op,
            apply: apply_builtin::<T>,
        })
    }

    /// The name checked mode compares.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Combiner::Builtin { op, .. } => op.name(),
            Combiner::Borrowed(_) | Combiner::Owned(_) => "a function of the caller's",
        }
    }

    /// One word per distinct [`name`](Self::name), for the call's signature.
    pub(crate) fn code(&self) -> u64 {
        match self {
            Combiner::Builtin { op, .. } => match op {
                Op::Sum => 1,
                Op::Product => 2,
                Op::Min => 3,
                Op::Max => 4,
                Op::And => 5,
                Op::Or => 6,
                Op::Xor => 7,
                Op::Custom { .. } => 8,
            },
            Combiner::Borrowed(_) | Combiner::Owned(_) => 9,
        }
    }

    #[inline]
    pub(crate) fn apply(&self, dest: &mut [T], src: &[T]) {
        match self {
            Combiner::Builtin { op, apply } => apply(op, dest, src),
            Combiner::Borrowed(f) => each(dest, src, f),
            Combiner::Owned(f) => each(dest, src, f),
        }
    }
}

#[inline(always)]
fn each<T: Copy>(dest: &mut [T], src: &[T], f: impl Fn(T, T) -> T) {
    for (d, s) in dest.iter_mut().zip(src) {
        *d = f(*d, *s);
    }
}

/// One plain loop per op, so each vectorizes.
fn apply_builtin<T: Element>(op: &Op<T>, dest: &mut [T], src: &[T]) {
    match op {
        Op::Sum => each(dest, src, T::add),
        Op::Product => each(dest, src, T::mul),
        Op::Min => each(dest, src, T::min),
        Op::Max => each(dest, src, T::max),
        Op::And => each(dest, src, |a: T, b: T| a.bitwise(b, |x, y| x & y)),
        Op::Or => each(dest, src, |a: T, b: T| a.bitwise(b, |x, y| x | y)),
        Op::Xor => each(dest, src, |a: T, b: T| a.bitwise(b, |x, y| x ^ y)),
        Op::Custom { combine, .. } => each(dest, src, |a, b| combine(a, b)),
    }
}
