//! Team reductions by the reduce module's algorithms (seed 003): one reduction group per team and
//! element type, whose handles the members keep.
//!
//! # Design
//!
//! A team call keeps its own protocol whatever combines the data: every member posts its
//! arguments, the opening meeting checks them (checked mode) or fails the call for all, and after
//! the data moved each member tells its partners it is done with their buffers and, in
//! `AllSync`, meets them again. Only the data movement of a blocking, unstaged `reduce` or
//! `allreduce` larger than an inline payload differs with the team's
//! [`reduce_algorithm`](super::TeamBuilder::reduce_algorithm):
//!
//! - **`Linear`** (the default, today's behaviour): the team's linear path. Each member reduces
//!   its share of every input, in rank order, and writes it into the outputs that need it, with
//!   the reduce module's `reduce_share` (the same loop as a `Reduction`'s linear algorithm) and
//!   its kernels. No synchronization is added: the team's meetings and `touched` counts order
//!   everything.
//! - **Any other algorithm**: after the opening meeting each member checks that every post
//!   describes the same call (the property is the same for every member, so either all go on or
//!   none does, and a difference is the call's error), then runs one call of the team's
//!   [`EmbeddedGroup`] for the element type: the very code of a
//!   [`Reduction`](crate::Reduction), with this call's root and operator. The group's own
//!   synchronization (offers, pairing word, jobs) is the reduce module's, modelled by its loom
//!   models; the team adds none. When the group's call returns, no other member uses this
//!   member's buffers, and the team protocol goes on as on the linear path (the `touched`
//!   counts, the closing meeting), so results, errors and sync modes read the same.
//!
//! Every member runs every group call of its element type in the same order (a call enters the
//! group on every member or on none), so each group's call numbers stay in step with the team.
//! A group is made by the first member that needs it; the others find it in the team's list.
//! Functions of the caller's (`reduce_with`, `allreduce_with`) may be neither `Send` nor `Sync`,
//! and non-blocking or `NoSync` calls copy their inputs and return before the others are done:
//! both keep the team's own paths.
//!
//! An operator that panics inside the group breaks the group for good, as in a `Reduction`; its
//! member's call fails with [`Error::Broken`] for everyone and the panic goes on in its thread,
//! which drops the member and so breaks the team too.

use std::any::{Any, TypeId};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::kind::Kind;
use super::member::Member;
use super::post::Post;
use crate::error::Error;
use crate::reduce::{EmbeddedGroup, Kernel, Reducer};

/// Runs this member's part of the reduce or allreduce `post` in the team's group for `T`, with
/// `kernel` as the operator. Every member of the call runs it, after checking that every post
/// matches. Returns the operator's panic, to be resumed once the call's duties are done; an
/// error of the group is recorded as the call's.
pub(crate) fn run<T: Copy + Send + Sync + 'static>(
    member: &Member,
    post: &Post,
    input: *const T,
    output: *mut T,
    kernel: &Kernel<T>,
) -> Option<Box<dyn Any + Send>> {
    let mut handles = member.groups.borrow_mut();
    let index = match handles.iter().position(|(id, _)| *id == TypeId::of::<T>()) {
        Some(index) => index,
        None => {
            handles.push((TypeId::of::<T>(), Box::new(join::<T>(member))));
            handles.len() - 1
        }
    };
    let reducer = handles[index].1.downcast_mut::<Reducer<T>>()?;
    let allreduce = post.kind == Kind::Allreduce;
    let count = post.count;
    // SAFETY: the collective checked that the input holds `count` elements; it is borrowed for
    // the call and nobody writes it.
    let input = unsafe { std::slice::from_raw_parts(input, count) };
    let output: &mut [T] = if allreduce || member.rank == post.root {
        // SAFETY: the collective checked that this output holds `count` elements; it is borrowed
        // exclusively for the call, and on this path only the group writes it.
        unsafe { std::slice::from_raw_parts_mut(output, count) }
    } else {
        &mut []
    };
    let ran = catch_unwind(AssertUnwindSafe(|| {
        reducer.run_embedded(allreduce, post.root, input, output, kernel)
    }));
    let shared = &member.shared;
    match ran {
        Ok(Ok(_)) => None,
        Ok(Err(error)) => {
            // The group numbers its calls itself; the team's error names the team's call.
            let error = match error {
                Error::Broken { by, .. } => Error::Broken {
                    by,
                    episode: post.seq,
                },
                other => other,
            };
            shared.record_error(post.seq, error);
            None
        }
        Err(panic) => {
            let broken = Error::Broken {
                by: member.rank,
                episode: post.seq,
            };
            shared.record_error(post.seq, broken);
            Some(panic)
        }
    }
}

/// This member's handle in the team's group for `T`, making the group if it is the first.
fn join<T: Copy + Send + Sync + 'static>(member: &Member) -> Reducer<T> {
    let shared = &member.shared;
    let mut groups = shared.groups.lock().unwrap_or_else(|e| e.into_inner());
    let found = groups
        .iter()
        .find_map(|(id, group)| (*id == TypeId::of::<T>()).then_some(group))
        .and_then(|group| group.downcast_ref::<EmbeddedGroup<T>>());
    if let Some(group) = found {
        return group.participant(member.rank);
    }
    let group = EmbeddedGroup::<T>::new(shared.size, shared.reduce_algorithm, shared.tuning);
    let handle = group.participant(member.rank);
    groups.push((TypeId::of::<T>(), Box::new(group)));
    handle
}
