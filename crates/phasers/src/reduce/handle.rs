//! One participant's handle, its view during a call ([`Caller`]), and the steps every algorithm
//! shares: waiting, pairing up, helping a pair's job, and completing a call. The algorithms
//! (`linear`, `static_tree`, `dynamic_pairs`, `dynamic_group`) build on these; `reducer` runs a
//! call and picks the algorithm, so the imports go one way: `reducer` -> algorithms -> `handle`.

use std::mem::MaybeUninit;

use super::call::{Bail, Call};
use super::job::{Job, Panic};
use super::kernel::Kernel;
use super::shared::Shared;
use super::signature::Signature;
use super::slot::{tag, CALLED};
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
    episode: u64,
    job_seq: u64,
    scratch: Vec<MaybeUninit<T>>,
    /// The linear algorithm's lists of every input and output address, kept between calls.
    pointers: Vec<usize>,
    budget: SpinBudget,
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

    /// This handle as a blocking call sees it: each field borrowed on its own, the group's state
    /// through a plain reference.
    pub(crate) fn caller(&mut self) -> Caller<'_, T> {
        self.caller_for(false)
    }

    /// This handle as a call sees it; `task`: the call runs in an async task, whose waits poll.
    pub(crate) fn caller_for(&mut self, task: bool) -> Caller<'_, T> {
        let Reducer {
            shared,
            rank,
            episode,
            job_seq,
            scratch,
            pointers,
            budget,
        } = self;
        Caller {
            shared: &**shared,
            object: shared,
            rank: *rank,
            task,
            episode,
            job_seq,
            scratch,
            pointers,
            budget,
        }
    }
}

/// A participant during one call: its handle's fields borrowed apart, so that a step can hold on
/// to the group's state (`shared`, a plain reference that borrows nothing of the `Caller`) while
/// it changes the participant's own (`&mut self`). Borrowing it from the handle instead would
/// keep the handle borrowed, and an `Arc::clone` to get around that costs two read-modify-writes
/// of the count, on a line every participant's calls write: a cache-line transfer each. On the
/// 2-core Xeon VM they cost a two-party allreduce of one float 0.15-0.25 µs with the linear
/// algorithm (of about 1 µs) and 0.4 µs with the static tree, which cloned at every step.
pub(crate) struct Caller<'a, T> {
    pub(crate) shared: &'a Shared<T>,
    /// The handle's hold on the group, which a task's wait hands the stall watchdog.
    pub(crate) object: &'a Arc<Shared<T>>,
    pub(crate) rank: usize,
    /// Whether the call runs in an async task: its waits poll instead of blocking, and its
    /// buffers are the group's (see `reduce_future.rs`).
    pub(crate) task: bool,
    /// The handle's call number: this call's until the call has run, then the next one's.
    pub(crate) episode: &'a mut u64,
    job_seq: &'a mut u64,
    scratch: &'a mut Vec<MaybeUninit<T>>,
    /// The linear algorithm's lists of every input and output address, kept between calls.
    pub(crate) pointers: &'a mut Vec<usize>,
    budget: &'a SpinBudget,
}

