//! Stress tests of teams: up to 64 members (on the 2-core CI machines, heavily oversubscribed),
//! split into sub-teams that run long random sequences of collectives at the same time as each
//! other and as the parent team, with seeded random arrival delays (some members sleep, some
//! spin, some yield, some come at once). Every member of a team derives the same sequence of calls
//! from a seed shared by the team (the parent's seed, the sub-team's color, the grid row), so no
//! coordination is needed beyond the collectives under test, and every result is checked against
//! its sequential definition.
//!
//! The barrier test checks the barrier's one promise directly: a member leaving barrier k finds
//! that every member has arrived at k, counted in a shared counter incremented just before each
//! arrival. It runs on the whole team and on sub-teams at the same time, through every form of
//! the barrier (blocking, non-blocking waited or polled, `barrier_checked` with equal values).
//!
//! Each stress team draws its `reduce_algorithm` from its seed (sub-teams inherit it), so the
//! random runs cover every one of seed 003's algorithms; the 64-member allreduce test runs each
//! of them on arrays long enough to split into several job chunks, with spread-out arrivals.
//!
//! Sizes and call counts are chosen so that the file takes well under 20 seconds in a debug build
//! on 2 cores.

#[macro_use]
mod team_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use phasers::{Member, Op, ReduceAlgorithm, Team};
use team_support::{
    arrive_after, check_call, hash, run_all, Case, Collective, OpKind, Sample, Stats, Style,
    SYNC_MODES,
};

/// Block lengths of random calls: short, so that the many calls of a stress run fit in a debug
/// build, but including empty and lengths that split unevenly.
const LENGTHS: [usize; 8] = [0, 1, 2, 3, 7, 13, 31, 64];

/// A random call for a team of `size`, drawn from `h`, which every member of the team computes
/// alike. Returns the call and whether it moves `Stats` (the `*_with` forms) instead of `u64`.
fn random_case(size: usize, h: u64) -> (Case, bool) {
    let stats = (h >> 50) % 4 == 0;
    let ops: &[OpKind] = if stats { Stats::OPS } else { u64::OPS };
    let case = Case {
        collective: Collective::ALL[(h % Collective::ALL.len() as u64) as usize],
        root: ((h >> 8) % size as u64) as usize,
        len: LENGTHS[((h >> 16) % LENGTHS.len() as u64) as usize],
        op: ops[((h >> 24) % ops.len() as u64) as usize],
        style: Style::ALL[((h >> 32) % 3) as usize],
        sync: SYNC_MODES[((h >> 40) % 3) as usize],
        seed: hash(&[h, 0xCA5E]),
    };
    (case, stats)
}

/// Makes a random call drawn from `h` on `member` after a random delay of the member's own, and
/// checks it.
fn random_call(what: &str, member: &mut Member, h: u64, delay: u64) {
    let (case, stats) = random_case(member.parties(), h);
    arrive_after(delay);
    if stats {
        check_call::<Stats>(what, member, &case);
    } else {
        check_call::<u64>(what, member, &case);
    }
}

