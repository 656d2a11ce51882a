//! The lightest calls, a barrier and a one-word allreduce, whose whole protocol is the opening
//! meeting (issue 35). Issue 35's profile of a 2-member team on a 2-core AMD EPYC VM found the
//! general light path (`Member::run_light`) spending a third of its time outside the protocol,
//! building a 256-byte post on the stack and copying it, at about 1.9x the Auto barrier. These
//! paths build no post and no `Call`: they write the few fields of the member's post that others
//! may read straight into its slot, fold the signature from those fields, arrive, and wait for the
//! release, exactly as `run_light` does. Whatever is rare (a mismatch, an error recorded for the
//! call, a failed meeting) reads the post back and goes through the engine's own code.

use std::any::TypeId;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use super::call::Call;
use super::combiner::op_code;
use super::engine::{from_bits, to_bits};
use super::kind::{Kind, Path};
use super::member::{stopped, Member};
use super::post::{Fields, LightExtra};
use super::shared::TeamShared;
use super::signature::{self, LightKey, LIGHT_BARRIER};
use crate::accumulator::{Element, Op};
use crate::error::{Error, Result};
use crate::primitive::Ordering;
use crate::wait::Deadline;

impl Member {
    /// [`barrier`](Member::barrier) with no call in flight.
    #[inline]
    pub(crate) fn barrier_light(&mut self) -> Result<()> {
        let fields = Fields {
            kind: Kind::Barrier,
            path: Path::None,
            mode: self.mode,
            blocking: true,
            count: 0,
            root: 0,
            type_id: TypeId::of::<()>(),
            value: 0,
        };
        let extra = LightExtra {
            op: "",
            type_name: std::any::type_name::<()>(),
            input: std::ptr::null(),
            output: std::ptr::null_mut(),
            len: 0,
        };
        let (seq, arrived) = self.light_begin(&fields, &extra, 0, None)?;
        if let Some(matched) = arrived {
            let shared: &TeamShared = &self.shared;
            if !matched || shared.error_for(seq).is_some() {
                self.complete_light(seq, &Call::<()>::new(Kind::Barrier), matched);
            }
            shared.entry.release(seq);
        }
        self.light_end(seq, arrived.is_some())
    }

