//! Step 3 of a call: each member moves the data it is responsible for.
//!
//! On the `Pull` path a member reads the inputs it needs (from their owners' buffers, or their
//! staged copies) and writes only its own outputs. On the `Linear` path (seed 003's linear
//! reduction) a member reduces its share of every input and writes that share into the outputs
//! that need it. Before using a partner's buffers a member checks that the partner's post
//! describes the same call; if not, it records a mismatch and leaves that partner alone.

use std::any::Any;

use super::call::Call;
use super::check::difference;
use super::kind::{Kind, Path};
use super::member::Member;
use super::post::Post;
use crate::error::Error;

type Panic = Box<dyn Any + Send>;

impl Member {
    /// Moves this member's part of the data. Returns a panic of the operator, to be resumed once
    /// the call's duties are done.
    pub(crate) fn move_data<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        post: &Post,
    ) -> Option<Panic> {
        let rank = self.rank;
        let size = self.shared.size;
        let count = post.count;
        let root = post.root;
        match (post.kind, post.path) {
            (Kind::Broadcast, Path::Pull) => {
                if rank != root {
                    if let Some(source) = self.partner(post, root) {
                        // SAFETY: the root's post matches: its input holds `count` elements of
                        // `T`; this member's buffer holds `count` (checked by `broadcast`).
                        unsafe { copy::<T>(source.input, 0, call.output, 0, count) };
                    }
                }
                None
            }
            (Kind::Scatter, Path::Pull) => {
                let source = self.input_of(call, post, root)?;
                // SAFETY: the root's input holds `size * count` elements (checked by the root);
                // this member's output holds `count`.
                unsafe { copy::<T>(source, rank * count, call.output, 0, count) };
                None
            }
            (Kind::Gather, Path::Pull) | (Kind::Allgather, Path::Pull) => {
                if post.kind == Kind::Gather && rank != root {
                    return None;
                }
                for owner in 0..size {
                    if let Some(source) = self.input_of(call, post, owner) {
                        // SAFETY: each matching input holds `count` elements; the output holds
                        // `size * count` (checked by the collective).
                        unsafe { copy::<T>(source, 0, call.output, owner * count, count) };
                    }
                }
                None
            }
            (Kind::Alltoall, Path::Pull) => {
                let block = count / size;
                for owner in 0..size {
                    if let Some(source) = self.input_of(call, post, owner) {
                        // SAFETY: every matching input and the output hold `count` elements,
                        // a multiple of `size` (checked by `alltoall`).
                        unsafe {
                            copy::<T>(source, rank * block, call.output, owner * block, block)
                        };
                    }
                }
                None
            }
            (Kind::ScanInclusive, Path::Pull) => self.fold_inputs(call, post, 0..rank + 1),
            (Kind::ScanExclusive, Path::Pull) => {
                if rank == 0 {
                    None
                } else {
                    self.fold_inputs(call, post, 0..rank)
                }
            }
            (Kind::Reduce, Path::Pull) if rank != root => None,
            (Kind::Reduce | Kind::Allreduce, Path::Pull) => self.fold_inputs(call, post, 0..size),
            (Kind::Reduce | Kind::Allreduce, Path::Linear) => self.linear_share(call, post),
            _ => None,
        }
    }

    /// `output = input(first) op ... op input(last)` over `owners`, in rank order.
    fn fold_inputs<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        post: &Post,
        owners: std::ops::Range<usize>,
    ) -> Option<Panic> {
        let count = post.count;
        let op = call.op.as_ref()?;
        // SAFETY: the output holds `count` elements (checked by the collective) and nobody else
        // touches it on the pull path.
        let output = unsafe { std::slice::from_raw_parts_mut(call.output, count) };
        let mut first = true;
        for owner in owners {
            let source = self.input_of(call, post, owner)?;
            // SAFETY: a matching input holds `count` elements of `T`.
            let input = unsafe { std::slice::from_raw_parts(source.cast::<T>(), count) };
            if first {
                output.copy_from_slice(input);
                first = false;
            } else if let Err(panic) = self.run_op(post.seq, op, output, input) {
                return Some(panic);
            }
        }
        None
    }

    /// Seed 003's linear reduction: this member's share of the elements, reduced over every
    /// input in rank order, written into the root's output (reduce) or every output (allreduce).
    fn linear_share<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        post: &Post,
    ) -> Option<Panic> {
        let (rank, size, count) = (self.rank, self.shared.size, post.count);
        let op = call.op.as_ref()?;
        let low = count * rank / size;
        let high = count * (rank + 1) / size;
        let destination: *mut T = if post.kind == Kind::Allreduce || rank == post.root {
            call.output
        } else {
            self.partner(post, post.root)?.output.cast()
        };
        // SAFETY: the destination holds `count` elements (checked by its owner, whose post
        // matches); shares of different members are disjoint, and the owner does not touch its
        // output outside its own share during the call.
        let share = unsafe { std::slice::from_raw_parts_mut(destination.add(low), high - low) };
        for owner in 0..size {
            let source = self.input_of(call, post, owner)?;
            // SAFETY: a matching input holds `count` elements; nobody writes inputs.
            let input =
                unsafe { std::slice::from_raw_parts(source.cast::<T>().add(low), high - low) };
            if owner == 0 {
                share.copy_from_slice(input);
            } else if let Err(panic) = self.run_op(post.seq, op, share, input) {
                return Some(panic);
            }
        }
        if post.kind == Kind::Allreduce {
            for owner in (0..size).filter(|&owner| owner != rank) {
                if let Some(theirs) = self.partner(post, owner) {
                    // SAFETY: their output holds `count` elements (their post matches); this
                    // share of it is written by this member only.
                    unsafe {
                        copy::<T>(
                            share.as_ptr().cast(),
                            0,
                            theirs.output.cast(),
                            low,
                            high - low,
                        )
                    };
                }
            }
        }
        None
    }

    /// Where `owner`'s input lies: this member's own, or a matching partner's.
    fn input_of<T>(&self, call: &Call<'_, T>, post: &Post, owner: usize) -> Option<*const u8> {
        if owner == self.rank {
            Some(call.input.cast())
        } else {
            self.partner(post, owner).map(|theirs| theirs.input)
        }
    }

    /// `owner`'s post of this call, if it matches this member's; a mismatch is recorded as the
    /// call's error.
    fn partner(&self, post: &Post, owner: usize) -> Option<Post> {
        let shared = &*self.shared;
        // SAFETY: this member is within call `post.seq`, whose meeting every member reached.
        let theirs = unsafe { shared.slots[owner].read_post(post.seq) };
        if post.same_call(&theirs) {
            return Some(theirs);
        }
        let error = if theirs.seq != post.seq || theirs.invalid {
            Error::invalid(format!(
                "member {owner} did not take part in {} call {} as member {} did",
                post.kind, post.seq, self.rank
            ))
        } else {
            difference(post, self.rank, &theirs, owner, false).unwrap_or_else(|| {
                Error::invalid(format!(
                    "members {} and {owner} disagree about {} call {}",
                    self.rank, post.kind, post.seq
                ))
            })
        };
        shared.record_error(post.seq, error);
        None
    }
}

/// Copies `count` elements of `T` from `source[from..]` to `destination[to..]`.
///
/// # Safety
///
/// Both ranges are in bounds of live buffers of `T` that do not overlap, and nobody writes the
/// source or touches the destination range meanwhile.
unsafe fn copy<T>(source: *const u8, from: usize, destination: *mut T, to: usize, count: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(source.cast::<T>().add(from), destination.add(to), count)
    };
}
