//! The direct allreduce: a blocking [`allreduce`](HybridMember::allreduce) or
//! [`reduce`](HybridMember::reduce) with a built-in op, on a team that no process built with a
//! timeout, over one node's processes (no node hierarchy), checked or not.
//! It makes no allocation in steady state and moves the data the fewest times (a reduce runs as
//! an allreduce whose result only its root copies out):
//!
//! 1. **Meeting.** Each member posts its call's signature, its output's length and a pointer to
//!    its input in its own cache line and counts itself in. The last to arrive compares the
//!    posts as the engine does (the operator too, see below): a difference is every
//!    local member's [`Error::Mismatch`](crate::Error::Mismatch), an output of the wrong length
//!    every local member's [`Error::InvalidArgument`](crate::Error::InvalidArgument), and the
//!    other processes get zeros from this one, as on the engine's unchecked path. Otherwise:
//! 2. **Small arrays** (at most [`SMALL_BYTES`]): it combines the inputs, in local rank order,
//!    straight into the process's result buffer, allreduces that buffer in place with the other
//!    processes (`exchange.rs`; a team of one process makes no MPI call), and publishes it; each
//!    member copies it into its output.
//! 3. **Large arrays**: it hands the call to seed 003's reduction group for the element type
//!    and op ([`phasers::Reduction`], the code the threads' team runs too). With one process,
//!    the group allreduces the inputs straight into the outputs. With several, it reduces them
//!    into the leader's (local member 0's) own output, which the leader allreduces in place
//!    with the other processes and publishes; each other member copies it, and the leader
//!    returns once they all have. (A reduce goes through the process's result buffer instead,
//!    which its root copies.)
//!
//! With one member per process there is no meeting: the exchange reads the input and writes the
//! output (a reduce's other processes write into the result buffer).
//!
//! # Buffers and why they are safe
//!
//! The reduction groups, the result buffers and the exchange's scratch buffer are made or grown
//! on the first call of a type, op or length, then reused: no call after that allocates. The
//! result of call `k` lives in `results[k % 2]`, written by one member (the last arrival, or the
//! leader) once every member has arrived at call `k`. Every member has then finished copying
//! call `k - 2`'s result, the buffer's last use: a member's calls follow one another. (A result
//! of at most 56 bytes travels in the phase's own cache line instead, `StateLine`: by the same
//! argument, the next call's writer finds every member done with it.) Inputs are
//! read only while their members wait for the call's result, the leader's output only until
//! every member has counted its copy done, and nothing points into a member's buffers after its
//! call returns.
//!
//! # With the other calls
//!
//! A direct call takes its call number like any other and opens its slot for call `k + 2` (the
//! last arrival does: the slot is unused by the direct call, and every member left call `k - 2`
//! before arriving here). Every member of every process takes the same path for the same call:
//! the choice depends only on the team's agreed options and layout and on the call's type and
//! op, which a matched call shares. Small or large is each process's own choice; both send the
//! same messages.
//!
//! # Checked calls
//!
//! A checked team of several processes sends the engine's envelope before the data
//! (`direct_checked.rs`): the last arrival (or the only member) seals the process's signature,
//! its error if its members disagree or passed a wrong output, and its combined input where it
//! fits; every process learns whether all made the same call. A small call's result comes back
//! in the merged envelope; a larger one's data follows as above, or through the engine's own
//! stages where some process called through the engine (an `iallreduce`, say). Calls that
//! differ get [`Error::Mismatch`](crate::Error::Mismatch) on every member of every process.
//! Unchecked, a call that differs between processes is an erroneous program, as for every
//! unchecked call. Within a process the meeting compares everything, the operator too, checked
//! or not (so an unchecked team gets `Mismatch` here where the engine would return garbage).
//!
//! A member whose call takes the engine (a non-blocking call, a custom op, a gather) while the
//! others of its process took this path counts in where they do (`DirectShared::count_in`):
//! the count's last member publishes `REPOST`, and the direct path's members post their call to
//! the engine too, where it completes or fails as the engine decides.
//!
//! The reduction group may combine large float arrays in arrival order (see
//! [`phasers::reduce`]), so their results may differ in the last bits from call to call; every
//! member of every process still gets the same bits in one call.

use std::any::TypeId;
use std::sync::atomic::Ordering;

