//! One participant's handle, and the steps every call goes through whatever the algorithm.

use std::mem::MaybeUninit;

use super::algorithm::ReduceAlgorithm;
use super::auto;
use super::job::Panic;
use super::shared::Shared;
use super::signature::{self, Signature, KIND_ALLREDUCE, KIND_REDUCE};
use super::slot::{tag, CALLED, OFFERED, WITHDRAWN};
use super::{dynamic_group, dynamic_pairs, linear, static_tree};
use crate::error::Result;
use crate::primitive::{Arc, Ordering};
use crate::wait::{Deadline, Signal, SpinBudget, Stall, Stop, Waiter, Watch, Watched, Wording};

/// One participant of a [`Reduction`](crate::Reduction): its rank and private state.
///
/// ```
/// use phasers::{Op, Reducer, Reduction};
///
/// let group = Reduction::<u64>::new(2, Op::Sum)?;
/// let handles: Vec<Reducer<u64>> = group.participants();
/// std::thread::scope(|s| {
///     for mut p in handles {
///         // Each handle moves to the thread that uses it.
///         s.spawn(move || {
///             let mut out = [0];
///             p.allreduce(&[p.rank() as u64 + 1], &mut out).unwrap();
///             assert_eq!(out, [3]);
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// A handle is `Send` and used by one thread at a time. Dropping it while others still count on
/// it (before the group's last call, or while its thread panics) breaks the group: their calls
/// return [`Error::Broken`](crate::Error::Broken) instead of waiting forever.
pub struct Reducer<T> {
    pub(crate) shared: Arc<Shared<T>>,
    pub(crate) rank: usize,
    pub(crate) episode: u64,
    job_seq: u64,
    scratch: Vec<MaybeUninit<T>>,
    /// The linear algorithm's lists of every input and output address, kept between calls.
    pub(crate) pointers: Vec<usize>,
    budget: SpinBudget,
}

/// What a call did: its number, the algorithm that ran, and whether this participant's output
/// holds the result.
///
/// ```
/// use phasers::{Op, ReduceAlgorithm, Reduction};
///
/// let group = Reduction::<u32>::builder(2)
///     .op(Op::Sum)
///     .algorithm(ReduceAlgorithm::Linear)
///     .build()?;
/// std::thread::scope(|s| {
///     for mut p in group.participants() {
///         s.spawn(move || {
///             let outcome = p.allreduce(&[1], &mut [0]).unwrap();
///             assert_eq!(outcome.episode(), 0);
///             assert_eq!(outcome.algorithm(), ReduceAlgorithm::Linear);
///             assert!(outcome.has_result());
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceOutcome {
    episode: u64,
    algorithm: ReduceAlgorithm,
    has_result: bool,
}

impl ReduceOutcome {
    /// The call's number, counted from 0 for each group.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::new(2, Op::Sum)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             for call in 0..3 {
    ///                 let mut out = [0];
    ///                 let outcome = p.allreduce(&[call], &mut out).unwrap();
    ///                 assert_eq!((outcome.episode(), out[0]), (call, 2 * call));
    ///             }
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// The algorithm that ran (never `Auto`: what `Auto` chose).
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, Reduction};
    ///
    /// // Dynamic pairs, but a fixed order asked for: the static tree runs instead.
    /// let group = Reduction::<f32>::builder(3)
    ///     .op(Op::Sum)
    ///     .algorithm(ReduceAlgorithm::DynamicPairs)
    ///     .deterministic(true)
    ///     .build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0.0];
    ///             let outcome = p.allreduce(&[0.5], &mut out).unwrap();
    ///             assert_eq!((outcome.algorithm(), out), (ReduceAlgorithm::StaticTree, [1.5]));
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn algorithm(&self) -> ReduceAlgorithm {
        self.algorithm
    }

    /// Whether this participant's output holds the result: at the root for `reduce`, everywhere
    /// for `allreduce`.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<i64>::new(3, Op::Product)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0];
    ///             let outcome = p.reduce(&[p.rank() as i64 + 2], &mut out).unwrap();
    ///             assert_eq!(outcome.has_result(), p.is_root());
    ///             let outcome = p.allreduce(&[-1], &mut out).unwrap();
    ///             assert!(outcome.has_result() && out == [-1]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn has_result(&self) -> bool {
        self.has_result
    }
}

