//! The steps every collective call goes through: post, meet, move data, (meet again), finish.
//!
//! 1. **Post.** The member waits until others are done with its previous post or staged copy,
//!    writes its arguments (and an inline payload, or a staged copy of its input) into its slot,
//!    and arrives at the call's opening meeting. A member whose own arguments are bad records its
//!    error first, so the meeting fails for everyone.
//! 2. **Meet.** The last arrival completes the meeting: in a checked team it compares the sum of
//!    the members' signatures, carried in their arrivals, with its own (see `signature`); it
//!    reads every post when they differ, to name the difference, and whenever the call needs the
//!    posts (inline payloads, splits, `barrier_checked`). It then computes an inline result or a
//!    split, and releases the others.
//! 3. **Move.** Each member reads the buffers it needs from the others' posts, after checking each
//!    post describes the same call, and writes its own outputs (the linear reduction also writes
//!    its share into the others' outputs). It then tells each partner it is done with it.
//! 4. **Meet again** (`AllSync` only), so that no member returns before all are done.
//! 5. **Finish.** A member whose own buffers others used waits until all of them said they are
//!    done; this wait never gives up, because they always finish (nothing they do waits for
//!    anyone). Then the call's first recorded error, if any, is every member's result.
//!
//! Each owner waits for the readers its own post names. When posts differ (possible only in an
//! unchecked team), a member may be counted as a reader by an owner it does not read: it settles
//! that debt after a call that recorded an error, and when it is dropped
//! (`Member::settle_debts`), so the owner's wait still ends.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::builder::CHECKED_ENV;
use super::call::Call;
use super::combiner::Combiner;
use super::kind::{readers, Kind, Path};
use super::member::{stopped, InFlight, Member, Step};
use super::post::{Post, INLINE_BYTES};
use super::shared::TeamShared;
use super::signature;
use super::sync_mode::SyncMode;
use crate::error::{Error, Result};
use crate::primitive::Ordering;
use crate::reduce::ReduceAlgorithm;
use crate::wait::{Deadline, Stop};

/// How far [`Member::progress`] may wait for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Until {
    /// Not at all: stop where the call would wait (`Pending::test`).
    NoWait,
    /// Until the deadline passes; with [`Deadline::Never`], to the end of the call. With
    /// [`Deadline::Task`], one poll of an async task ([`CollectiveFuture`](super::CollectiveFuture)):
    /// each wait looks once and stores the task's waker (see [`Member::wait_for`]), and a staged
    /// call also waits for its readers before it ends (see [`progress`](Member::progress)).
    Deadline(Deadline),
}

impl Until {
    /// To the end of the call: the blocking collectives and `Pending::wait`.
    pub(crate) const END: Until = Until::Deadline(Deadline::Never);
}

