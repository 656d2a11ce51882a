//! Loom models of the hybrid team's direct-path meeting (`src/hybrid/arrivals.rs`): the members
//! of one process count in at each call, some from the direct path and some from the engine's,
//! and the member that completes the count either runs the direct call (publishing `DONE`), lets
//! the engine go on, or publishes `REPOST` so that the direct path's members post to the engine
//! too. The real `Arrivals` runs on loom atomics; the engine's own meeting (a count under the
//! slot's lock in `engine.rs`) is modelled here by a counter and a completion word.
//!
//! Checked in every interleaving:
//! - exactly one member completes each call's count, and it learns the right mix of paths;
//! - a direct member that waits leaves with the phase of its own call, never a stale one, and
//!   every member of a mixed call reaches the engine's meeting (else it never completes, which
//!   loom reports);
//! - the barrier invariant with visibility (`loom_support::Ledger`): nobody leaves call `k`
//!   before every member arrived at it, and the completing member reads every post;
//! - the counts reset in time for the calls after: several calls run back to back, with members
//!   racing into the next while others still wait.
//!
//! Run with `scripts/loom.sh` (or `scripts/loom.sh loom_direct_meeting`).
#![cfg(phasers_loom)]

mod loom_support;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use loom::sync::{Arc, Notify};
use loom::thread;
use loom_support::{model_bounded, Ledger};
use phasers_mpi::loom_api::{phase_word, Arrivals, Meeting, DONE, ENGINE_ARRIVAL, REPOST};

/// Which path a member's call takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Path {
    Direct,
    Engine,
}
use Path::{Direct, Engine};

/// One process's members and what the model records about them.
struct Process {
    arrivals: Arrivals,
    phase: AtomicU64,
    /// The engine's meeting: arrivals per call parity, and `k + 1` once call `k` completed.
    engine_arrived: [AtomicUsize; 2],
    engine_done: AtomicU64,
    /// Each member's post for its current call (the call's number), read by the member that
    /// completes a direct call.
    posts: Box<[UnsafeCell<u64>]>,
    /// Per call: how many members completed the count, and what they learned.
    completions: Box<[AtomicUsize]>,
    ledger: Ledger,
    local: usize,
    /// One per member: the member that publishes a phase or completes the engine's meeting
    /// wakes every other member, which then looks again. The real members poll instead; a
    /// model whose three members all spin has too many interleavings for loom to finish, and
    /// waking on each change explores the same orders of the protocol's own atomics.
    wake: Box<[Notify]>,
}

// SAFETY: `posts` are loom cells, so loom's race checker fails the model on any access not
// ordered by happens-before, which is what the model checks; the rest is Sync already.
unsafe impl Sync for Process {}
// SAFETY: as above; the cells hold plain integers.
unsafe impl Send for Process {}

impl Process {
    fn new(local: usize, calls: usize) -> Process {
        Process {
            arrivals: Arrivals::default(),
            phase: AtomicU64::new(0),
            engine_arrived: [AtomicUsize::new(0), AtomicUsize::new(0)],
            engine_done: AtomicU64::new(0),
            posts: (0..local).map(|_| UnsafeCell::new(u64::MAX)).collect(),
            completions: (0..calls).map(|_| AtomicUsize::new(0)).collect(),
            ledger: Ledger::new(local, calls),
            local,
            wake: (0..local).map(|_| Notify::new()).collect(),
        }
    }

    fn wake_all(&self) {
        for wake in self.wake.iter() {
            wake.notify();
        }
    }

