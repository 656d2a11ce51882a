//! The state every participant of a reduction group shares.

use std::mem::MaybeUninit;
use std::time::Instant;

use crossbeam_utils::CachePadded;

use super::algorithm::ReduceAlgorithm;
use super::auto::{AutoState, SAMPLE_EVERY};
use super::job::Job;
use super::kernel::Kernel;
use super::slot::Slot;
use super::staging::Staging;
use crate::error::Error;
use crate::primitive::{AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering, UnsafeCell};
use crate::wait::{
    BrokenState, Deadline, Roster, Signal, SpinBudget, SpinPlan, Stall, Tuning, WaitPolicy, Waiter,
};

pub(crate) struct Shared<T> {
    pub(crate) parties: usize,
    pub(crate) root: usize,
    pub(crate) configured: ReduceAlgorithm,
    pub(crate) deterministic: bool,
    pub(crate) policy: WaitPolicy,
    pub(crate) plan: SpinPlan,
    /// The group's operator; `None` for a group embedded in a team, whose calls each bring
    /// their own.
    pub(crate) kernel: Option<Kernel<T>>,
    pub(crate) slots: Box<[CachePadded<Slot>]>,
    pub(crate) jobs: Box<[CachePadded<Job>]>,
    /// The dynamic algorithms' pairing words, one per parity of the call number: empty (0), or
    /// the waiting participant's rank + 1 in the high half and the number of participants its
    /// data holds in the low half.
    pub(crate) pairing: [CachePadded<AtomicU64>; 2],
    /// The number of calls completed: call `e` is complete once this is above `e`.
    pub(crate) completed: CachePadded<Signal>,
    /// Bumped when a job is posted or a call completes, for the `DynamicGroup` workforce.
    pub(crate) board: CachePadded<Signal>,
    board_tickets: AtomicU64,
    /// The linear algorithm's meetings: tickets taken, and meetings completed.
    pub(crate) meeting_tickets: CachePadded<AtomicU64>,
    pub(crate) meetings: CachePadded<Signal>,
    /// Where the tree algorithms' last pair writes an allreduce's result, for everyone to copy,
    /// and how many elements of it the last pair wrote.
    pub(crate) result: UnsafeCell<Vec<MaybeUninit<T>>>,
    pub(crate) result_len: AtomicUsize,
    /// The number of the earliest mismatched call, plus one (0: none). Only a mismatch writes it,
    /// so the load every call makes at its end stays in the reader's cache.
    mismatched: CachePadded<AtomicU64>,
    /// The mismatch of that call: the first difference found in it.
    mismatch: Mutex<Option<(u64, Error)>>,
    pub(crate) broken: BrokenState,
    /// Never broken: for waits that must not give up because others still use this thread's
    /// buffers (they always end, see [`Job`]).
    pub(crate) intact: BrokenState,
    pub(crate) claimed: Box<[AtomicBool]>,
    pub(crate) auto: AutoState,
    pub(crate) origin: Instant,
    /// The calls each participant has arrived at, and the stall latch, for stall reports.
    pub(crate) roster: Roster,
    pub(crate) stall: Stall,
    /// Each participant's copies of its buffers for calls from async tasks (see `staging.rs`).
    pub(crate) staging: Box<[Staging<T>]>,
}

// SAFETY: `result` and `staging` are the only fields that are not `Sync` by themselves; for
// `staging`, see `staging.rs` (only its owner resizes it, when nobody reads it). `result`: Only the last pair of a call
// writes it (the master resizes it before posting the job, the pair's chunks fill it), and
// readers copy from it only after the call completed; the next call's last pair forms only after
// every participant arrived at that call, so after every copy of this one. `T` crosses threads by
// value through the buffers, hence `T: Send + Sync`.
unsafe impl<T: Send + Sync> Sync for Shared<T> {}
// SAFETY: as above; the shared state owns `T`s only in `result`.
unsafe impl<T: Send + Sync> Send for Shared<T> {}