use mpi::datatype::Equivalence;
use phasers::{Element, Reducer, Reduction};

use std::sync::Arc;

use super::arrivals::{phase_word, Meeting, DONE, FAILED, LARGE, REPOST};
use super::direct_checked::{self, Contribution, Crossing};
use super::direct_state::{DirectMember, DirectShared, Posted};
use super::exchange;
use super::member::HybridMember;
use super::reducer::{self, is_bitwise, Builtin, ElementCode, Typed};
use super::shared::ProcessShared;
use super::signature::{compare, Kind, LocalError, Signature, MPI_MAX_BYTES};
use crate::error::{Error, Result};
use crate::progress::poll_until;

/// The largest call, in bytes, that the last arrival combines alone; larger ones go to the
/// reduction group, whose members share the work. Measured on the 2-core Xeon VM (1 process x 2
/// threads, `f64` sums, best of 5 rounds, two runs on a machine shared with other builds):
/// combined alone 3.0-3.3 us at 4 KiB, 7.3-11 us at 16 KiB, 12-24 us at 64 KiB; through the
/// group 4.3-5.4 us, 4.2-5.8 us, 2.9-3.8 us. Between the last size where the first wins and the
/// first where the second does.
pub(crate) const SMALL_BYTES: usize = 8 * 1024;

/// What one member brings to a direct call.
struct Call<'a, T> {
    shared: &'a ProcessShared,
    /// Whether the call is checked across processes: the team is checked and has several.
    checked: bool,
    local_rank: usize,
    number: u64,
    builtin: Builtin,
    input: &'a [T],
    /// `Allreduce`, or `Reduce` (to a root).
    kind: Kind,
    /// Whether this member takes the result: every member of an allreduce, a reduce's root.
    wants_output: bool,
    /// The reduce's root (0 for an allreduce) and the op's name, for the call's signature.
    root: usize,
    op_name: &'static str,
}

impl HybridMember {
    /// Runs a blocking allreduce (`root` `None`) or reduce to `root` on the direct path where it
    /// applies; `None` where the call takes the engine's path instead. A reduce runs as an
    /// allreduce whose result only the root keeps (with recursive halving, a reduce-scatter and
    /// gather would send as much).
    pub(super) fn direct_reduction<T: Element + Equivalence>(
        &mut self,
        root: Option<usize>,
        input: &[T],
        output: &mut [T],
        op: &phasers::Op<T>,
    ) -> Option<Result<()>> {
        let builtin = Builtin::of(op)?;
        let fits = std::mem::size_of_val(input) <= MPI_MAX_BYTES;
        // A bitwise op on floats, or a root out of range, is refused by every member alike on
        // the engine's path.
        let bad_root = root.is_some_and(|r| r >= self.parties());
        if !self.shared.direct_ok || !fits || (is_bitwise(op) && !T::INTEGER) || bad_root {
            return None;
        }
        if self.shared.is_broken() {
            return Some(Err(self.shared.broken_error()));
        }
        let number = self.next_call;
        self.next_call += 1;
        let kind = if root.is_some() {
            Kind::Reduce
        } else {
            Kind::Allreduce
        };
        let call = Call {
            shared: &self.shared,
            checked: self.shared.options.checked && self.shared.layout.counts.len() > 1,
            local_rank: self.local_rank,
            number,
            builtin,
            input,
            kind,
            wants_output: root.map_or(true, |r| r == self.rank),
            root: root.unwrap_or(0),
            op_name: op.name(),
        };
        let mut sig = Signature::new::<T>(kind, input.len(), root.unwrap_or(0));
        sig.op = op.name();
        if call.shared.local > 1 {
            let met = call.meet(sig, output, &mut self.direct);
            if met.is_none() {
                // Some member called through the engine: this call goes there too, counted in.
                self.next_call = number;
                self.direct.reposted = Some(number);
            }
            return met;
        }
        call.open_next_slot();
        if call.checked {
            return Some(call.alone_checked(sig, self.rank, output));
        }
        if call.wants_output && output.len() == input.len() {
            return Some(call.exchange(Some(input), output));
        }
        // The result goes nowhere (not the root), or the output is wrong: zeros go to the other
        // processes then, so they are not left waiting (as on the engine's path, which sends
        // zeros for a process whose call is wrong).
        let wrong = call
            .wants_output
            .then(|| wrong_output(&sig, self.rank, output.len()));
        let data = call.result_buffer(input.len());
        match wrong {
            Some(_) => data.fill(T::from_bits(0)),
            None => data.copy_from_slice(input),
        }
        let exchanged = call.exchange(None, data);
        Some(wrong.map_or(exchanged, Err))
    }
}