    /// Member `me`'s call `call` on `path`, in a call whose members take `paths`.
    fn call(&self, me: usize, call: u64, path: Path, paths: &[Path]) {
        // SAFETY: loom checks the access; only `me` writes its post, and the completing member
        // reads it only after the count orders it.
        self.posts[me].with_mut(|post| unsafe { *post = call });
        self.ledger.arrive(me, call);
        let weight = if path == Direct { 1 } else { ENGINE_ARRIVAL };
        let meeting = self
            .arrivals
            .count_in(call, weight, self.local, &self.phase);
        if meeting != Meeting::Waiting {
            self.completed(call, meeting, paths);
            if meeting == Meeting::Mixed {
                // `count_in` published REPOST.
                self.wake_all();
            }
        }
        let to_engine = match (path, meeting) {
            (Engine, _) | (Direct, Meeting::Mixed) => true,
            (Direct, Meeting::AllDirect) => {
                for post in self.posts.iter() {
                    // SAFETY: loom checks that every post was written before this read.
                    let posted = post.with(|post| unsafe { *post });
                    assert_eq!(posted, call, "a post of another call at call {call}");
                }
                self.phase.store(phase_word(call, DONE), Ordering::Release);
                self.wake_all();
                false
            }
            (Direct, Meeting::AllEngine) => {
                panic!("a direct member's count cannot be all engine");
            }
            (Direct, Meeting::Waiting) => loop {
                let now = self.phase.load(Ordering::Acquire);
                if now == phase_word(call, DONE) {
                    break false;
                }
                if now == phase_word(call, REPOST) {
                    break true;
                }
                self.wake[me].wait();
            },
        };
        if to_engine {
            self.engine_meeting(me, call);
        }
        self.ledger.assert_all_arrived(me, call);
    }

    /// Records that a member completed `call`'s count with `meeting`, and checks it against the
    /// call's paths.
    fn completed(&self, call: u64, meeting: Meeting, paths: &[Path]) {
        let before = self.completions[call as usize].fetch_add(1, Ordering::Relaxed);
        assert_eq!(before, 0, "two members completed call {call}'s count");
        let (direct, engine) = (paths.contains(&Direct), paths.contains(&Engine));
        let expected = match (direct, engine) {
            (true, false) => Meeting::AllDirect,
            (false, true) => Meeting::AllEngine,
            _ => Meeting::Mixed,
        };
        assert_eq!(meeting, expected, "call {call} with paths {paths:?}");
    }

    /// The engine's meeting (counted in already): the last of the local members completes it.
    fn engine_meeting(&self, me: usize, call: u64) {
        let count = &self.engine_arrived[(call % 2) as usize];
        if count.fetch_add(1, Ordering::AcqRel) + 1 == self.local {
            count.store(0, Ordering::Relaxed);
            self.engine_done.store(call + 1, Ordering::Release);
            self.wake_all();
            return;
        }
        while self.engine_done.load(Ordering::Acquire) <= call {
            self.wake[me].wait();
        }
    }
}

/// Runs `plan` (per call, each member's path) on a process of as many members, under loom.
fn run(plan: &'static [&'static [Path]], preemptions: usize) {
    model_bounded(preemptions, move || {
        let local = plan[0].len();
        let process = Arc::new(Process::new(local, plan.len()));
        let member = |me: usize, process: Arc<Process>| {
            move || {
                for (call, paths) in plan.iter().enumerate() {
                    process.call(me, call as u64, paths[me], paths);
                }
            }
        };
        let others: Vec<_> = (1..local)
            .map(|me| thread::spawn(member(me, Arc::clone(&process))))
            .collect();
        member(0, Arc::clone(&process))();
        for other in others {
            other.join().unwrap();
        }
        for (call, done) in process.completions.iter().enumerate() {
            assert_eq!(done.load(Ordering::Relaxed), 1, "call {call}'s count");
        }
    });
}

/// Two members through every mix of paths, back to back: mixed, direct, mixed the other way,
/// engine.
#[test]
fn two_members_every_mix_of_paths() {
    run(
        &[
            &[Direct, Engine],
            &[Direct, Direct],
            &[Engine, Direct],
            &[Engine, Engine],
        ],
        2,
    );
}

/// Three members: two on the direct path wait while the third comes through the engine, then a
/// direct call.
#[test]
fn three_members_two_waiting_on_the_direct_path() {
    run(&[&[Direct, Direct, Engine], &[Direct, Direct, Direct]], 2);
}