impl Member {
    /// Posts `call` and arrives at its meeting.
    pub(crate) fn start<T: Copy + Send + 'static>(
        &mut self,
        call: &Call<'_, T>,
        nonblocking: bool,
    ) -> Result<()> {
        self.drain();
        let shared: &TeamShared = &self.shared;
        if shared.broken.is_broken_for(self.seq) {
            return Err(shared.broken_error());
        }
        // For stall reports: this member has begun call `seq`, so a member missing from the
        // roster of a call has not begun it. A `Relaxed` store to a line only this member writes.
        shared.roster.arrive(self.rank, self.seq);
        let slot = &shared.slots[self.rank];
        self.wait_for(
            &slot.touched,
            self.expected,
            self.seq,
            true,
            Deadline::Never,
        )
        .map_err(|stop| stopped(shared, stop))?;

        let seq = self.seq;
        self.seq += 1;
        let (mut post, error) = self.make_post(call, seq, nonblocking);
        if post.path == Path::Pull && post.staged {
            // SAFETY: this member's readers are done (the wait above), and `T`'s alignment
            // is at most the staging area's (`make_post` refuses larger ones).
            post.input = unsafe { slot.stage(call.input_slice_for_staging()) };
        }
        self.post_and_arrive(call, &post, error, true);
        Ok(())
    }

    /// This member's post for `call`, numbered `seq`, with its inline payload, and the error of
    /// its own arguments if any (the post then says so, and takes no path).
    #[inline(always)]
    fn make_post<T: Copy + Send + 'static>(
        &self,
        call: &Call<'_, T>,
        seq: u64,
        nonblocking: bool,
    ) -> (Post, Option<Error>) {
        let mut error = call.local_error.clone();
        if error.is_none() && std::mem::align_of::<T>() > std::mem::align_of::<super::post::Chunk>()
        {
            error = Some(Error::invalid(format!(
                "{} on member {}: the element type {} is aligned to {} bytes; team collectives \
                 support alignments up to 64",
                call.kind,
                self.rank,
                std::any::type_name::<T>(),
                std::mem::align_of::<T>()
            )));
        }
        let staged = nonblocking || self.mode == SyncMode::NoSync;
        let path = if error.is_some() {
            Path::None
        } else {
            self.path_of(call, staged)
        };

        let mut post = Post::empty();
        post.seq = seq;
        post.count = call.count;
        post.root = call.root;
        post.type_id = std::any::TypeId::of::<T>();
        post.kind = call.kind;
        post.path = path;
        post.mode = self.mode;
        post.invalid = error.is_some();
        post.staged = staged;
        post.blocking = !nonblocking;
        post.value = call.value;
        post.color = call.color;
        post.key = call.key;
        post.op = call.op_name();
        post.type_name = std::any::type_name::<T>();
        post.input = call.input.cast();
        post.input_len = call.input_len;
        post.output = call.output.cast();
        post.output_len = call.output_len;
        if path == Path::Inline {
            let carries = call.kind != Kind::Broadcast || call.root == self.rank;
            if carries {
                let bytes = call.count * std::mem::size_of::<T>();
                // SAFETY: `bytes <= INLINE_BYTES` (the inline path's condition) and the input
                // holds `count` elements (checked by the collective); the chunk is aligned to 64.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        call.input.cast::<u8>(),
                        post.inline.0.as_mut_ptr(),
                        bytes,
                    )
                };
            }
        }
        (post, error)
    }

    /// How `call`'s data moves, for a call whose arguments are good: what every member of the
    /// same call computes alike (see `Path`).
    #[inline]
    fn path_of<T: Copy>(&self, call: &Call<'_, T>, staged: bool) -> Path {
        let bytes = call.count.saturating_mul(std::mem::size_of::<T>());
        match call.kind {
            Kind::Barrier | Kind::BarrierChecked | Kind::Split => Path::None,
            Kind::Broadcast | Kind::Reduce | Kind::Allreduce if bytes <= INLINE_BYTES => {
                Path::Inline
            }
            Kind::Reduce | Kind::Allreduce if !staged => {
                let grouped = self.shared.reduce_algorithm != ReduceAlgorithm::Linear
                    && call.op.as_ref().is_some_and(Combiner::runs_in_group);
                if grouped {
                    Path::Group
                } else {
                    Path::Linear
                }
            }
            _ => Path::Pull,
        }
    }

    /// Writes `post` into this member's slot, records its own error, and arrives at the call's
    /// opening meeting, completing and releasing it if it is the last. A one-word call leaves
    /// its input in the meeting first (see [`word_call`]). `keep`: the call goes on in
    /// [`progress`](Self::progress), so its state is kept in the member.
    #[inline]
    fn post_and_arrive<T: Copy + Send + 'static>(
        &mut self,
        call: &Call<'_, T>,
        post: &Post,
        error: Option<Error>,
        keep: bool,
    ) {
        let shared: &TeamShared = &self.shared;
        let seq = post.seq;
        let word = word_call(shared, call, post);
        let slot = &shared.slots[self.rank];
        // SAFETY: this member owns the slot, and every member has arrived at call `seq - 1`
        // (this member waited for its release, or drained it, before starting this call).
        unsafe {
            if keep {
                slot.write_post(post);
            } else {
                slot.write_light_post(post, post.path == Path::Inline && !word);
            }
        }
        if let Some(error) = error {
            shared.record_error(seq, error);
        }
        if word {
            // SAFETY: a word call holds one element of at most 8 bytes (`word_call`), and the
            // input holds `count` elements (checked by the collective, else the post is invalid
            // and the call is no word call).
            let value = unsafe { call.input.read() };
            shared.entry.put_input(seq, self.rank, to_bits(value));
        }
        let signature = if shared.checked {
            signature::of(post, call.op_code(), shared.signature_key)
        } else {
            0
        };
        if keep {
            // `run_light` holds the post itself: its call ends right after the meeting.
            self.in_flight = Some(InFlight {
                post: *post,
                staged: post.staged,
                step: Step::Entry,
                panic: None,
            });
        }
        let shared: &TeamShared = &self.shared;
        if let Some(matched) = shared.entry.arrive(seq, shared.size, signature) {
            self.complete_entry(call, post, matched);
            shared.entry.release(seq);
        }
    }

    /// A blocking call whose data travels inside its opening meeting, or that has none: a barrier,
    /// and a broadcast or reduction of up to [`INLINE_BYTES`]. Its whole protocol is the meeting,
    /// so it skips what only calls that use each other's buffers need: the wait for this member's
    /// readers (it stages nothing and lends no buffer), the call's state in the member, and the
    /// steps after the meeting. It keeps every check: the broken state before it starts and in
    /// the wait (on the waiter's slow path, as the barrier does), the signature in the arrival,
    /// and the meeting's failure after it.
    pub(crate) fn run_light<T: Copy + Send + 'static>(&mut self, call: &Call<'_, T>) -> Result<()> {
        self.drain();
        let shared: &TeamShared = &self.shared;
        if shared.broken.is_broken_for(self.seq) {
            return Err(shared.broken_error());
        }
        shared.roster.arrive(self.rank, self.seq);
        let seq = self.seq;
        self.seq += 1;
        let (post, error) = self.make_post(call, seq, false);
        debug_assert!(matches!(post.path, Path::None | Path::Inline));
        self.post_and_arrive(call, &post, error, false);
        let shared: &TeamShared = &self.shared;
        let release = shared.entry.release_word(seq);
        self.wait_for(release, seq + 1, seq, true, Deadline::Never)
            .map_err(|stop| stopped(shared, stop))?;
        if shared.entry.failed.load(Ordering::Acquire) == seq + 1 || post.invalid {
            let error = self.error_of(seq);
            return Err(if post.invalid {
                error
            } else {
                self.blame_others(&post, error)
            });
        }
        if post.path == Path::Inline {
            return self.copy_inline_result(call, &post).map_err(|error| {
                // As in `progress`: every member of the call fails with it.
                shared.record_error(seq, error);
                self.settle_debts(&post);
                self.error_of(seq)
            });
        }
        Ok(())
    }

    /// Takes the call as far as it can go: until it would wait (`Until::NoWait`), or until it
    /// is over or the deadline passes. Returns the call's result once it is over, and `None`
    /// while it is not: the call stays where it was, and a later `progress` picks it up there.
    ///
    /// A deadline is only ever passed on to [`wait_for`](Member::wait_for), the same wait as
    /// without one, so a wait that times out has changed nothing the others see: each step
    /// below either waits for a signal (reads only) or, once the signal is there, acts and moves
    /// on to the next step.
    pub(crate) fn progress<T: Copy + Send + 'static>(
        &mut self,
        call: &Call<'_, T>,
        until: Until,
    ) -> Option<Result<()>> {
        let shared: &TeamShared = &self.shared;
        let (blocking, deadline) = match until {
            Until::NoWait => (false, Deadline::Never),
            Until::Deadline(deadline) => (true, deadline),
        };
        let task = matches!(deadline, Deadline::Task(_));
        loop {
            let flight = self.in_flight.as_ref()?;
            let post = flight.post;
            match flight.step {
                Step::Entry => {
                    if blocking {
                        match self.wait_for(
                            shared.entry.release_word(post.seq),
                            post.seq + 1,
                            post.seq,
                            true,
                            deadline,
                        ) {
                            Ok(()) => {}
                            Err(Stop::TimedOut) => return None,
                            Err(stop) => {
                                return finish(&mut self.in_flight, Err(stopped(shared, stop)))
                            }
                        }
                    } else if !shared.entry.is_released(post.seq) {
                        // A poll reports what the wait would: the break, once the meeting can no
                        // longer be released (the same second look as `wait_for`'s).
                        if !self.broken_before(&shared.entry, post.seq, post.seq) {
                            return None;
                        }
                        return finish(&mut self.in_flight, Err(stopped(shared, Stop::Broken)));
                    }
                    let failed = shared.entry.failed.load(Ordering::Acquire);
                    if failed == post.seq + 1 || post.invalid {
                        let mut error = self.error_of(post.seq);
                        if !post.invalid {
                            error = self.blame_others(&post, error);
                        }
                        return finish(&mut self.in_flight, Err(error));
                    }
                    match post.path {
                        Path::None => return finish(&mut self.in_flight, Ok(())),
                        Path::Inline => {
                            let outcome = self.copy_inline_result(call, &post).map_err(|error| {
                                // Every member of the call fails with it, not only this one;
                                // and the others, whose posts differ, may count this member as
                                // a reader of theirs.
                                shared.record_error(post.seq, error);
                                self.settle_debts(&post);
                                self.error_of(post.seq)
                            });
                            return finish(&mut self.in_flight, outcome);
                        }
                        Path::Pull | Path::Linear | Path::Group => {
                            // Counted only now: after a failed meeting nobody touches anything.
                            self.expected +=
                                readers(post.kind, post.path, post.root, self.rank, shared.size);
                            let panic = self.move_data(call, &post);
                            self.touch_partners(&post);
                            if shared.error_for(post.seq).is_some() {
                                // Some post may differ from this member's (a mismatch is
                                // recorded as the call's error), so some owner may count this
                                // member as a reader although it reads nothing of theirs.
                                self.settle_debts(&post);
                            }
                            let next = if post.closes_with_meeting() {
                                let exit = self.exits;
                                self.exits += 1;
                                if shared.exit.arrive(exit, shared.size, 0).is_some() {
                                    shared.exit.release(exit);
                                }
                                Step::Exit { exit }
                            } else {
                                Step::Finish
                            };
                            let flight = self.in_flight.as_mut()?;
                            flight.step = next;
                            flight.panic = panic;
                        }
                    }
                }
                Step::Exit { exit } => {
                    if blocking {
                        // A member that passed the opening meeting and skipped this one (its
                        // call differed, in an unchecked team) breaks the team from this call
                        // when it is dropped; this wait then gives up, the call fails for all,
                        // and the finish below still waits for this member's readers, which
                        // always come, before returning.
                        let exit_release = shared.exit.release_word(exit);
                        match self.wait_for(exit_release, exit + 1, post.seq, true, deadline) {
                            Ok(()) => {}
                            Err(Stop::TimedOut) => return None,
                            Err(stop) => shared.record_error(post.seq, stopped(shared, stop)),
                        }
                    } else if !shared.exit.is_released(exit) {
                        if !self.broken_before(&shared.exit, exit, post.seq) {
                            return None;
                        }
                        shared.record_error(post.seq, stopped(shared, Stop::Broken));
                    }
                    self.in_flight.as_mut()?.step = Step::Finish;
                }
                Step::Finish => {
                    // A task also waits for the readers of a staged call, which a thread leaves
                    // to its next call's start: that start would block the task's thread, and the
                    // readers may be tasks queued behind it on the same executor.
                    if !flight.staged || task {
                        // Unchecked, so it never gives up on a break: only its deadline ends it.
                        let slot = &shared.slots[self.rank];
                        let touched =
                            self.wait_for(&slot.touched, self.expected, post.seq, false, deadline);
                        if touched.is_err() {
                            return None;
                        }
                    }
                    let outcome = match shared.error_for(post.seq) {
                        Some(error) => Err(error),
                        None => Ok(()),
                    };
                    return finish(&mut self.in_flight, outcome);
                }
            }
        }
    }

    /// Whether a poll of `meeting`'s release number `index` (in call `seq`) must give up: the
    /// team is broken from `seq` or earlier and the meeting is still not released. The release
    /// is read again after the broken state, as [`wait_for`](Member::wait_for) does, so a
    /// meeting released just before the break still counts as released.
    fn broken_before(&self, meeting: &super::meeting::Meeting, index: u64, seq: u64) -> bool {
        self.shared.broken.is_broken_for(seq) && !meeting.is_released(index)
    }

    /// The call's error as this member, whose own arguments were valid, should read it: when the
    /// error is another member's bad argument, it says so and names every member whose arguments
    /// were bad, before that member's own message. Reads every post, on a failed call only.
    #[cold]
    pub(crate) fn blame_others(&self, post: &Post, error: Error) -> Error {
        let Error::InvalidArgument { message } = &error else {
            return error;
        };
        let shared = &*self.shared;
        let culprits: Vec<usize> = (0..shared.size)
            .filter(|&rank| {
                // SAFETY: the meeting of call `post.seq` is released, so every member posted for
                // it, and none writes that parity again before every member, this one included,
                // arrives at call `post.seq + 1`, which this member has not begun.
                let theirs = unsafe { shared.slots[rank].read_post(post.seq) };
                theirs.seq == post.seq && theirs.invalid
            })
            .collect();
        if culprits.is_empty() {
            return error;
        }
        let whose = match &culprits[..] {
            [one] => format!("member {one}'s arguments were"),
            many => format!("the arguments of members {many:?} were"),
        };
        Error::invalid(format!(
            "{} failed on every member because {whose} invalid; the arguments of member {} (this \
             one) were valid, so fix the call on {}. What was wrong: {message}",
            post.kind,
            self.rank,
            if culprits.len() == 1 {
                "that member"
            } else {
                "those members"
            },
        ))
    }

    /// The error for a timed wait on the call in flight that gave up: the call's number on this
    /// team, and the members that have not begun it (from the roster `start` keeps: one load per
    /// member, paid only on a timeout).
    #[cold]
    pub(crate) fn timed_out(&self) -> Error {
        let seq = self
            .in_flight
            .as_ref()
            .map_or(self.seq.saturating_sub(1), |flight| flight.post.seq);
        Error::Timeout {
            episode: seq,
            missing: self.shared.roster.missing(seq),
            resumable: true,
        }
    }

    /// The error recorded for call `seq`; every failed call has one.
    ///
    /// Errors are kept for the last few calls, and a member is at most one call behind another
    /// (every call opens with a meeting of all), so the error is always still there; the fallback
    /// below only keeps this a typed error should that ever change.
    pub(crate) fn error_of(&self, seq: u64) -> Error {
        self.shared.error_for(seq).unwrap_or_else(|| {
            Error::invalid(format!(
                "call {seq} on this team failed on another member, and its error is no longer \
                 kept; the other members' results for that call say what went wrong"
            ))
        })
    }

    /// Copies the meeting's inline result into this member's output, where it has one.
    fn copy_inline_result<T: Copy>(&self, call: &Call<'_, T>, post: &Post) -> Result<()> {
        let wants = match post.kind {
            Kind::Broadcast => post.root != self.rank,
            Kind::Reduce => post.root == self.rank,
            Kind::Allreduce => true,
            _ => false,
        };
        if !wants {
            return Ok(());
        }
        let shared = &*self.shared;
        if word_call(shared, call, post) {
            // SAFETY: a word call's `T` is an `Element` of at most 8 bytes (`word_call`); the
            // completer wrote the word before the release this member saw, and the next one
            // writes it only after this member arrives at the next meeting.
            let value: T = unsafe { from_bits(shared.entry.word(post.seq)) };
            // SAFETY: the output holds `count` = 1 element (checked by the collective).
            unsafe { call.output.write(value) };
            return Ok(());
        }
        // SAFETY: the meeting of call `post.seq` is released and the next meeting's completer
        // writes the result only after this member arrives there.
        let result = shared.entry.result.with(|r| unsafe { *r });
        if result.seq != post.seq || result.count != post.count || result.type_id != post.type_id {
            // Only an unchecked team gets here: a checked one compares every call at the meeting.
            return Err(Error::invalid(format!(
                "{} of {} elements on member {}: the other members' calls did not match this one \
                 (a different collective, length or element type), so no result was made for it. \
                 This team is unchecked (`TeamBuilder::unchecked` or {CHECKED_ENV}=off), so the \
                 difference was not caught before the call; build the team checked to get \
                 Error::Mismatch naming both members",
                post.kind, post.count, self.rank
            )));
        }
        // SAFETY: the result holds `count` elements of `T` (same type and count, checked above),
        // and the output holds `count` (checked by the collective).
        unsafe {
            std::ptr::copy_nonoverlapping(
                result.data.0.as_ptr().cast::<T>(),
                call.output,
                post.count,
            )
        };
        Ok(())
    }

    /// Runs `op` on `dest` and `src`, catching a panic so the call's duties to the others can
    /// still be done; the panic is returned to be resumed at the end of the call.
    pub(crate) fn run_op<T: Copy>(
        &self,
        seq: u64,
        op: &Combiner<'_, T>,
        dest: &mut [T],
        src: &[T],
    ) -> Result<(), Box<dyn std::any::Any + Send>> {
        catch_unwind(AssertUnwindSafe(|| op.apply(dest, src))).inspect_err(|_| {
            self.shared.record_error(
                seq,
                Error::Broken {
                    by: self.rank,
                    episode: seq,
                },
            );
        })
    }
}