impl<T: Element + Equivalence> Call<'_, T> {
    fn direct(&self) -> &DirectShared {
        &self.shared.direct
    }

    /// Several members here: post, count in, and go on as the last arrival says; `None` when
    /// some member called through the engine, where this call must go too (see
    /// `DirectShared::count_in`).
    fn meet(
        &self,
        sig: Signature,
        output: &mut [T],
        handles: &mut DirectMember,
    ) -> Option<Result<()>> {
        let direct = self.direct();
        let cell = direct.posts[self.local_rank].0.get();
        // SAFETY: this member's own post; no one reads it until the count below completes the
        // call (see `DirectShared`'s `Sync`).
        unsafe {
            *cell = Some(Posted {
                sig,
                input: self.input.as_ptr().cast(),
                output_len: self.wants_output.then_some(output.len()),
            })
        };
        let phase = match direct.count_in(self.number, 1, self.shared.local) {
            Meeting::AllDirect => {
                self.open_next_slot();
                self.complete_meeting()
            }
            Meeting::Mixed => return None,
            // `AllEngine` cannot be this member's count, which is on the direct path.
            Meeting::Waiting | Meeting::AllEngine => {
                match self.wait_phase(&[DONE, FAILED, LARGE, REPOST]) {
                    Ok(phase) => phase,
                    Err(error) => return Some(Err(error)),
                }
            }
        };
        Some(match phase {
            DONE => {
                if self.wants_output {
                    self.copy_result(output);
                }
                Ok(())
            }
            LARGE => self.large(output, handles),
            REPOST => return None,
            _ => Err(self.failure()),
        })
    }

    /// The error of a call that reached `FAILED`.
    fn failure(&self) -> Error {
        self.direct()
            .failure()
            .unwrap_or_else(|| self.shared.broken_error())
    }

    /// The last arrival's work: compare, then combine a small call or hand a large one over.
    fn complete_meeting(&self) -> u64 {
        let direct = self.direct();
        let posts = || {
            direct.posts.iter().map(|cell| {
                // SAFETY: every member has posted for this call and waits for its phase.
                unsafe { (*cell.0.get()).as_ref() }
            })
        };
        let processes = self.shared.layout.counts.len();
        let process = (processes > 1).then(|| self.shared.process());
        let sigs = posts().flatten().map(|p| &p.sig);
        let first_rank = self.shared.first_rank();
        // The operator too, even unchecked: members with different ops would join different
        // reduction groups (large arrays) and wait for each other for ever.
        let error = compare(sigs, first_rank, process, true).or_else(|| {
            posts()
                .flatten()
                .enumerate()
                .find(|(_, p)| p.output_len.is_some_and(|len| len != p.sig.len))
                .map(|(i, p)| wrong_output(&p.sig, first_rank + i, p.output_len.unwrap_or(0)))
        });
        if self.checked {
            let sig = posts().flatten().next().map(|p| p.sig);
            return match sig {
                Some(sig) => self.complete_checked(&sig, error),
                // Unreachable: every member posted.
                None => self.publish(FAILED),
            };
        }
        if let Some(error) = error {
            let first = posts().flatten().next().map_or(0, |p| p.sig.block());
            let size = std::mem::size_of::<T>();
            if processes > 1 && first % size == 0 {
                // As on the engine's path: zeros of member 0's length go to the other processes,
                // so they are not left waiting.
                let zeros = self.result_buffer(first / size);
                zeros.fill(T::from_bits(0));
                // Unchecked: the exchange has no error of its own.
                let _ = self.exchange(None, zeros);
            }
            return direct.fail(self.number, error);
        }
        let bytes = std::mem::size_of_val(self.input);
        if bytes > SMALL_BYTES {
            return self.publish(LARGE);
        }
        let result = self.combine_posts();
        // Unchecked: the exchange has no error of its own.
        let _ = self.exchange(None, result);
        self.publish(DONE)
    }

    /// A checked call of this process's only member: the envelope carries the input (or the
    /// error of a wrong output) and, when it fits, brings the result back.
    fn alone_checked(&self, sig: Signature, rank: usize, output: &mut [T]) -> Result<()> {
        let wrong = (self.wants_output && output.len() != self.input.len())
            .then(|| wrong_output(&sig, rank, output.len()));
        let local_error = wrong.map(|error| LocalError {
            error,
            everywhere: false,
        });
        let data = if self.wants_output && local_error.is_none() {
            output
        } else {
            self.result_buffer(self.input.len())
        };
        let contribution = Contribution::Bytes(bytes_of(self.input));
        match self.envelope(&sig, local_error.as_ref(), contribution, data) {
            Crossing::Done => Ok(()),
            Crossing::Follows { engine } => {
                self.direct().engine_stages.store(engine, Ordering::Relaxed);
                self.exchange(Some(self.input), data)
            }
            Crossing::Failed(error) => Err(error),
        }
    }

    /// The envelope of this call (`direct_checked.rs`), with this process's `contribution`;
    /// `out` takes the merged payload.
    fn envelope(
        &self,
        sig: &Signature,
        local_error: Option<&LocalError>,
        contribution: Contribution<'_>,
        out: &mut [T],
    ) -> Crossing {
        let processes = self.shared.layout.counts.len();
        let missing = || {
            format!(
                "the other {} process(es) (the call's envelope)",
                processes - 1
            )
        };
        let wait = self
            .shared
            .wait_for(self.kind, self.number, DIRECT_WAITS_YIELD_EARLY, &missing);
        let typed = ElementCode::of::<T>().map(|code| (code, self.builtin));
        direct_checked::envelope(
            self.shared,
            sig,
            typed,
            local_error,
            contribution,
            bytes_of_mut(out),
            &wait,
        )
    }

    /// The last arrival's work on a checked call: the envelope with the process's error or its
    /// combined small input; then, where the data follows, the exchange (small) or the phase
    /// that hands the call to the reduction group (large).
    fn complete_checked(&self, sig: &Signature, error: Option<Error>) -> u64 {
        let direct = self.direct();
        let fail = |error: Error| direct.fail(self.number, error);
        if let Some(error) = error {
            let local = LocalError {
                error,
                everywhere: false,
            };
            return match self.envelope(sig, Some(&local), Contribution::Nothing, &mut []) {
                Crossing::Failed(error) => fail(error),
                // Unreachable: an error in the envelope makes every process's verdict an error.
                _ => fail(local.error),
            };
        }
        let large = std::mem::size_of_val(self.input) > SMALL_BYTES;
        let (out, contribution) = if large {
            (&mut [][..], Contribution::Nothing)
        } else {
            (self.combine_posts(), Contribution::Output)
        };
        match self.envelope(sig, None, contribution, out) {
            Crossing::Done => self.publish(DONE),
            Crossing::Follows { engine } => {
                direct.engine_stages.store(engine, Ordering::Relaxed);
                if large {
                    return self.publish(LARGE);
                }
                match self.exchange(None, out) {
                    Ok(()) => self.publish(DONE),
                    Err(error) => fail(error),
                }
            }
            Crossing::Failed(error) => fail(error),
        }
    }

    /// Combines the members' inputs, in local rank order, into this call's result buffer.
    #[allow(clippy::mut_from_ref)]
    fn combine_posts(&self) -> &mut [T] {
        let result = self.result_buffer(self.input.len());
        for (i, cell) in self.direct().posts.iter().enumerate() {
            // SAFETY: every member has posted for this call and waits for its phase.
            let Some(post) = (unsafe { (*cell.0.get()).as_ref() }) else {
                continue;
            };
            // SAFETY: every member posted an input of this type and length (compared by the
            // caller), borrowed until it returns, which it does not before this call's phase is
            // published.
            let input = unsafe { std::slice::from_raw_parts(post.input.cast::<T>(), result.len()) };
            if i == 0 {
                result.copy_from_slice(input);
            } else {
                self.builtin.accumulate(result, input, false);
            }
        }
        result
    }

    /// Publishes this call's `phase`; returns it.
    fn publish(&self, phase: u64) -> u64 {
        self.direct().publish(self.number, phase)
    }

    fn wait_phase(&self, phases: &[u64]) -> Result<u64> {
        wait_phase(self.shared, self.kind, self.number, phases)
    }

    /// A large call: the reduction group, then the leader's exchange. A team of one process
    /// allreduces straight into the outputs; otherwise the group reduces into the leader's
    /// output (a reduce: into the result buffer), whose result the others copy.
    fn large(&self, output: &mut [T], handles: &mut DirectMember) -> Result<()> {
        let shared = self.shared;
        let reducer = handles.reducer::<T>(shared, self.local_rank, self.builtin)?;
        if shared.layout.counts.len() == 1 && self.kind == Kind::Allreduce {
            return reducer
                .allreduce(self.input, output)
                .map(drop)
                .map_err(|e| self.group_failed(e));
        }
        // An allreduce: the leader's own output takes the result, and the others copy it from
        // there; a reduce: the result buffer, which only the root copies.
        let in_place = self.kind == Kind::Allreduce;
        if self.local_rank != 0 {
            reducer
                .reduce(self.input, &mut [])
                .map_err(|e| self.group_failed(e))?;
            self.wait_phase(&[DONE])?;
            if in_place {
                let source = self.direct().source.load(Ordering::Relaxed);
                // SAFETY: the leader published its output (`DONE`, after storing the pointer),
                // as long as this input and output, and returns only once every member has
                // counted its copy done below.
                let result =
                    unsafe { std::slice::from_raw_parts(source.cast::<T>(), output.len()) };
                output.copy_from_slice(result);
                self.direct().copied.0.fetch_add(1, Ordering::Release);
            } else if self.wants_output {
                self.copy_result(output);
            }
            return Ok(());
        }
        if !in_place {
            let result = self.result_buffer(self.input.len());
            reducer
                .reduce(self.input, result)
                .map_err(|e| self.group_failed(e))?;
            self.exchange(None, result)
                .map_err(|e| self.exchange_failed(e))?;
            self.publish(DONE);
            if self.wants_output {
                output.copy_from_slice(result);
            }
            return Ok(());
        }
        reducer
            .reduce(self.input, output)
            .map_err(|e| self.group_failed(e))?;
        self.exchange(None, output)
            .map_err(|e| self.exchange_failed(e))?;
        let direct = self.direct();
        // No other member counts for this call before it is published; the last call's all
        // counted before its leader returned.
        direct.copied.0.store(0, Ordering::Relaxed);
        direct
            .source
            .store(output.as_mut_ptr().cast(), Ordering::Relaxed);
        self.publish(DONE);
        let others = self.shared.local - 1;
        let missing = || "the members of this process to copy the call's result".to_owned();
        let wait = self
            .shared
            .wait_for(self.kind, self.number, DIRECT_WAITS_YIELD_EARLY, &missing);
        // No giving up here, even on a broken team: another member may be reading this output.
        // Every member is inside this call and copies without waiting for anything.
        poll_until(&wait, None, || {
            direct.copied.0.load(Ordering::Acquire) == others
        });
        Ok(())
    }

    /// The group's error as this call's; the team breaks in this process (members that handed
    /// their inputs over wait for a result that will not come).
    fn group_failed(&self, error: phasers::Error) -> Error {
        let shared = self.shared;
        if shared.is_broken() {
            return shared.broken_error();
        }
        let number = self.number;
        let kind = self.kind.name();
        shared.mark_broken(|| format!("{kind} (call {number}) failed: {error}"));
        Error::Core(error)
    }

    /// The error of the leader's exchange as this call's; the team breaks in this process (the
    /// other members wait for the result it was to publish).
    fn exchange_failed(&self, error: Error) -> Error {
        let (number, kind) = (self.number, self.kind.name());
        self.shared
            .mark_broken(|| format!("{kind} (call {number}) failed: {error}"));
        error
    }

    /// The first `len` elements of this call's result buffer, grown if needed: the phase's
    /// cache line where they fit, else `results[number % 2]`.
    #[allow(clippy::mut_from_ref)]
    fn result_buffer(&self, len: usize) -> &mut [T] {
        let bytes = len * std::mem::size_of::<T>();
        // SAFETY: only the member that completes this call's meeting, or the leader of a large
        // call, or the only member, asks for it, once every member has arrived (module docs).
        let words = unsafe { self.direct().result_words(self.number, bytes) };
        view_mut(words, len)
    }

    fn copy_result(&self, output: &mut [T]) {
        let bytes = std::mem::size_of_val(output);
        // SAFETY: the call's result was published (`DONE`), and this member has not arrived
        // at the next call.
        let words = unsafe { self.direct().published_words(self.number, bytes) };
        output.copy_from_slice(view(words, output.len()));
    }

    /// Allreduces `input` (or what `data` holds) into `data` with the other processes; with one
    /// process, `data` is the input. A checked call that some process made through the engine
    /// runs the engine's stages instead (`direct_checked.rs`).
    fn exchange(&self, input: Option<&[T]>, data: &mut [T]) -> Result<()> {
        let shared = self.shared;
        if let Some(input) = input {
            if shared.layout.counts.len() == 1
                || (self.checked && self.direct().engine_stages.load(Ordering::Relaxed))
            {
                data.copy_from_slice(input);
            }
        }
        if shared.layout.counts.len() == 1 {
            return Ok(());
        }
        let processes = shared.layout.counts.len();
        let missing = || {
            format!(
                "the other {} process(es) (the call's exchange)",
                processes - 1
            )
        };
        let wait = shared.wait_for(self.kind, self.number, DIRECT_WAITS_YIELD_EARLY, &missing);
        if self.checked && self.direct().engine_stages.load(Ordering::Relaxed) {
            let mut sig = Signature::new::<T>(self.kind, data.len(), self.root);
            sig.op = self.op_name;
            let reducer: Arc<dyn reducer::Reducer> = Arc::new(Typed::<T>::new(self.builtin.op()));
            return direct_checked::engine_stages(
                shared,
                &sig,
                Some(reducer),
                bytes_of_mut(data),
                &wait,
            );
        }
        // SAFETY: one member per process runs a call's exchange, once every member arrived, and
        // the next call's exchange cannot start before this one ends (see the field's docs).
        let scratch = unsafe { &mut *self.direct().scratch.0.get() };
        exchange::allreduce(
            &shared.layout.flat,
            input,
            data,
            scratch,
            self.builtin,
            &wait,
        );
        Ok(())
    }

    fn open_next_slot(&self) {
        open_next_slot(self.shared, self.number);
    }
}

