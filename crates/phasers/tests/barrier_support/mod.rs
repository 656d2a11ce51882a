//! Shared helpers for the barrier integration tests.
//!
//! Each test binary includes this module with `mod barrier_support;` and uses only part of it, so
//! unused helpers are allowed.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use phasers::barrier::BarrierAlgorithm;
use phasers::{Algorithm, Barrier, BarrierBuilder, Participant};

/// Every algorithm a test should cover: the concrete ones and `Auto`.
pub fn all_algorithms() -> impl Iterator<Item = Algorithm> {
    Algorithm::CONCRETE
        .into_iter()
        .chain(std::iter::once(Algorithm::Auto))
}

/// One value per cache line, so the test's own bookkeeping does not add false sharing that would
/// change how the barrier behaves under contention.
#[repr(align(128))]
#[derive(Debug, Default)]
pub struct Padded<T>(pub T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Marks episode `k` as "never left by this rank": `left_at[rank] == NEVER`.
pub const NEVER: u64 = u64::MAX;

/// The shared record behind the barrier invariant: who arrived where, who led which episode,
/// and how often the completion action ran.
///
/// `arrived[rank]` holds `k + 1` once `rank` is about to wait for episode `k` (stored *before* the
/// wait). The barrier promises that when any wait for `k` returns, every rank has arrived at `k`, and
/// that what a participant wrote before arriving is visible to everyone released. The stores and loads
/// are `Relaxed` on purpose: the barrier alone must supply the ordering.
#[derive(Debug)]
pub struct Record {
    pub arrived: Vec<Padded<AtomicU64>>,
    /// The episode at which each rank left (`leave` arrives at it without waiting), or `NEVER`.
    pub left_at: Vec<Padded<AtomicU64>>,
    pub leaders: Vec<AtomicU32>,
    /// The rank of the last leader seen for each episode (only meaningful when `leaders[k] == 1`).
    pub leader_rank: Vec<AtomicUsize>,
    pub completions: Padded<AtomicU64>,
    /// Set by the completion action when it ran before every participant had arrived; checked at
    /// the end, so a violation is reported even if the action itself cannot panic usefully.
    pub early_completion: AtomicBool,
}

impl Record {
    pub fn new(parties: usize, episodes: u64) -> Arc<Self> {
        Arc::new(Record {
            arrived: (0..parties).map(|_| Padded(AtomicU64::new(0))).collect(),
            left_at: (0..parties)
                .map(|_| Padded(AtomicU64::new(NEVER)))
                .collect(),
            leaders: (0..episodes).map(|_| AtomicU32::new(0)).collect(),
            leader_rank: (0..episodes)
                .map(|_| AtomicUsize::new(usize::MAX))
                .collect(),
            completions: Padded(AtomicU64::new(0)),
            early_completion: AtomicBool::new(false),
        })
    }

    /// Called right before `rank` waits for (or leaves at) `episode`.
    pub fn arrive(&self, rank: usize, episode: u64) {
        self.arrived[rank].store(episode + 1, Ordering::Relaxed);
    }

    /// Called right before `rank` leaves at `episode`: it arrives there and nowhere later.
    pub fn leave(&self, rank: usize, episode: u64) {
        self.left_at[rank].store(episode, Ordering::Relaxed);
        self.arrive(rank, episode);
    }

    /// The first rank that has not yet arrived at `episode`, if any. A rank that left at `l`
    /// arrived at every episode up to `l` and is not expected after that.
    pub fn laggard(&self, episode: u64) -> Option<(usize, u64)> {
        self.arrived
            .iter()
            .zip(&self.left_at)
            .enumerate()
            .find_map(|(rank, (arrived, left_at))| {
                let left_at = left_at.load(Ordering::Relaxed);
                let seen = arrived.load(Ordering::Relaxed);
                (left_at >= episode && seen < episode + 1).then_some((rank, seen))
            })
    }

    /// The checks a participant makes right after its wait for `episode` returned.
    pub fn check_released(&self, what: &str, rank: usize, episode: u64, leader: bool) {
        if let Some((late, seen)) = self.laggard(episode) {
            panic!(
                "{what}: rank {rank} left episode {episode} before rank {late} arrived \
                 (its arrival count was {seen})"
            );
        }
        let completed = self.completions.load(Ordering::Relaxed);
        assert!(
            completed > episode,
            "{what}: rank {rank} was released from episode {episode} but the completion action \
             has run only {completed} time(s)"
        );
        if leader {
            self.leaders[episode as usize].fetch_add(1, Ordering::Relaxed);
            self.leader_rank[episode as usize].store(rank, Ordering::Relaxed);
        }
    }

    /// The completion action's body: counts the episode and checks that everyone has arrived.
    pub fn complete(&self) {
        let episode = self.completions.load(Ordering::Relaxed);
        if self.laggard(episode).is_some() {
            self.early_completion.store(true, Ordering::Relaxed);
        }
        self.completions.store(episode + 1, Ordering::Relaxed);
    }

    /// The final checks: one completion per episode, and at most (or exactly) one leader each.
    pub fn check_end(&self, what: &str, episodes: u64, exactly_one_leader: bool) {
        assert!(
            !self.early_completion.load(Ordering::Relaxed),
            "{what}: the completion action ran before every participant had arrived"
        );
        assert_eq!(
            self.completions.load(Ordering::Relaxed),
            episodes,
            "{what}: the completion action must run exactly once per episode"
        );
        for (episode, leaders) in self.leaders.iter().enumerate() {
            let leaders = leaders.load(Ordering::Relaxed);
            if exactly_one_leader {
                assert_eq!(
                    leaders, 1,
                    "{what}: episode {episode} had {leaders} leaders"
                );
            } else {
                assert!(
                    leaders <= 1,
                    "{what}: episode {episode} had {leaders} leaders"
                );
            }
        }
    }
}

/// A builder whose completion action feeds `record`.
pub fn builder_with_record(parties: usize, record: &Arc<Record>) -> BarrierBuilder {
    let record = Arc::clone(record);
    Barrier::builder(parties).on_completion(move || record.complete())
}

/// Which rank leads every episode, for the algorithms whose leader is fixed (module docs' table).
pub fn fixed_leader(algorithm: Algorithm) -> Option<usize> {
    match algorithm {
        Algorithm::McsTree | Algorithm::Dissemination | Algorithm::Tournament => Some(0),
        _ => None,
    }
}

/// Runs `episodes` episodes on `barrier` (which must feed `record` from its completion action), one
/// thread per participant, checking the barrier invariant after every wait.
pub fn run_checked<A: BarrierAlgorithm>(
    what: &str,
    barrier: &Barrier<A>,
    record: &Record,
    episodes: u64,
) {
    let participants: Vec<Participant<A>> = barrier.participants();
    assert_eq!(participants.len(), barrier.parties());
    std::thread::scope(|s| {
        for mut p in participants {
            s.spawn(move || {
                let rank = p.rank();
                for episode in 0..episodes {
                    assert_eq!(p.episode(), episode);
                    record.arrive(rank, episode);
                    let released = p.wait().unwrap_or_else(|error| {
                        panic!("{what}: rank {rank}, episode {episode}: {error}")
                    });
                    assert_eq!(
                        released.episode(),
                        episode,
                        "{what}: rank {rank} completed the wrong episode"
                    );
                    record.check_released(what, rank, episode, released.is_leader());
                }
            });
        }
    });
    record.check_end(what, episodes, true);
    if let Some(leader) = fixed_leader(barrier.algorithm()) {
        for (episode, rank) in record.leader_rank.iter().enumerate() {
            assert_eq!(
                rank.load(Ordering::Relaxed),
                leader,
                "{what}: episode {episode} was led by the wrong rank"
            );
        }
    }
}

/// Runs `episodes` plain episodes with every handle in `handles` on its own thread, borrowing them,
/// so the caller keeps the handles for what comes next.
pub fn run_episodes<A: BarrierAlgorithm>(handles: &mut [Participant<A>], episodes: u64) {
    run_recorded(handles, episodes, None);
}

/// As [`run_episodes`], also checking the invariant against `record` when there is one.
pub fn run_recorded<A: BarrierAlgorithm>(
    handles: &mut [Participant<A>],
    episodes: u64,
    record: Option<&Record>,
) {
    std::thread::scope(|s| {
        for p in handles.iter_mut() {
            s.spawn(move || {
                let rank = p.rank();
                for _ in 0..episodes {
                    let expected = p.episode();
                    if let Some(record) = record {
                        record.arrive(rank, expected);
                    }
                    let released = p
                        .wait()
                        .unwrap_or_else(|error| panic!("rank {rank} episode {expected}: {error}"));
                    assert_eq!(released.episode(), expected, "rank {rank}");
                    if let Some(record) = record {
                        record.check_released("run", rank, expected, released.is_leader());
                    }
                }
            });
        }
    });
}

/// A tiny deterministic generator (xorshift64*), so "random" schedules are reproducible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}
