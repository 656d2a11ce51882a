//! The operator of a reducing collective: a built-in [`Op`] (the reduce module's kernel, whose
//! loops vectorize), or the caller's function applied element by element through the same loops.

use std::any::Any;

use super::member::Member;
use super::post::Post;
use super::reduce_group;
use crate::accumulator::{Element, Op};
use crate::error::Result;
use crate::reduce::{accumulate_with, combine_with, ElementWise, Kernel};

/// Runs one reduce or allreduce through the team's reduction group for the element type (see
/// `reduce_group`); compiled where the element type is known to be an [`Element`].
type GroupRun<T> = fn(&Member, &Post, *const T, *mut T, &Kernel<T>) -> Option<Box<dyn Any + Send>>;

/// `dest = dest op src`, element by element.
pub(crate) enum Combiner<'a, T> {
    /// A built-in op (or [`Op::Custom`]), as the reduce module's kernel.
    Builtin {
        name: &'static str,
        code: u64,
        kernel: Kernel<T>,
        group: GroupRun<T>,
    },
    /// The caller's function, borrowed for a blocking call.
    Borrowed(&'a (dyn Fn(T, T) -> T + 'a)),
    /// The caller's function, owned by a pending call; `Send`, so that the [`Pending`] that
    /// holds it is, and an async task can hold the call across an `.await`.
    ///
    /// [`Pending`]: super::Pending
    Owned(Box<dyn Fn(T, T) -> T + Send + 'a>),
}

impl<'a, T: Copy> Combiner<'a, T> {
    /// The combiner for a built-in op; bitwise ops on floating-point types are refused.
    pub(crate) fn builtin(op: Op<T>) -> Result<Self>
    where
        T: Element,
    {
        let name = op.name();
        let code = op_code(&op);
        Ok(Combiner::Builtin {
            name,
            code,
            kernel: Kernel::from_op(op)?,
            group: reduce_group::run::<T>,
        })
    }

    /// The name checked mode compares.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Combiner::Builtin { name, .. } => name,
            Combiner::Borrowed(_) | Combiner::Owned(_) => "a function of the caller's",
        }
    }

    /// One word per distinct [`name`](Self::name), for the call's signature.
    pub(crate) fn code(&self) -> u64 {
        match self {
            Combiner::Builtin { code, .. } => *code,
            Combiner::Borrowed(_) | Combiner::Owned(_) => 9,
        }
    }

    /// Whether the team's reduction group can run this operator: built-in ops can; a function of
    /// the caller's may be neither `Send` nor `Sync`, so it stays on the team's linear path.
    pub(crate) fn runs_in_group(&self) -> bool {
        matches!(self, Combiner::Builtin { .. })
    }

    /// Runs one reduce or allreduce of `post` through the team's reduction group (see
    /// `reduce_group`); a function of the caller's never gets here (`runs_in_group`).
    pub(crate) fn run_in_group(
        &self,
        member: &Member,
        post: &Post,
        input: *const T,
        output: *mut T,
    ) -> Option<Box<dyn Any + Send>> {
        match self {
            Combiner::Builtin { kernel, group, .. } => group(member, post, input, output, kernel),
            Combiner::Borrowed(_) | Combiner::Owned(_) => None,
        }
    }

    #[inline]
    pub(crate) fn apply(&self, dest: &mut [T], src: &[T]) {
        ElementWise::accumulate(self, dest, src)
    }
}

/// The word of a built-in op in a call's signature (see [`Combiner::code`]).
#[inline]
pub(crate) fn op_code<T>(op: &Op<T>) -> u64 {
    match op {
        Op::Sum => 1,
        Op::Product => 2,
        Op::Min => 3,
        Op::Max => 4,
        Op::And => 5,
        Op::Or => 6,
        Op::Xor => 7,
        Op::Custom { .. } => 8,
    }
}

impl<T: Copy> ElementWise<T> for Combiner<'_, T> {
    #[inline]
    fn accumulate(&self, dest: &mut [T], src: &[T]) {
        match self {
            Combiner::Builtin { kernel, .. } => kernel.accumulate(dest, src),
            Combiner::Borrowed(f) => accumulate_with(dest, src, f),
            Combiner::Owned(f) => accumulate_with(dest, src, &**f),
        }
    }

    #[inline]
    fn combine(&self, dest: &mut [std::mem::MaybeUninit<T>], a: &[T], b: &[T]) {
        match self {
            Combiner::Builtin { kernel, .. } => kernel.combine(dest, a, b),
            Combiner::Borrowed(f) => combine_with(dest, a, b, f),
            Combiner::Owned(f) => combine_with(dest, a, b, &**f),
        }
    }
}