/// Waits until direct call `number` of `kind` reaches one of `phases`; the team's broken error
/// when it breaks first. A team breaks only while some member is outside the call (a member
/// dropped, an error of the reduction group published as broken), so no one reads the waiting
/// member's buffers after it leaves.
pub(super) fn wait_phase(
    shared: &ProcessShared,
    kind: Kind,
    number: u64,
    phases: &[u64],
) -> Result<u64> {
    let state = &shared.direct.state.0.phase;
    let reached = || {
        let now = state.load(Ordering::Acquire);
        phases
            .iter()
            .copied()
            .find(|&p| now == phase_word(number, p))
    };
    let first = shared.first_rank();
    let local = shared.local;
    let missing = || {
        format!(
            "the members of this process (ranks {first} to {}) to finish the call",
            first + local - 1
        )
    };
    let wait = shared.wait_for(kind, number, DIRECT_WAITS_YIELD_EARLY, &missing);
    poll_until(&wait, None, || reached().is_some() || shared.is_broken());
    reached().ok_or_else(|| shared.broken_error())
}

/// Every member has arrived at direct call `number`, so every member left call `number - 2`:
/// its slot may take call `number + 2`.
pub(super) fn open_next_slot(shared: &ProcessShared, number: u64) {
    shared.slots[(number % 2) as usize]
        .open_for
        .store(number + 2, Ordering::Release);
}

