//! The harness phasers-mpi's loom models share: a bounded search that counts its executions, and
//! a ledger of arrivals that checks the barrier invariant through loom's race checker.
//!
//! **The barrier invariant, with visibility.** Before participant `r` arrives at episode `k` it
//! writes `true` into its own non-atomic cell for `(r, k)`; after its wait for `k` returns, a
//! participant reads every participant's cell for `k`. The cells are loom `UnsafeCell`s, so loom
//! fails the model if such a read is not ordered after the write by happens-before (someone was
//! released before everyone had arrived, or without the ordering that makes their writes
//! visible), and the value read must be `true`. A cell access is no scheduling point, so the
//! checks cost loom no interleavings.
//!
//! Loom reports a participant that never leaves its wait as a deadlock (every thread blocked) or
//! as an execution that exceeds its branch limit (every thread spinning): a model that finishes
//! shows that nobody hangs, in every interleaving it explored.

#![allow(dead_code)] // each model file uses its own part of the harness

use loom::cell::UnsafeCell;

/// Runs `f` under loom with every interleaving of at most `max_preemptions` preemptions, or
/// fewer when `LOOM_MAX_PREEMPTIONS` says so (`scripts/loom.sh` sets 2). Prints how many
/// executions it explored (shown with `--nocapture`).
pub fn model_bounded(max_preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    let bound = builder.preemption_bound.unwrap_or(2).min(max_preemptions);
    builder.preemption_bound = Some(bound);
    // A participant that polls several times per episode makes long executions; loom's default
    // of 1000 branches per execution would cut some complete ones short.
    builder.max_branches = 100_000;
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    eprintln!(
        "{}: {} executions, at most {bound} preemptions",
        std::thread::current().name().unwrap_or("model"),
        executions.load(std::sync::atomic::Ordering::Relaxed)
    );
}

/// Which participant has arrived at which episode, checked by loom's race checker.
pub struct Ledger {
    parties: usize,
    episodes: usize,
    /// `arrived[rank * episodes + k]`: `rank` is about to arrive at episode `k` (or has).
    arrived: Box<[UnsafeCell<bool>]>,
}

// SAFETY: the cells are loom cells: every access goes through loom's race checker, which fails
// the model on any access that is not ordered by happens-before. That check is the point.
unsafe impl Sync for Ledger {}
// SAFETY: as above; the values are plain `bool`s.
unsafe impl Send for Ledger {}

impl Ledger {
    pub fn new(parties: usize, episodes: usize) -> Self {
        Ledger {
            parties,
            episodes,
            arrived: (0..parties * episodes)
                .map(|_| UnsafeCell::new(false))
                .collect(),
        }
    }

    fn cell(&self, rank: usize, episode: u64) -> &UnsafeCell<bool> {
        &self.arrived[rank * self.episodes + episode as usize]
    }

    /// Records that `rank` arrives at `episode`; call before it does.
    pub fn arrive(&self, rank: usize, episode: u64) {
        self.cell(rank, episode).with_mut(|arrived| {
            // SAFETY: loom checks the access; only `rank` writes its own cells.
            let arrived = unsafe { &mut *arrived };
            assert!(!*arrived, "rank {rank} arrived twice at episode {episode}");
            *arrived = true;
        });
    }

    /// Checks, as `observer`, that every participant has arrived at `episode` and that their
    /// arrivals happened before this check (the barrier invariant).
    pub fn assert_all_arrived(&self, observer: usize, episode: u64) {
        for rank in 0..self.parties {
            // SAFETY: loom checks the access: it fails the model unless `rank`'s write happened
            // before this read, which is what the barrier promises.
            let arrived = self.cell(rank, episode).with(|arrived| unsafe { *arrived });
            assert!(
                arrived,
                "rank {observer} went past episode {episode} before rank {rank} arrived"
            );
        }
    }
}