/// Why a participant stopped before its part of a call was done.
pub(crate) enum Bail {
    /// The group broke; every buffer of this participant is out of everyone's reach.
    Broken,
    /// The operator panicked in this participant; the group is broken, and the panic goes on
    /// once every buffer of this participant is out of everyone's reach.
    Panicked(Panic),
}

/// How a participant's part of a call ended.
pub(crate) enum Role {
    /// Its data was consumed by a master; the result, if it needs one, comes later.
    Consumed,
    /// It combined the last pair: the call is complete.
    Completed,
    /// Everyone's result is in place (the linear algorithm's second meeting passed).
    Done,
}

/// One call as the algorithms see it.
pub(crate) struct Call<T> {
    pub(crate) episode: u64,
    pub(crate) kind: usize,
    pub(crate) input: *const T,
    /// The input's length.
    pub(crate) len: usize,
    /// Whether this participant's own arguments were wrong (its output's length).
    pub(crate) poisoned: bool,
    /// This participant's output, or null when it has none in this call.
    pub(crate) out: *mut T,
    /// Where this participant accumulates when it masters a pair: its output, else scratch.
    pub(crate) work: *mut T,
}

impl<T> Call<T> {
    /// This participant's side of the call.
    pub(crate) fn signature(&self) -> Signature {
        Signature {
            kind: self.kind,
            len: self.len,
            poisoned: self.poisoned,
        }
    }
}