impl DirectMember {
    /// This member's handle in the process's reduction group for `T` and `builtin`; the first
    /// member that needs the group makes it.
    fn reducer<T: Element + Equivalence>(
        &mut self,
        shared: &ProcessShared,
        local_rank: usize,
        builtin: Builtin,
    ) -> Result<&mut Reducer<T>> {
        let id = TypeId::of::<T>();
        let at = self
            .reducers
            .iter()
            .position(|(t, b, _)| *t == id && *b == builtin);
        let at = match at {
            Some(at) => at,
            None => {
                let handle = join::<T>(shared, local_rank, builtin)?;
                self.reducers.push((id, builtin, Box::new(handle)));
                self.reducers.len() - 1
            }
        };
        self.reducers[at]
            .2
            .downcast_mut::<Reducer<T>>()
            .ok_or_else(|| Error::invalid("a reduction handle of another element type"))
    }
}

/// `local_rank`'s handle in the process's group for `T` and `builtin`, made by the first
/// member that needs it.
fn join<T: Element + Equivalence>(
    shared: &ProcessShared,
    local_rank: usize,
    builtin: Builtin,
) -> Result<Reducer<T>> {
    let mut groups = shared
        .direct
        .groups
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let id = TypeId::of::<T>();
    let found = groups
        .iter()
        .find(|(t, b, _)| *t == id && *b == builtin)
        .and_then(|(_, _, group)| group.downcast_ref::<Reduction<T>>());
    if let Some(group) = found {
        return Ok(group.participant(local_rank)?);
    }
    // Member 0 is the root of the process's reduce (the leader), the builder's default.
    let group = Reduction::<T>::builder(shared.local)
        .op(builtin.op())
        .build()?;
    let handle = group.participant(local_rank)?;
    groups.push((id, builtin, Box::new(group)));
    Ok(handle)
}