/// Ends the call in flight with `outcome`, resuming its operator's panic if there was one.
fn finish(in_flight: &mut Option<InFlight>, outcome: Result<()>) -> Option<Result<()>> {
    let flight = in_flight.take()?;
    if let Some(panic) = flight.panic {
        std::panic::resume_unwind(panic);
    }
    Some(outcome)
}

/// Whether `post`'s call is a one-word call: an allreduce of one element of at most 8 bytes with a
/// built-in op, in a checked team. Each member then leaves its input in its cell of the opening
/// meeting instead of the completer reading it from every post, and the completer leaves the
/// result next to the release word, so that the call moves the same cache lines as a barrier.
///
/// Every member of a matched call agrees on this: the team's checking is the team's, and the kind,
/// count, element type and operator (built-in or not) are in the signature. A member whose call
/// differs makes the meeting fail before anyone reads a cell. Built-in ops take only
/// [`Element`](crate::Element) types (integers and floats), for which every bit pattern is a
/// value, so a cell is always safe to read as the completer's `T`, even were two signatures to
/// collide.
#[inline]
pub(crate) fn word_call<T: Copy>(shared: &TeamShared, call: &Call<'_, T>, post: &Post) -> bool {
    shared.checked
        && post.kind == Kind::Allreduce
        && post.path == Path::Inline
        && post.count == 1
        && std::mem::size_of::<T>() <= std::mem::size_of::<u64>()
        && call.op.as_ref().is_some_and(Combiner::runs_in_group)
}