impl<T: Copy + Send + Sync + 'static> Reducer<T> {
    pub(crate) fn new(shared: Arc<Shared<T>>, rank: usize) -> Self {
        let budget = SpinBudget::new(shared.plan);
        Reducer {
            shared,
            rank,
            episode: 0,
            job_seq: 0,
            scratch: Vec::new(),
            pointers: Vec::new(),
            budget,
        }
    }

    /// This participant's rank, from 0.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u32>::new(3, Op::Or)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             // One bit per rank: all three are set, so each rank came once.
    ///             let mut out = [0];
    ///             p.allreduce(&[1 << p.rank()], &mut out).unwrap();
    ///             assert_eq!(out, [0b111]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Whether this participant receives `reduce`'s result.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::builder(2).op(Op::Sum).root(1).build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             assert_eq!(p.is_root(), p.rank() == 1);
    ///             // Only the root needs an output.
    ///             let mut out = if p.is_root() { vec![0] } else { vec![] };
    ///             p.reduce(&[4], &mut out).unwrap();
    ///             assert!(!p.is_root() || out == [8]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_root(&self) -> bool {
        self.rank == self.shared.root
    }

    /// The number of participants in this handle's group, the same as
    /// [`Reduction::parties`](crate::Reduction::parties).
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::new(4, Op::Sum)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             // Everyone brings a 1: the sum is the party count.
    ///             let mut out = [0];
    ///             p.allreduce(&[1], &mut out).unwrap();
    ///             assert_eq!(out[0], p.parties() as u64);
    ///             assert_eq!(p.parties(), 4);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.parties
    }

    /// Reduces every participant's `input` into the root's `output`, element by element.
    ///
    /// A participant whose data has been consumed returns at once (quick return; under
    /// `Linear` and `DynamicGroup` everyone returns when the call completes). `output` is written
    /// only at the root, whose output must be as long as its input; the others may pass
    /// `&mut []`. `input` is not read after the call returns.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<i64>::new(3, Op::Sum)?;
    /// let mut total = vec![0i64; 4];
    /// std::thread::scope(|s| {
    ///     let mut handles = group.participants().into_iter();
    ///     let mut root = handles.next().unwrap();
    ///     for mut p in handles {
    ///         s.spawn(move || {
    ///             let mine = vec![p.rank() as i64; 4];
    ///             p.reduce(&mine, &mut []).unwrap();
    ///         });
    ///     }
    ///     let outcome = root.reduce(&[10, 20, 30, 40], &mut total).unwrap();
    ///     assert!(outcome.has_result());
    /// });
    /// assert_eq!(total, [13, 23, 33, 43]);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// - [`Error::Mismatch`](crate::Error::Mismatch) when participants passed different
    ///   lengths, or some called [`allreduce`](Self::allreduce) instead, or the root's output is
    ///   not as long as its input; or later, from the next call or the one after, for a
    ///   participant that returned before the difference was found. The root's output holds
    ///   unspecified values, and the group is failed: every later call returns the same error
    ///   (see [`Reduction`](crate::Reduction#mismatched-calls)).
    /// - [`Error::Broken`](crate::Error::Broken) when a participant panicked or its handle was
    ///   dropped.
    pub fn reduce(&mut self, input: &[T], output: &mut [T]) -> Result<ReduceOutcome> {
        let has_output = self.is_root();
        self.call(KIND_REDUCE, input, output, has_output)
    }

    /// Reduces every participant's `input` into every participant's `output`, which must be as
    /// long as the input.
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, Reduction};
    ///
    /// let group = Reduction::<f64>::builder(4)
    ///     .op(Op::Max)
    ///     .algorithm(ReduceAlgorithm::DynamicPairs)
    ///     .build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mine = [p.rank() as f64, -(p.rank() as f64)];
    ///             let mut out = [0.0; 2];
    ///             p.allreduce(&mine, &mut out).unwrap();
    ///             assert_eq!(out, [3.0, 0.0]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce); every participant learns of a mismatch from the call itself,
    /// and every output holds unspecified values.
    pub fn allreduce(&mut self, input: &[T], output: &mut [T]) -> Result<ReduceOutcome> {
        self.call(KIND_ALLREDUCE, input, output, true)
    }

    fn call(
        &mut self,
        kind: usize,
        input: &[T],
        output: &mut [T],
        has_output: bool,
    ) -> Result<ReduceOutcome> {
        let shared = Arc::clone(&self.shared);
        let episode = self.episode;
        if shared.broken.is_broken_for(episode) {
            return Err(shared.broken_error());
        }
        let poisoned = has_output && output.len() != input.len();
        if poisoned {
            let error = signature::output_length(self.rank, input.len(), output.len());
            shared.record_mismatch(episode, error);
        }
        // Call `e` may reuse what call `e - 2` used (pairing word, choice slot): wait until it
        // completed. Almost always it has, and this is one load.
        if episode >= 2 {
            if let Err(Bail::Broken) = self.wait(&shared.completed, |c| c + 1 >= episode, true) {
                return Err(shared.broken_error());
            }
        }
        let algorithm = match shared.configured {
            ReduceAlgorithm::Auto if shared.parties == 1 => ReduceAlgorithm::Linear,
            // One fixed order for every call: the choice must not depend on history.
            ReduceAlgorithm::Auto if shared.deterministic => ReduceAlgorithm::StaticTree,
            ReduceAlgorithm::Auto => shared
                .auto
                .choice_for(episode)
                .unwrap_or(ReduceAlgorithm::Linear),
            configured => {
                configured.resolve(0, shared.parties, Default::default(), shared.deterministic)
            }
        };
        let out = if has_output {
            output.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        };
        let work = if !out.is_null() {
            out
        } else {
            self.scratch_for(input.len())
        };
        let call = Call {
            episode,
            kind,
            input: input.as_ptr(),
            len: input.len(),
            poisoned,
            out,
            work,
        };
        let out_len = if out.is_null() { 0 } else { output.len() };
        let slot = &shared.slots[self.rank];
        shared.roster.arrive(self.rank, episode);
        slot.publish_data(
            input.as_ptr() as usize,
            call.signature(),
            out as usize,
            out_len,
        );
        slot.arrived_at
            .store(auto::stamp(&shared, episode), Ordering::Relaxed);

        let outcome = if shared.parties == 1 {
            self.alone(&call)
        } else {
            match algorithm {
                ReduceAlgorithm::Linear => linear::run(self, &call),
                ReduceAlgorithm::StaticTree => static_tree::run(self, &call),
                ReduceAlgorithm::DynamicPairs | ReduceAlgorithm::DynamicGroup => {
                    dynamic_pairs::run(self, &call, algorithm == ReduceAlgorithm::DynamicGroup)
                }
                ReduceAlgorithm::Auto => unreachable!("Auto is resolved above"),
            }
        };
        let outcome = outcome.and_then(|role| self.finish(&call, role, algorithm));
        self.episode += 1;
        match outcome {
            Ok(()) => {}
            Err(Bail::Broken) => return Err(shared.broken_error()),
            Err(Bail::Panicked(payload)) => std::panic::resume_unwind(payload),
        }
        if let Some(mismatch) = shared.mismatch_for(episode) {
            return Err(mismatch);
        }
        if shared.broken.is_broken_for(episode) {
            return Err(shared.broken_error());
        }
        Ok(ReduceOutcome {
            episode,
            algorithm,
            has_result: has_output,
        })
    }

    /// The rest of the call once this participant's part of the algorithm is done: helping (for
    /// `DynamicGroup`), waiting for the result where it is needed, and copying it.
    fn finish(
        &mut self,
        call: &Call<T>,
        role: Role,
        algorithm: ReduceAlgorithm,
    ) -> Result<(), Bail> {
        let shared = Arc::clone(&self.shared);
        let needs_result = !call.out.is_null();
        match role {
            Role::Done => return Ok(()),
            Role::Completed => {}
            Role::Consumed => {
                if algorithm == ReduceAlgorithm::DynamicGroup {
                    if let Err(bail) = dynamic_group::work_until_complete(self, call) {
                        self.settle_out_offer(call);
                        return Err(bail);
                    }
                } else if needs_result {
                    let episode = call.episode;
                    if let Err(bail) = self.wait(&shared.completed, |c| c > episode, true) {
                        self.settle_out_offer(call);
                        return Err(bail);
                    }
                }
            }
        }
        if call.kind == KIND_ALLREDUCE && !shared.is_mismatched(call.episode) {
            self.copy_result(call);
        }
        Ok(())
    }

    /// Under the dynamic algorithms the last pair writes the root's output: before the root
    /// gives up on a broken group it must withdraw that offer, or, if the last pair already took
    /// it, wait until the pair is done with it (it always finishes; see [`Job`](super::job)).
    fn settle_out_offer(&self, call: &Call<T>) {
        let shared = &self.shared;
        let offer = &shared.slots[self.rank].out_offer;
        let offered = tag(call.episode, OFFERED);
        if offer.load() != offered
            || offer
                .compare_publish(offered, tag(call.episode, WITHDRAWN))
                .is_ok()
        {
            return;
        }
        let episode = call.episode;
        let _ = self.wait(&shared.completed, |c| c > episode, false);
    }

    /// Copies an allreduce's result from where the tree algorithms' last pair left it.
    fn copy_result(&self, call: &Call<T>) {
        // What the last pair wrote; equal to `call.len` in a call without a mismatch, and the
        // bound whatever the check decided.
        let len = call.len.min(self.shared.result_len.load(Ordering::Relaxed));
        self.shared.result.with(|result| {
            // SAFETY: the call completed, so the last pair has filled `result` with `result_len`
            // elements (see `Shared`'s `Sync` note for why nobody writes it meanwhile; the
            // completion's `Acquire` made `result_len` visible too), and `call.out` is this
            // participant's output of `call.len` elements (its own check in `call`).
            unsafe {
                let result = &*result;
                debug_assert!(result.len() >= len);
                std::ptr::copy_nonoverlapping(result.as_ptr() as *const T, call.out, len);
            }
        });
    }

    /// A group of one: the result is the input.
    fn alone(&mut self, call: &Call<T>) -> Result<Role, Bail> {
        if !call.out.is_null() && !call.poisoned {
            // SAFETY: `input` and `out` are the caller's slices of `len` elements, distinct
            // (one is shared, the other exclusive).
            unsafe { std::ptr::copy_nonoverlapping(call.input, call.out, call.len) };
        }
        self.complete(call.episode, call.len);
        Ok(Role::Done)
    }

    /// Marks call `episode` complete and makes `Auto`'s choice for a later call. A mismatched
    /// call first fails the group from the next call on: a participant that returned from this
    /// call before the mismatch was found (its data consumed) learns of it there, and one that
    /// already waits in the next call is woken instead of waiting for participants that will not
    /// come. Calls complete in order, so the earliest mismatch is the one that fails the group.
    /// (Only a handle dropped at a later call before this one completes can break the group
    /// first, from that later call; the calls in between then run as usual.)
    pub(crate) fn complete(&self, episode: u64, len: usize) {
        let shared = &self.shared;
        if shared.is_mismatched(episode) {
            shared.break_from(episode + 1, self.rank);
        }
        shared.completed.publish_at_least(episode + 1);
        if shared.configured == ReduceAlgorithm::DynamicGroup {
            shared.bump_board();
        }
        auto::after_completion(shared, episode, len);
    }

    /// A scratch buffer of `len` elements for a participant without an output.
    fn scratch_for(&mut self, len: usize) -> *mut T {
        if self.scratch.len() < len {
            self.scratch.reserve(len - self.scratch.len());
            // SAFETY: `MaybeUninit` needs no initialization, and the capacity was just reserved.
            unsafe { self.scratch.set_len(len) };
        }
        self.scratch.as_mut_ptr() as *mut T
    }

    /// The next job number of this participant's job slot.
    pub(crate) fn next_job(&mut self) -> u64 {
        self.job_seq += 1;
        self.job_seq
    }

    /// Waits until `done` holds for `signal`'s value. A `checked` wait gives up when the group
    /// breaks, unless the condition holds by then (a release that raced with the break still
    /// counts: others may already be using this participant's buffers).
    pub(crate) fn wait(
        &self,
        signal: &Signal,
        done: impl Fn(u64) -> bool,
        checked: bool,
    ) -> Result<u64, Bail> {
        let shared = &self.shared;
        let broken = if checked {
            &shared.broken
        } else {
            &shared.intact
        };
        let waiter = Waiter::new(
            &shared.plan,
            &self.budget,
            Deadline::Never,
            broken,
            self.episode,
            Some(Watch::arrivals(&**shared)),
        );
        match waiter.until(signal, &done) {
            Ok(value) => Ok(value),
            Err(Stop::Broken) => {
                let value = signal.load();
                if done(value) {
                    Ok(value)
                } else {
                    Err(Bail::Broken)
                }
            }
            Err(Stop::TimedOut) => unreachable!("reductions wait without a deadline"),
        }
    }

    /// Helps job `seq` of `owner`'s slot, then waits until it is done: every buffer the job
    /// touches is then free again. If the operator panicked here, the group breaks and the panic
    /// is returned to travel on.
    pub(crate) fn help_until_done(&self, owner: usize, seq: u64) -> Result<(), Bail> {
        let shared = &self.shared;
        let job = &shared.jobs[owner];
        let helped = job.help(seq, &shared.kernel);
        if helped.is_err() {
            shared.break_from(self.episode, self.rank);
        }
        let _ = self.wait(job.done(), |done| done >= seq, false);
        helped.map_err(Bail::Panicked)
    }

    /// As a master: posts `dest = mine op theirs` as this participant's next job, calls the
    /// slave `slave` to help, helps, and waits until the job is done.
    pub(crate) fn run_pair(
        &mut self,
        slave: usize,
        dest: *mut T,
        mine: *const T,
        theirs: *const T,
        len: usize,
        wake_workforce: bool,
    ) -> Result<(), Bail> {
        let episode = self.episode;
        let seq = self.next_job();
        let shared = Arc::clone(&self.shared);
        shared.jobs[self.rank].post(seq, dest, mine, theirs, len);
        let slave_slot = &shared.slots[slave];
        slave_slot.master.store(self.rank, Ordering::Relaxed);
        slave_slot.job.store(seq, Ordering::Relaxed);
        slave_slot.offer.publish(tag(episode, CALLED));
        if wake_workforce {
            shared.bump_board();
        }
        self.help_until_done(self.rank, seq)
    }

    /// As a slave whose offer was taken: waits for the job, helps it, and waits until it is done.
    pub(crate) fn serve(&self, episode: u64) -> Result<(), Bail> {
        let shared = &self.shared;
        let slot = &shared.slots[self.rank];
        let _ = self.wait(&slot.offer, |v| v == tag(episode, CALLED), false);
        let master = slot.master.load(Ordering::Relaxed);
        let seq = slot.job.load(Ordering::Relaxed);
        self.help_until_done(master, seq)
    }

    /// Compares the data this participant is about to combine (`mine`) with `other`'s offer, and
    /// returns how many elements the pair combines, or `None` when the call is poisoned (either
    /// side already was, or they differ; a new difference is recorded for everyone).
    pub(crate) fn check_partner(
        &self,
        call: &Call<T>,
        mine: Signature,
        other: usize,
    ) -> Option<usize> {
        let theirs = self.shared.slots[other].signature();
        match mine.meet(self.rank, &theirs, other) {
            Ok(len) => Some(len),
            Err(found) => {
                if let Some(error) = found {
                    self.shared.record_mismatch(call.episode, error);
                }
                None
            }
        }
    }

    /// The buffer the last pair of an allreduce writes, sized for the `len` elements it writes.
    pub(crate) fn result_buffer(&self, len: usize) -> *mut T {
        self.shared.result_len.store(len, Ordering::Relaxed);
        self.shared.result.with_mut(|result| {
            // SAFETY: only the last pair's master calls this, before it posts the job, and no
            // participant reads the buffer until the call completes (see `Shared`).
            let result = unsafe { &mut *result };
            if result.len() < len {
                result.reserve(len - result.len());
                // SAFETY: `MaybeUninit` needs no initialization; the capacity was reserved.
                unsafe { result.set_len(len) };
            }
            result.as_mut_ptr() as *mut T
        })
    }
}