/// The error of a member whose output is not as long as its input, as the engine words it.
fn wrong_output(sig: &Signature, rank: usize, len: usize) -> Error {
    let what = if sig.kind == Kind::Reduce {
        "root's output"
    } else {
        "output"
    };
    Error::invalid(format!(
        "{} on member {rank}: the {what} has {len} elements but must have {} (as long as the \
         input)",
        sig.kind.name(),
        sig.len
    ))
}

/// How a direct call waits, for this process's other members or for the other processes: as an
/// oversubscribed one ([`ProcessShared::wait_for`]).
///
/// Every wait polls briefly, then yields, as if the node were oversubscribed even where it is
/// not: a sibling thread or a partner process that loses its core to another program (or to
/// ranks napping beside a row, as the benchmark's idle ranks do) is then not held up by a waiter
/// spinning through the full budget of `progress.rs` (4 000 polls, each an MPI test here).
/// Measured with the benchmark on the 2-core Xeon VM, one `u64`, on a machine shared with other
/// builds: the 1 process x 2 threads row took 66-70 us a call spinning first (np 4 beside three
/// napping ranks, and np 2 under load) against 0.32-0.40 us yielding early, and 0.34-0.52 us
/// against 0.36 us when quiet; the 2 processes x 1 thread row took 230-290 us a call in two
/// loaded runs spinning first, and 0.41-0.49 us yielding (`MPI_Allreduce` 0.43-0.45 us).
pub(super) const DIRECT_WAITS_YIELD_EARLY: bool = true;