/// One stress run: `size` members (in a checked team for even seeds) split by random colors (about one in eight opting out) and
/// keys, and into the rows of a grid; for each of `phases` phases every member makes `rounds`
/// random calls on its color team, then `rounds` on its row team, then one on the whole team.
fn stress(size: usize, seed: u64, phases: u64, rounds: u64) {
    // Checked and unchecked teams take different paths through a call's opening meeting.
    let checked = seed % 2 == 0;
    let algorithm = ReduceAlgorithm::ALL[(hash(&[seed, 0xA1]) % 5) as usize];
    let team = Team::builder(size)
        .checked(checked)
        .reduce_algorithm(algorithm)
        .build()
        .expect("a valid team");
    let what = format!("{size} members, seed {seed:#x}, checked {checked}, {algorithm}");
    let name = what.clone();
    let colors = 1 + hash(&[seed, 0xC0]) % 4;
    let columns = 1 + (hash(&[seed, 0x6D]) % size as u64) as usize;
    let counts = run_all(&what, team.participants(), move |mut whole| {
        let rank = whole.rank();
        let h = hash(&[seed, rank as u64]);
        let color = if h % 8 == 0 {
            phasers::team::NONE
        } else {
            ((h >> 8) % colors) as u32
        };
        let key = ((h >> 16) % 3) as i64;
        let mut sub = whole
            .split(color, key)
            .unwrap_or_else(|error| panic!("{name}: rank {rank}: split: {error}"));
        let (mut row, _column) = whole
            .split_grid(columns)
            .unwrap_or_else(|error| panic!("{name}: rank {rank}: split_grid: {error}"));
        let row_index = (rank / columns) as u64;
        let mut checked = 0u64;
        for phase in 0..phases {
            if let Some(sub) = sub.as_mut() {
                for round in 0..rounds {
                    let here = format!("{name}: color {color}, phase {phase}, round {round}");
                    let call = hash(&[seed, 0x5B, u64::from(color), phase, round]);
                    random_call(
                        &here,
                        sub,
                        call,
                        hash(&[seed, rank as u64, phase, round, 1]),
                    );
                    checked += 1;
                }
            }
            for round in 0..rounds {
                let here = format!("{name}: row {row_index}, phase {phase}, round {round}");
                let call = hash(&[seed, 0x20, row_index, phase, round]);
                random_call(
                    &here,
                    &mut row,
                    call,
                    hash(&[seed, rank as u64, phase, round, 2]),
                );
                checked += 1;
            }
            let here = format!("{name}: whole team, phase {phase}");
            let call = hash(&[seed, 0xA1, phase]);
            random_call(
                &here,
                &mut whole,
                call,
                hash(&[seed, rank as u64, phase, 3]),
            );
            checked += 1;
        }
        (sub.is_some(), checked)
    });
    // Guards against a run that checked nothing because of a mistake in this test: every member
    // made every call it was meant to.
    for (rank, (in_sub, checked)) in counts.into_iter().enumerate() {
        let expected = phases * (rounds * (1 + u64::from(in_sub)) + 1);
        assert_eq!(
            checked, expected,
            "{what}: rank {rank} checked too few calls"
        );
    }
}

#[test]
fn random_collectives_on_split_teams_small() {
    for size in 1..=5 {
        for seed in 0..3 {
            stress(size, hash(&[size as u64, seed]), 40, 6);
        }
    }
}

#[test]
fn random_collectives_on_split_teams_16() {
    for seed in 0..2 {
        stress(16, hash(&[16, seed]), 60, 6);
    }
}

#[test]
fn random_collectives_on_split_teams_64() {
    stress(64, hash(&[64, 0]), 40, 5);
}

/// 64 members (32 per core) allreduce and reduce arrays of up to three job chunks with every
/// algorithm, each member arriving after a random delay of its own, and check every result.
#[test]
fn allreduce_with_every_algorithm_64() {
    const SIZE: usize = 64;
    const LENGTHS: [usize; 3] = [9, 300, 2500];
    for algorithm in ReduceAlgorithm::ALL {
        let team = Team::builder(SIZE)
            .reduce_algorithm(algorithm)
            .build()
            .expect("a valid team");
        let what = format!("{SIZE} members, {algorithm}");
        let name = what.clone();
        run_all(&what, team.participants(), move |mut member| {
            let rank = member.rank() as u64;
            for call in 0..6u64 {
                let len = LENGTHS[(call % 3) as usize];
                let mine: Vec<u64> = (0..len as u64).map(|i| i * rank + call).collect();
                arrive_after(hash(&[0xA11, rank, call]));
                let mut sum = vec![0; len];
                member
                    .allreduce(&mine, &mut sum, Op::Sum)
                    .unwrap_or_else(|error| panic!("{name}: call {call}: {error}"));
                // The sum over ranks of i * rank + call.
                let ranks = SIZE as u64 * (SIZE as u64 - 1) / 2;
                for (i, &got) in sum.iter().enumerate() {
                    assert_eq!(
                        got,
                        i as u64 * ranks + SIZE as u64 * call,
                        "{name}: call {call}"
                    );
                }
                let root = (call as usize * 7) % SIZE;
                let mut top = vec![0; if member.rank() == root { len } else { 0 }];
                member
                    .reduce(root, &mine, &mut top, Op::Max)
                    .unwrap_or_else(|error| panic!("{name}: reduce {call}: {error}"));
                for (i, &got) in top.iter().enumerate() {
                    assert_eq!(
                        got,
                        i as u64 * (SIZE as u64 - 1) + call,
                        "{name}: call {call}"
                    );
                }
            }
        });
    }
}