/// `value`'s bytes in the low bytes of a word (the rest zero); `T` has at most 8 bytes.
#[inline]
pub(crate) fn to_bits<T: Copy>(value: T) -> u64 {
    debug_assert!(std::mem::size_of::<T>() <= 8);
    let mut bits = 0u64;
    // SAFETY: `T` has at most 8 bytes (every caller's `word_call`), which the word holds.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&value as *const T).cast::<u8>(),
            (&mut bits as *mut u64).cast::<u8>(),
            std::mem::size_of::<T>(),
        )
    };
    bits
}

/// The `T` whose bytes [`to_bits`] put in `bits`.
///
/// # Safety
///
/// `T` has at most 8 bytes and every bit pattern of its size is a `T` (an
/// [`Element`](crate::Element): see [`word_call`]).
#[inline]
pub(crate) unsafe fn from_bits<T: Copy>(bits: u64) -> T {
    let mut value = std::mem::MaybeUninit::<T>::uninit();
    // SAFETY: the caller's contract: the word holds `size_of::<T>()` bytes, all of them a `T`.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&bits as *const u64).cast::<u8>(),
            value.as_mut_ptr().cast::<u8>(),
            std::mem::size_of::<T>(),
        );
        value.assume_init()
    }
}

impl<T> Call<'_, T> {
    /// The input a member stages: the whole input.
    fn input_slice_for_staging(&self) -> &[T] {
        // SAFETY: the input is borrowed for the call and not written during it.
        unsafe { self.input_slice() }
    }
}