/// The first `len` elements of `words`.
fn view<T: Element>(words: &[u64], len: usize) -> &[T] {
    const { assert!(std::mem::align_of::<T>() <= 8) };
    assert!(len * std::mem::size_of::<T>() <= words.len() * 8);
    // SAFETY: `words` is 8-byte aligned (enough for every `Element`, checked above) and holds at
    // least `len` elements' worth of initialized bytes (asserted); every bit pattern is a valid
    // integer or float, the only `Element` types.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<T>(), len) }
}

fn view_mut<T: Element>(words: &mut [u64], len: usize) -> &mut [T] {
    const { assert!(std::mem::align_of::<T>() <= 8) };
    assert!(len * std::mem::size_of::<T>() <= words.len() * 8);
    // SAFETY: as for `view`, borrowed mutably through `words`.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<T>(), len) }
}

/// `values`' bytes.
fn bytes_of<T: Element>(values: &[T]) -> &[u8] {
    // SAFETY: integers and floats (the only `Element` types) have no padding, so every byte is
    // initialized; the view borrows `values`.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// `values`' bytes, writable: every bit pattern is a valid integer or float.
fn bytes_of_mut<T: Element>(values: &mut [T]) -> &mut [u8] {
    let len = std::mem::size_of_val(values);
    // SAFETY: as for `bytes_of`; any bytes written make valid `T`s.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), len) }
}