/// One barrier of the invariant test, in a form drawn from `h` (the same for every member of the
/// team): blocking, non-blocking waited or polled, or `barrier_checked` with the episode as value
/// (equal everywhere, so it must pass).
fn barrier(member: &mut Member, h: u64, episode: u64) -> phasers::Result<()> {
    member.set_sync_mode(SYNC_MODES[((h >> 8) % 3) as usize]);
    match h % 4 {
        0 => call_in_style!(Style::Blocking, member, barrier, ibarrier()),
        1 => call_in_style!(Style::Wait, member, barrier, ibarrier()),
        2 => call_in_style!(Style::Poll, member, barrier, ibarrier()),
        _ => member.barrier_checked(episode),
    }
}

/// Counts arrivals at a barrier of a team of `size`: `arrived` is incremented just before every
/// arrival, so after barrier k (numbered from 0) it is at least `size * (k + 1)`.
struct Arrivals {
    arrived: AtomicUsize,
    size: usize,
}

impl Arrivals {
    fn new(size: usize) -> Self {
        Arrivals {
            arrived: AtomicUsize::new(0),
            size,
        }
    }

    /// Passes barrier `episode` on `member` and checks the invariant on leaving.
    fn pass(&self, what: &str, member: &mut Member, h: u64, episode: u64) {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        barrier(member, h, episode)
            .unwrap_or_else(|error| panic!("{what}: barrier {episode}: {error}"));
        let arrived = self.arrived.load(Ordering::SeqCst);
        let needed = self.size * (episode as usize + 1);
        assert!(
            arrived >= needed,
            "{what}: left barrier {episode} when only {arrived} of {needed} arrivals had happened"
        );
    }
}

/// Nobody leaves barrier k before all arrived at k: on the whole team, and on split sub-teams at
/// the same time (each with its own counter), with random delays before each arrival.
fn barrier_invariant(size: usize, episodes: u64, seed: u64) {
    let team = Team::new(size).expect("a valid team");
    let what = format!("{size} members, seed {seed:#x}");
    let colors = 3;
    let color_of = move |rank: usize| (hash(&[seed, rank as u64]) % colors) as u32;
    let whole_count = Arc::new(Arrivals::new(size));
    let color_counts: Arc<Vec<Arrivals>> = Arc::new(
        (0..colors as u32)
            .map(|c| Arrivals::new((0..size).filter(|&r| color_of(r) == c).count()))
            .collect(),
    );
    let name = what.clone();
    run_all(&what, team.participants(), move |mut whole| {
        let rank = whole.rank();
        let color = color_of(rank);
        let mut sub = whole
            .split(color, 0)
            .unwrap_or_else(|error| panic!("{name}: rank {rank}: split: {error}"))
            .expect("every member has a color");
        let here = format!("{name}: rank {rank}");
        for episode in 0..episodes {
            arrive_after(hash(&[seed, rank as u64, episode]));
            whole_count.pass(
                &format!("{here}, whole team"),
                &mut whole,
                hash(&[seed, episode]),
                episode,
            );
            color_counts[color as usize].pass(
                &format!("{here}, color {color}"),
                &mut sub,
                hash(&[seed, u64::from(color), episode]),
                episode,
            );
        }
    });
}

#[test]
fn barrier_invariant_small() {
    for size in [1, 2, 3, 5, 8] {
        barrier_invariant(size, 1000, hash(&[size as u64, 0xBA]));
    }
}

#[test]
fn barrier_invariant_64() {
    barrier_invariant(64, 1000, hash(&[64, 0xBA]));
}
