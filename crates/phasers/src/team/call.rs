//! One collective call's arguments, as the engine sees them: typed buffers as raw parts, so that
//! blocking and non-blocking calls, and every collective, go through the same steps.

use std::marker::PhantomData;

use super::combiner::Combiner;
use super::kind::Kind;
use crate::error::Error;

pub(crate) struct Call<'a, T> {
    pub(crate) kind: Kind,
    pub(crate) root: usize,
    /// The element count that must agree across members.
    pub(crate) count: usize,
    pub(crate) input: *const T,
    pub(crate) input_len: usize,
    pub(crate) output: *mut T,
    pub(crate) output_len: usize,
    pub(crate) op: Option<Combiner<'a, T>>,
    pub(crate) value: u64,
    pub(crate) color: u32,
    pub(crate) key: i64,
    /// What was wrong with this member's own arguments; every member of the call gets it.
    pub(crate) local_error: Option<Error>,
    _buffers: PhantomData<(&'a [T], &'a mut [T])>,
}

impl<'a, T> Call<'a, T> {
    pub(crate) fn new(kind: Kind) -> Self {
        Call {
            kind,
            root: 0,
            count: 0,
            input: std::ptr::NonNull::dangling().as_ptr(),
            input_len: 0,
            output: std::ptr::NonNull::dangling().as_ptr(),
            output_len: 0,
            op: None,
            value: 0,
            color: 0,
            key: 0,
            local_error: None,
            _buffers: PhantomData,
        }
    }

    pub(crate) fn input(mut self, input: &'a [T]) -> Self {
        self.input = input.as_ptr();
        self.input_len = input.len();
        self
    }

    pub(crate) fn output(mut self, output: &'a mut [T]) -> Self {
        self.output = output.as_mut_ptr();
        self.output_len = output.len();
        self
    }

    /// The broadcast buffer: the root's input and everyone's output.
    pub(crate) fn in_out(mut self, buffer: &'a mut [T]) -> Self {
        self.output = buffer.as_mut_ptr();
        self.output_len = buffer.len();
        self.input = self.output.cast_const();
        self.input_len = buffer.len();
        self
    }

    pub(crate) fn root(mut self, root: usize) -> Self {
        self.root = root;
        self
    }

    pub(crate) fn count(mut self, count: usize) -> Self {
        self.count = count;
        self
    }

    pub(crate) fn op(mut self, op: Combiner<'a, T>) -> Self {
        self.op = Some(op);
        self
    }

    pub(crate) fn fail(&mut self, error: Error) {
        if self.local_error.is_none() {
            self.local_error = Some(error);
        }
    }

    /// Whether the call, made blocking, ends at its opening meeting (see `Member::run_light`):
    /// a barrier, or a broadcast or reduction of at most `INLINE_BYTES` whose arguments are good.
    /// The same calls take `Path::None` or `Path::Inline` in `Member::start`.
    pub(crate) fn is_light(&self) -> bool {
        let bytes = self.count.saturating_mul(std::mem::size_of::<T>());
        match self.kind {
            Kind::Barrier | Kind::BarrierChecked => true,
            Kind::Broadcast | Kind::Reduce | Kind::Allreduce => {
                bytes <= super::post::INLINE_BYTES && self.local_error.is_none()
            }
            _ => false,
        }
    }

    /// The operator's name, for checked mode.
    pub(crate) fn op_name(&self) -> &'static str
    where
        T: Copy,
    {
        self.op.as_ref().map_or("", Combiner::name)
    }

    /// The operator as a word for the call's signature: each built-in op, a custom `Op`, and a
    /// function of the caller's have their own; 0 without an operator.
    pub(crate) fn op_code(&self) -> u64
    where
        T: Copy,
    {
        self.op.as_ref().map_or(0, Combiner::code)
    }

    /// The input as a slice.
    ///
    /// # Safety
    ///
    /// Nobody writes the input during the call (its borrow is shared).
    pub(crate) unsafe fn input_slice(&self) -> &[T] {
        // SAFETY: built from a live `&'a [T]` (or the broadcast buffer, which only the root
        // passes as an input and never writes during the call).
        unsafe { std::slice::from_raw_parts(self.input, self.input_len) }
    }
}
