//! What the last member to arrive at a call's opening meeting does before it releases the others.

use super::call::Call;
use super::check::compare_all;
use super::combiner::Combiner;
use super::engine::{from_bits, to_bits, word_call};
use super::kind::{Kind, Path};
use super::meeting::InlineResult;
use super::member::Member;
use super::post::Post;
use crate::error::Error;
use crate::primitive::Ordering;

impl Member {
    /// Checks the call, computes its inline result or split, and records its error if any.
    /// `matched` tells whether every member arrived with this member's signature (always true
    /// for an unchecked team).
    pub(crate) fn complete_entry<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        post: &Post,
        matched: bool,
    ) {
        let shared = &*self.shared;
        let seq = post.seq;
        let mut failure = shared.error_for(seq);
        // The posts are read only when the signatures differ, or when the call reads them anyway:
        // inline payloads are combined from them, and a split's colors and keys live there.
        // A one-word call reads no post: its inputs are in the meeting's cells (see `word_call`).
        let word = word_call(shared, call, post);
        let scan = !matched
            || post.path == Path::Inline && !word
            || matches!(post.kind, Kind::BarrierChecked | Kind::Split);
        if failure.is_none() && scan {
            failure = compare_all(shared, seq, shared.checked);
        }
        if failure.is_none() && !matched {
            failure = Some(unexplained_difference(post, self.rank));
        }
        if failure.is_none() {
            failure = match (post.path, post.kind) {
                (Path::Inline, _) if word => {
                    self.word_result(call, post);
                    None
                }
                (Path::Inline, _) => self.inline_result(call, post).err(),
                (Path::None, Kind::Split) => {
                    self.assign_splits(seq);
                    None
                }
                _ => None,
            };
        }
        if let Some(error) = failure {
            shared.record_error(seq, error);
            shared.entry.failed.store(seq + 1, Ordering::Release);
        }
    }

    /// Every member's input of a one-word call combined in rank order, left in the meeting's
    /// line next to the release word.
    fn word_result<T: Copy + Send + 'static>(&self, call: &Call<'_, T>, post: &Post) {
        let op = call
            .op
            .as_ref()
            .expect("reductions always carry an operator (set by every reducing collective)");
        self.combine_words(post.seq, op);
    }

    /// The body of [`word_result`](Self::word_result), which the light path calls directly.
    #[inline]
    pub(crate) fn combine_words<T: Copy + Send + 'static>(&self, seq: u64, op: &Combiner<'_, T>) {
        let shared = &*self.shared;
        // SAFETY: every member of a matched word call left an input of its own in its cell, an
        // `Element` of at most 8 bytes (see `word_call`), before its arrival, which this
        // completer's arrival acquired.
        let mut acc: T = unsafe { from_bits(shared.entry.input(seq, 0)) };
        for other in 1..shared.size {
            // SAFETY: as above.
            let theirs: T = unsafe { from_bits(shared.entry.input(seq, other)) };
            let dest = std::slice::from_mut(&mut acc);
            if let Err(panic) = self.run_op(seq, op, dest, std::slice::from_ref(&theirs)) {
                // As for `inline_result`: the others get `Broken`, and the panic goes on here.
                shared.entry.failed.store(seq + 1, Ordering::Release);
                shared.entry.release(seq);
                std::panic::resume_unwind(panic);
            }
        }
        shared.entry.put_word(seq, to_bits(acc));
    }

    /// The root's payload for a broadcast, or every payload combined in rank order for a
    /// reduction, written into the meeting's line. Every post was compared with member 0's
    /// before, so each holds `count` elements of `T`.
    fn inline_result<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        post: &Post,
    ) -> Result<(), Error> {
        let shared = &*self.shared;
        let seq = post.seq;
        let source = if post.kind == Kind::Broadcast {
            post.root
        } else {
            0
        };
        // SAFETY: the meeting of `seq` is full and not yet released.
        let first = unsafe { shared.slots[source].read_post(seq) };
        let mut result = InlineResult {
            seq,
            count: post.count,
            type_id: post.type_id,
            data: first.inline,
        };
        if post.kind != Kind::Broadcast {
            let op = call
                .op
                .as_ref()
                .expect("reductions always carry an operator (set by every reducing collective)");
            // SAFETY: the chunk is aligned to 64 (at least `T`'s alignment) and holds `count`
            // elements of `T` (at most 64 bytes), copied from member 0's input.
            let acc = unsafe {
                std::slice::from_raw_parts_mut(result.data.0.as_mut_ptr().cast::<T>(), post.count)
            };
            for other in 1..shared.size {
                // SAFETY: as for `first`.
                let theirs = unsafe { shared.slots[other].read_post(seq) };
                // SAFETY: as for `acc`; the post was checked to carry `count` elements of `T`.
                let src = unsafe {
                    std::slice::from_raw_parts(theirs.inline.0.as_ptr().cast::<T>(), post.count)
                };
                if let Err(panic) = self.run_op(seq, op, acc, src) {
                    // The others get `Broken` (recorded by `run_op`); this member's panic goes on
                    // once the meeting is released, since nobody uses its buffers any more.
                    shared.entry.failed.store(seq + 1, Ordering::Release);
                    shared.entry.release(seq);
                    std::panic::resume_unwind(panic);
                }
            }
        }
        // SAFETY: only the completer writes the result, before the release; the readers of the
        // previous result all arrived at this meeting, so are done with it.
        shared.entry.result.with_mut(|r| unsafe { r.write(result) });
        Ok(())
    }
}

/// The error for signatures that differ while every compared field agrees. The signature covers
/// exactly the fields the full comparison checks, so this cannot happen unless a member's post
/// was written outside the protocol; it is still a typed error, never a hang.
#[cold]
fn unexplained_difference(post: &Post, rank: usize) -> Error {
    Error::Mismatch {
        what: "call signature",
        rank,
        ours: post.kind.to_string(),
        other: rank,
        theirs: "a call whose signature differs in no compared field".to_string(),
    }
}
