//! Where a participant's buffers live during a call from an async task: in the group, not in the
//! caller's hands.
//!
//! A blocking call lends the others its input and output, and returns only once nobody uses them.
//! A task's call can be cancelled at any wait, by dropping its future, and the caller then has its
//! buffers back at once, while the others may still be reading the input (a master combining it)
//! or writing the output (the last pair, or under `Linear` every participant writing its share).
//! So a task's call works on copies that the group owns: the input copied in when the call starts,
//! the output copied in too (the algorithms write only part of some outputs, and a copy keeps
//! every element a valid `T`), and the result copied out when the call completes. They are freed
//! with the group, after the last handle, so whoever still holds a pointer to them holds valid
//! memory. The price is the copies: two of the input's length in, one out, in the task's own
//! cache.

use crate::primitive::UnsafeCell;

/// One participant's copies. Only its owner changes them (see [`prepare`](Self::prepare)); the
/// others reach their elements through the pointers the owner publishes in its slot.
pub(crate) struct Staging<T> {
    input: UnsafeCell<Vec<T>>,
    /// The output, or with none, the scratch a master accumulates into.
    output: UnsafeCell<Vec<T>>,
}

impl<T> Staging<T> {
    pub(crate) fn new() -> Self {
        Staging {
            input: UnsafeCell::new(Vec::new()),
            output: UnsafeCell::new(Vec::new()),
        }
    }
}

impl<T: Copy> Staging<T> {
    /// Copies `input` in, and `output` too, or with none (`None`), the input again as scratch;
    /// returns the copies.
    ///
    /// # Safety
    ///
    /// Only the owner calls this, at the start of a call, while nobody else uses its buffers:
    /// its earlier calls all finished (a cancelled one broke the group, and no call starts on a
    /// broken group), and it has published nothing of this call yet. The copies stay valid, and
    /// only others write the output copy, until the owner's next call.
    pub(crate) unsafe fn prepare<'c>(
        &self,
        input: &[T],
        output: Option<&[T]>,
    ) -> (&'c [T], &'c mut [T]) {
        let staged_input = self.input.with_mut(|copy| {
            // SAFETY: nobody else uses the copy now (the contract), and it lives as long as the
            // group, which the caller's handle holds.
            let copy = unsafe { &mut *copy };
            copy.clear();
            copy.extend_from_slice(input);
            copy.as_ptr()
        });
        let staged_output = self.output.with_mut(|copy| {
            // SAFETY: as above.
            let copy = unsafe { &mut *copy };
            copy.clear();
            copy.extend_from_slice(output.unwrap_or(input));
            copy.as_mut_ptr()
        });
        let out_len = output.map_or(0, <[T]>::len);
        // SAFETY: the two vectors hold `input.len()` and at least `out_len` elements, and keep
        // them until the owner's next call (the contract); they are distinct allocations.
        unsafe {
            (
                std::slice::from_raw_parts(staged_input, input.len()),
                std::slice::from_raw_parts_mut(staged_output, out_len),
            )
        }
    }

    /// The scratch of a call without an output: the output copy, as long as the input.
    pub(crate) fn work(&self) -> *mut T {
        // SAFETY: only the owner calls this, during its call: the vector is not being resized.
        self.output.with_mut(|copy| unsafe { (*copy).as_mut_ptr() })
    }
}