impl<T> Shared<T> {
    pub(crate) fn new(
        parties: usize,
        root: usize,
        configured: ReduceAlgorithm,
        deterministic: bool,
        tuning: Tuning,
        kernel: Option<Kernel<T>>,
    ) -> Self {
        Shared {
            parties,
            root,
            configured,
            deterministic,
            policy: tuning.policy(),
            plan: tuning.plan(parties),
            kernel,
            slots: (0..parties)
                .map(|_| CachePadded::new(Slot::new()))
                .collect(),
            jobs: (0..parties).map(|_| CachePadded::new(Job::new())).collect(),
            pairing: [
                CachePadded::new(AtomicU64::new(0)),
                CachePadded::new(AtomicU64::new(0)),
            ],
            completed: CachePadded::new(Signal::new(0)),
            board: CachePadded::new(Signal::new(0)),
            board_tickets: AtomicU64::new(0),
            meeting_tickets: CachePadded::new(AtomicU64::new(0)),
            meetings: CachePadded::new(Signal::new(0)),
            result: UnsafeCell::new(Vec::new()),
            result_len: AtomicUsize::new(0),
            mismatched: CachePadded::new(AtomicU64::new(0)),
            mismatch: Mutex::new(None),
            broken: BrokenState::new(),
            intact: BrokenState::new(),
            claimed: (0..parties).map(|_| AtomicBool::new(false)).collect(),
            auto: AutoState::new(),
            origin: Instant::now(),
            roster: Roster::new(parties),
            stall: Stall::new(tuning.stall_after()),
            staging: (0..parties).map(|_| Staging::new()).collect(),
        }
    }

    /// Marks call `episode` complete and makes `Auto`'s choice for a later call. A mismatched
    /// call first fails the group from the next call on: a participant that returned from this
    /// call before the mismatch was found (its data consumed) learns of it there, and one that
    /// already waits in the next call is woken instead of waiting for participants that will not
    /// come. Calls complete in order, so the earliest mismatch is the one that fails the group.
    /// (Only a handle dropped at a later call before this one completes can break the group
    /// first, from that later call; the calls in between then run as usual.)
    #[inline]
    pub(crate) fn complete(&self, episode: u64, len: usize, rank: usize) {
        if self.is_mismatched(episode) {
            self.break_from(episode + 1, rank);
        }
        self.completed.publish_at_least(episode + 1);
        if self.configured == ReduceAlgorithm::DynamicGroup {
            self.bump_board();
        }
        self.after_completion(episode, len);
    }

    /// Completes call `episode` for `rank`'s task, cancelled while its last pair ran: once the
    /// pair's job is done, since the root may be waiting for its output. The wait blocks the
    /// thread that drops the future, briefly: every chunk still running was claimed in some
    /// thread's poll or call, which runs it to the end without waiting for anyone.
    #[cold]
    pub(crate) fn complete_when_done(&self, rank: usize, episode: u64, len: usize) {
        let job = &self.jobs[rank];
        let seq = job.posted();
        let budget = SpinBudget::new(self.plan);
        let waiter = Waiter::new(
            &self.plan,
            &budget,
            Deadline::Never,
            &self.intact,
            episode,
            None,
        );
        let _ = waiter.until(job.done(), |done| done >= seq);
        self.complete(episode, len, rank);
    }

    /// What a wait gives up on: the group's break for a `checked` wait; for the others, which
    /// must not give up because others still use this participant's buffers, a state that
    /// never breaks.
    pub(crate) fn broken_state(&self, checked: bool) -> &BrokenState {
        if checked {
            &self.broken
        } else {
            &self.intact
        }
    }

    /// Wakes the `DynamicGroup` workforce: a job was posted or a call completed.
    pub(crate) fn bump_board(&self) {
        let ticket = self.board_tickets.fetch_add(1, Ordering::Relaxed) + 1;
        // Two posters may publish out of order; a worker only waits for the value to change, and
        // a swap is a read-modify-write, so whatever value it reads carries both posts' writes.
        self.board.publish(ticket & crate::wait::MAX_SIGNAL_VALUE);
    }

    /// Records `error`, a difference found in call `episode`, unless an earlier difference of
    /// that call or of an earlier one is already recorded. Called before the call completes.
    #[cold]
    pub(crate) fn record_mismatch(&self, episode: u64, error: Error) {
        let mut slot = self.mismatch.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().map_or(true, |(e, _)| episode < *e) {
            *slot = Some((episode, error));
            // Under the lock, so the word and the record change together; `Release` publishes the
            // record to a reader that sees the word.
            self.mismatched.store(episode + 1, Ordering::Release);
        }
    }

    /// Whether call `episode`, or an earlier one, was mismatched: one load of a word that only a
    /// mismatch writes.
    #[inline]
    pub(crate) fn is_mismatched(&self, episode: u64) -> bool {
        let first = self.mismatched.load(Ordering::Acquire);
        first != 0 && first - 1 <= episode
    }

