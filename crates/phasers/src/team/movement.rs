//! Step 3 of a call: each member moves the data it is responsible for.
//!
//! On the `Pull` path a member reads the inputs it needs (from their owners' buffers, or their
//! staged copies) and writes only its own outputs. On the `Linear` path (seed 003's linear
//! reduction) a member reduces its share of every input and writes that share into the outputs
//! that need it. On the `Group` path the team's reduction group for the element type runs the
//! team's reduce algorithm (see `reduce_group`). Every combine goes through the reduce module's
//! kernels and loops. Before using a partner's buffers a member checks that the partner's post
//! describes the same call; if not, it records a mismatch and leaves that partner alone.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::call::Call;
use super::check::difference;
use super::kind::{Kind, Path};
use super::member::Member;
use super::post::Post;
use crate::error::Error;
use crate::reduce::{reduce_share, share_of};

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
            (Kind::Reduce | Kind::Allreduce, Path::Group) => self.group_share(call, post),
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
    /// input in rank order, written into the root's output (reduce) or every output (allreduce),
    /// by the reduce module's `reduce_share`, the loop of a `Reduction`'s linear algorithm. The
    /// team's protocol orders it: every input and output is posted before the opening meeting
    /// and used by others until they touch its owner.
    fn linear_share<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        post: &Post,
    ) -> Option<Panic> {
        let mut pointers = self.pointers.take();
        let panic = self.linear_share_with(call, post, &mut pointers);
        self.pointers.set(pointers);
        panic
    }

    fn linear_share_with<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        post: &Post,
        pointers: &mut Vec<usize>,
    ) -> Option<Panic> {
        let (rank, size, count) = (self.rank, self.shared.size, post.count);
        let op = call.op.as_ref()?;
        let allreduce = post.kind == Kind::Allreduce;
        pointers.clear();
        for owner in 0..size {
            pointers.push(self.input_of(call, post, owner)? as usize);
        }
        let destination: *mut T = if allreduce || rank == post.root {
            call.output
        } else {
            self.partner(post, post.root)?.output.cast()
        };
        if allreduce {
            for owner in 0..size {
                let output = if owner == rank {
                    call.output
                } else {
                    self.partner(post, owner)?.output.cast()
                };
                pointers.push(output as usize);
            }
        }
        let (inputs, outputs) = pointers.split_at(size);
        let share = share_of(rank, size, count);
        let combined = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: every post matches this member's (checked above), so every input and
            // output holds `count` elements (each checked by its owner); nobody writes inputs;
            // shares of different members are disjoint, and an owner does not touch its output
            // outside its own share during the call; `destination` is `outputs[rank]` for
            // allreduce, and no output overlaps an input (each is its owner's exclusive borrow).
            unsafe { reduce_share(op, inputs, destination, outputs, rank, share) }
        }));
        combined.err().inspect(|_| {
            self.shared.record_error(
                post.seq,
                Error::Broken {
                    by: rank,
                    episode: post.seq,
                },
            );
        })
    }

    /// The team's reduction group runs this member's part (see `reduce_group`), once every post
    /// is known to describe the same call: that holds for every member or for none, so either
    /// all enter the group's call or none does.
    fn group_share<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        post: &Post,
    ) -> Option<Panic> {
        let op = call.op.as_ref()?;
        let size = self.shared.size;
        if !(0..size).all(|owner| owner == self.rank || self.partner(post, owner).is_some()) {
            return None;
        }
        op.run_in_group(self, post, call.input, call.output)
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