/// How stall reports speak of reductions.
static STALL_WORDING: Wording = Wording {
    unit: "call",
    members: "participant(s)",
    all_arrived: "although every participant has arrived: an operator may still be running",
    unnamed: "for participants it cannot name",
    advice: "every participant must make the same calls in the same order; one that is done \
             should be dropped, which breaks the group so that the others get Error::Broken \
             instead of waiting",
};

impl<T> Watched for Shared<T> {
    fn stall(&self) -> &Stall {
        &self.stall
    }

    fn wording(&self) -> &'static Wording {
        &STALL_WORDING
    }

    fn describe(&self) -> String {
        format!(
            "Reduction ({:?}, {} participants)",
            self.configured, self.parties
        )
    }

    fn missing(&self, episode: u64) -> Vec<usize> {
        self.roster.missing(episode)
    }
}

impl<T> Drop for Reducer<T> {
    fn drop(&mut self) {
        // Calls from `episode` on can no longer complete; earlier ones are unaffected, so a
        // handle dropped after the group's last call breaks nothing anyone waits for.
        self.shared.break_from(self.episode, self.rank);
    }
}

impl<T> std::fmt::Debug for Reducer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reducer")
            .field("rank", &self.rank)
            .field("episode", &self.episode)
            .finish_non_exhaustive()
    }
}