impl<'a, T: Copy + Send + Sync + 'static> Caller<'a, T> {
    /// Marks call `episode` complete (see [`Shared::complete`]).
    #[inline]
    pub(crate) fn complete(&self, episode: u64, len: usize) {
        self.shared.complete(episode, len, self.rank);
    }

    /// A scratch buffer of `len` elements for a participant without an output.
    pub(crate) fn scratch_for(&mut self, len: usize) -> *mut T {
        if self.task {
            // A task's buffers are the group's, which outlive a cancelled call.
            return self.shared.staging[self.rank].work();
        }
        if self.scratch.len() < len {
            self.scratch.reserve(len - self.scratch.len());
            // SAFETY: `MaybeUninit` needs no initialization, and the capacity was just reserved.
            unsafe { self.scratch.set_len(len) };
        }
        self.scratch.as_mut_ptr() as *mut T
    }

    /// The next job number of this participant's job slot.
    pub(crate) fn next_job(&mut self) -> u64 {
        *self.job_seq += 1;
        *self.job_seq
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
        let shared = self.shared;
        let waiter = Waiter::new(
            &shared.plan,
            self.budget,
            Deadline::Never,
            shared.broken_state(checked),
            *self.episode,
            Some(Watch::arrivals(shared)),
        );
        match waiter.until(signal, &done) {
            Ok(value) => Ok(value),
            Err(Stop::Broken) => settle_broken(signal, done),
            Err(Stop::TimedOut) => unreachable!("reductions wait without a deadline"),
        }
    }

    /// Helps job `seq` of `owner`'s slot, then waits until it is done: every buffer the job
    /// touches is then free again. If the operator panicked here, the group breaks and the panic
    /// is returned to travel on.
    #[inline]
    pub(crate) fn help_until_done(
        &self,
        owner: usize,
        seq: u64,
        kernel: &Kernel<T>,
    ) -> Result<(), Bail> {
        let job = &self.shared.jobs[owner];
        let helped = self.help(job, seq, kernel);
        let _ = self.wait(job.done(), |done| done >= seq, false);
        helped.map_err(Bail::Panicked)
    }

    /// [`help_until_done`](Self::help_until_done) for a task.
    pub(crate) async fn help_until_done_in_task(
        &self,
        owner: usize,
        seq: u64,
        kernel: &Kernel<T>,
    ) -> Result<(), Bail> {
        let job = &self.shared.jobs[owner];
        let helped = self.help(job, seq, kernel);
        let _ = self
            .wait_in_task(job.done(), move |done| done >= seq, false)
            .await;
        helped.map_err(Bail::Panicked)
    }

    /// Runs chunks of job `seq` while it has some left; an operator's panic breaks the group.
    #[inline]
    fn help(&self, job: &Job, seq: u64, kernel: &Kernel<T>) -> Result<(), Panic> {
        let shared = self.shared;
        job.help(seq, kernel, || shared.break_from(*self.episode, self.rank))
    }

    /// As a master: posts `dest = mine op theirs` as this participant's next job, calls the
    /// slave `slave` to help, helps, and waits until the job is done.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn run_pair(
        &mut self,
        call: &Call<'_, T>,
        slave: usize,
        dest: *mut T,
        mine: *const T,
        theirs: *const T,
        len: usize,
        wake_workforce: bool,
    ) -> Result<(), Bail> {
        let seq = self.post_pair(call, slave, dest, mine, theirs, len, wake_workforce);
        self.help_until_done(self.rank, seq, call.kernel)
    }

    /// [`run_pair`](Self::run_pair) for a task.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run_pair_in_task(
        &mut self,
        call: &Call<'_, T>,
        slave: usize,
        dest: *mut T,
        mine: *const T,
        theirs: *const T,
        len: usize,
        wake_workforce: bool,
    ) -> Result<(), Bail> {
        let seq = self.post_pair(call, slave, dest, mine, theirs, len, wake_workforce);
        self.help_until_done_in_task(self.rank, seq, call.kernel)
            .await
    }

    /// Posts a pair's job and calls its slave; returns the job's number.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn post_pair(
        &mut self,
        call: &Call<'_, T>,
        slave: usize,
        dest: *mut T,
        mine: *const T,
        theirs: *const T,
        len: usize,
        wake_workforce: bool,
    ) -> u64 {
        let seq = self.next_job();
        let shared = self.shared;
        shared.jobs[self.rank].post(seq, dest, mine, theirs, len);
        let slave_slot = &shared.slots[slave];
        slave_slot.master.store(self.rank, Ordering::Relaxed);
        slave_slot.job.store(seq, Ordering::Relaxed);
        slave_slot.offer.publish(tag(call.episode, CALLED));
        if wake_workforce {
            shared.bump_board();
        }
        seq
    }

    /// As a slave whose offer was taken: waits for the job, helps it, and waits until it is done.
    #[inline]
    pub(crate) fn serve(&self, call: &Call<'_, T>) -> Result<(), Bail> {
        let slot = &self.shared.slots[self.rank];
        let called = tag(call.episode, CALLED);
        let _ = self.wait(&slot.offer, |v| v == called, false);
        let (master, seq) = slot.master_and_job();
        self.help_until_done(master, seq, call.kernel)
    }

    /// [`serve`](Self::serve) for a task.
    pub(crate) async fn serve_in_task(&self, call: &Call<'_, T>) -> Result<(), Bail> {
        let slot = &self.shared.slots[self.rank];
        let called = tag(call.episode, CALLED);
        let _ = self
            .wait_in_task(&slot.offer, move |v| v == called, false)
            .await;
        let (master, seq) = slot.master_and_job();
        self.help_until_done_in_task(master, seq, call.kernel).await
    }

    /// Compares the data this participant is about to combine (`mine`) with `other`'s offer, and
    /// returns how many elements the pair combines, or `None` when the call is poisoned (either
    /// side already was, or they differ; a new difference is recorded for everyone).
    pub(crate) fn check_partner(
        &self,
        call: &Call<'_, T>,
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

/// A wait stopped by the group's break: a condition that came with the break still counts.
pub(crate) fn settle_broken(signal: &Signal, done: impl Fn(u64) -> bool) -> Result<u64, Bail> {
    let value = signal.load();
    if done(value) {
        Ok(value)
    } else {
        Err(Bail::Broken)
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