    /// [`allreduce`](Member::allreduce) of one element of at most 8 bytes in a checked team,
    /// with no call in flight and an op its type takes: a one-word call (see
    /// `engine::word_call`). The op is applied directly, without the `Combiner` the general path
    /// builds (a kernel of two boxed closures, and a `Result` of it, moved twice): issue 35's
    /// profile found that building and moving at about a quarter of the call outside the protocol.
    #[inline]
    pub(crate) fn allreduce_word<T: Element>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: &Op<T>,
    ) -> Result<()> {
        debug_assert!(self.shared.checked && input.len() == 1 && output.len() == 1);
        debug_assert!(std::mem::size_of::<T>() <= 8);
        let fields = Fields {
            kind: Kind::Allreduce,
            path: Path::Inline,
            mode: self.mode,
            blocking: true,
            count: 1,
            root: 0,
            type_id: TypeId::of::<T>(),
            value: 0,
        };
        let extra = LightExtra {
            op: op.name(),
            type_name: std::any::type_name::<T>(),
            input: input.as_ptr().cast(),
            output: output.as_mut_ptr().cast(),
            len: 1,
        };
        let word = to_bits(input[0]);
        let (seq, arrived) = self.light_begin(&fields, &extra, op_code(op), Some(word))?;
        if let Some(matched) = arrived {
            let shared: &TeamShared = &self.shared;
            if matched && shared.error_for(seq).is_none() {
                self.apply_to_words(seq, op);
            } else {
                // This completion fails the call (the signatures differ, or an error is
                // recorded), and a failed call combines nothing: it needs no operator.
                let call = Call::<T>::new(Kind::Allreduce).count(1);
                self.complete_light(seq, &call, matched);
            }
            shared.entry.release(seq);
        }
        self.light_end(seq, arrived.is_some())?;
        // SAFETY: a one-word call's `T` is an `Element` of at most 8 bytes (built-in ops take
        // nothing else); the completer wrote the word before the release this member saw (or is
        // this member), and the next one writes it only after this member arrives there.
        output[0] = unsafe { from_bits(self.shared.entry.word(seq)) };
        Ok(())
    }

    /// Every member's input of one-word call `seq` combined with `op` in rank order, left in the
    /// meeting's line: what `Member::combine_words` does with a `Combiner`. A custom op that
    /// panics breaks the call as there: the others get `Broken`, and the panic goes on here once
    /// they are released.
    #[inline]
    fn apply_to_words<T: Element>(&self, seq: u64, op: &Op<T>) {
        let shared: &TeamShared = &self.shared;
        // SAFETY: every member of a matched word call left an input of its own in its cell, an
        // `Element` of at most 8 bytes, before its arrival, which this completer's acquired.
        let mut acc: T = unsafe { from_bits(shared.entry.input(seq, 0)) };
        for other in 1..shared.size {
            // SAFETY: as above.
            let theirs: T = unsafe { from_bits(shared.entry.input(seq, other)) };
            acc = match op {
                // Only a user's op can panic.
                Op::Custom { .. } => {
                    match catch_unwind(AssertUnwindSafe(|| op.apply(acc, theirs))) {
                        Ok(value) => value,
                        Err(panic) => {
                            let broken = Error::Broken {
                                by: self.rank,
                                episode: seq,
                            };
                            shared.record_error(seq, broken);
                            shared.entry.failed.store(seq + 1, Ordering::Release);
                            shared.entry.release(seq);
                            resume_unwind(panic);
                        }
                    }
                }
                builtin => builtin.apply(acc, theirs),
            };
        }
        shared.entry.put_word(seq, to_bits(acc));
    }

    /// The start of a light call: the broken state, the roster, the post's fields, the one-word
    /// input if any, and the arrival. Returns the call's number and, for the last arrival,
    /// whether every member arrived with the same signature.
    #[inline(always)]
    fn light_begin(
        &mut self,
        fields: &Fields,
        extra: &LightExtra,
        op_code: u64,
        word: Option<u64>,
    ) -> Result<(u64, Option<bool>)> {
        let shared: &TeamShared = &self.shared;
        let seq = self.seq;
        if shared.broken.is_broken_for(seq) {
            return Err(shared.broken_error());
        }
        // For stall reports, as in `start`.
        shared.roster.arrive(self.rank, seq);
        self.seq += 1;
        // SAFETY: this member owns the slot, and every member has arrived at call `seq - 1`
        // (this member waited for its release, or drained it, before starting this call).
        unsafe {
            shared.slots[self.rank].write_fields(seq, |post| {
                post.seq = seq;
                // A loop of light calls finds the post of its parity as the same call two calls
                // back left it: only `seq` changed. Every store here must drain before the
                // arrival's locked add, so the fields are compared (loads of this member's own
                // line) and written only when they differ: the barrier's 16 store instructions
                // into the post became 1 (objdump of `Member::barrier`, x86-64).
                if !post.holds_light(fields, extra) {
                    post.put_light(fields, extra);
                }
            })
        };
        if let Some(bits) = word {
            shared.entry.put_input(seq, self.rank, bits);
        }
        let signature = if shared.checked {
            self.light_signature(fields, op_code)
        } else {
            0
        };
        let shared: &TeamShared = &self.shared;
        Ok((seq, shared.entry.arrive(seq, shared.size, signature)))
    }

    /// The signature of a light call, from the member's cache when its last light call of the
    /// same path had the same key: the hash is a chain of dependent multiplies just before the
    /// arrival, a few nanoseconds of a barrier that costs about 45 ns on a 2-core AMD EPYC VM.
    #[inline(always)]
    fn light_signature(&self, fields: &Fields, op_code: u64) -> u64 {
        let key = LightKey {
            kind: fields.kind,
            mode: fields.mode,
            type_id: fields.type_id,
            op_code,
        };
        let place = if fields.kind == Kind::Barrier {
            LIGHT_BARRIER
        } else {
            1 - LIGHT_BARRIER
        };
        let cached = &self.light_signatures[place];
        match cached.get() {
            Some((was, signature)) if was == key => signature,
            _ => {
                let signature = signature::of_fields(fields, op_code, self.shared.signature_key);
                cached.set(Some((key, signature)));
                signature
            }
        }
    }

    /// The end of a light call: the wait for the release (none for the completer, who released
    /// it), then the meeting's failure, if any, as this member's error.
    #[inline(always)]
    fn light_end(&self, seq: u64, completed: bool) -> Result<()> {
        let shared: &TeamShared = &self.shared;
        if !completed {
            self.wait_for(
                shared.entry.release_word(seq),
                seq + 1,
                seq,
                true,
                Deadline::Never,
            )
            .map_err(|stop| stopped(shared, stop))?;
        }
        if shared.entry.failed.load(Ordering::Acquire) == seq + 1 {
            return Err(self.light_failure(seq));
        }
        Ok(())
    }

    /// The completion of a light call that is not plain: signatures that differ, or an error
    /// recorded for the call. Reads this member's post back and runs the engine's completion.
    #[cold]
    fn complete_light<T: Copy + Send + 'static>(
        &self,
        seq: u64,
        call: &Call<'_, T>,
        matched: bool,
    ) {
        // SAFETY: this member wrote its post of `seq` and is still within the call.
        let post = unsafe { self.shared.slots[self.rank].read_post(seq) };
        self.complete_entry(call, &post, matched);
    }

    /// The error of a light call whose meeting failed, as `progress` words it.
    #[cold]
    fn light_failure(&self, seq: u64) -> Error {
        // SAFETY: this member wrote its post of `seq` and is still within the call.
        let post = unsafe { self.shared.slots[self.rank].read_post(seq) };
        let error = self.error_of(seq);
        // A light call's own arguments are always valid.
        self.blame_others(&post, error)
    }
}