    /// The mismatch that fails call `episode`: its own, or an earlier call's (the group is failed
    /// from the call after a mismatched one on).
    #[inline]
    pub(crate) fn mismatch_for(&self, episode: u64) -> Option<Error> {
        if !self.is_mismatched(episode) {
            return None;
        }
        self.recorded_mismatch()
    }

    #[cold]
    #[inline(never)]
    fn recorded_mismatch(&self) -> Option<Error> {
        let slot = self.mismatch.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref().map(|(_, error)| error.clone())
    }

    /// Marks call `episode` and later as unable to complete because of `rank`, and wakes everyone.
    /// A participant that quick-returned may be lost a call ahead of one lost earlier, so the
    /// earliest break counts (see [`BrokenState::break_from_earliest`]).
    #[cold]
    pub(crate) fn break_from(&self, episode: u64, rank: usize) {
        if self.broken.break_from_earliest(episode, rank) {
            for slot in self.slots.iter() {
                slot.offer.wake_all();
                slot.out_offer.wake_all();
            }
            for job in self.jobs.iter() {
                job.done().wake_all();
            }
            self.completed.wake_all();
            self.board.wake_all();
            self.meetings.wake_all();
        }
    }

    /// The error a call at a broken episode returns: the mismatch that failed the group, or
    /// [`Error::Broken`] naming the participant that was lost, whichever came first.
    pub(crate) fn broken_error(&self) -> Error {
        let (by, episode) = self
            .broken
            .breaker()
            .expect("broken_error is only called once the group is broken");
        // A mismatch in call `e` fails the group from call `e + 1` (see `Caller::complete`).
        if episode > 0 && self.is_mismatched(episode - 1) {
            if let Some(mismatch) = self.mismatch_for(episode - 1) {
                return mismatch;
            }
        }
        Error::Broken { by, episode }
    }

    /// The position of `rank` counted from the call's `root`, so that the root is 0 in the
    /// fixed-order algorithms.
    pub(crate) fn virtual_rank(&self, rank: usize, root: usize) -> usize {
        (rank + self.parties - root) % self.parties
    }

    /// The rank at position `virtual_rank` counted from the call's `root`.
    pub(crate) fn real_rank(&self, virtual_rank: usize, root: usize) -> usize {
        (virtual_rank + root) % self.parties
    }

    /// `Auto`'s bookkeeping by the participant that completed call `episode` of length `len`,
    /// off the critical path of everyone else: samples the spread, then chooses for call
    /// `episode + 3` (see the `auto` module).
    pub(crate) fn after_completion(&self, episode: u64, len: usize) {
        if self.configured != ReduceAlgorithm::Auto {
            return;
        }
        // From the second call on: the first call's arrivals follow each thread's setup
        // (spawning, allocating), not the program's spread.
        if episode % SAMPLE_EVERY == 1 && !cfg!(phasers_loom) {
            if let Some(sample) = self.measured_spread(episode) {
                self.auto.add_sample(sample);
            }
        }
        let chosen = ReduceAlgorithm::Auto.resolve(
            len,
            self.parties,
            self.auto.spread(),
            self.deterministic,
        );
        self.auto.choose(episode + 3, chosen);
    }

    /// The time between the first and the last arrival at call `episode`, from the stamps that
    /// are still this call's (a participant that already arrived at the next call has
    /// overwritten its stamp; the sample then ignores it).
    fn measured_spread(&self, episode: u64) -> Option<u64> {
        let tag = episode & 0xFFFF;
        let mut first = u64::MAX;
        let mut last = 0;
        for slot in self.slots.iter() {
            let stamp = slot.arrived_at.load(Ordering::Relaxed);
            if stamp >> 48 == tag {
                let at = stamp & ((1 << 48) - 1);
                first = first.min(at);
                last = last.max(at);
            }
        }
        (first <= last).then(|| last - first)
    }

    /// The arrival stamp of call `episode`, or 0 where stamps are not kept.
    pub(crate) fn stamp(&self, episode: u64) -> u64 {
        if self.configured != ReduceAlgorithm::Auto || cfg!(phasers_loom) {
            return 0;
        }
        let ns = self.origin.elapsed().as_nanos() as u64 & ((1 << 48) - 1);
        ((episode & 0xFFFF) << 48) | ns
    }
}
