//! `TeamBuilder::reduce_algorithm`: every one of seed 003's algorithms gives a team's `reduce`
//! and `allreduce` the same results as the linear algorithm (the default), for teams of 1 to 8
//! members and lengths from 0 to several job chunks, with integer ops compared exactly and
//! floating-point sums of small integers (exact in any order); checked mode still names
//! mismatched calls before any data moves; an unchecked team's mismatched call fails instead of
//! hanging; sub-teams inherit the choice; and the team stays usable across element types, sync
//! modes and many calls (past `Auto`'s first choices).
//!
//! Every run is under the watchdog (`team_support::run_all`), so a hang fails the test.

mod team_support;

use phasers::{Error, Member, Op, ReduceAlgorithm, SyncMode, Team};
use team_support::{hash, run_all};

/// Team sizes: one member, two, odd and even counts, and a count that is not a power of two.
const SIZES: [usize; 5] = [1, 2, 3, 5, 8];

/// Element counts: empty, inline-sized (up to 8 `u64`s, 64 bytes: the team's own path), just
/// above it, and several of the reduce module's job chunks (1,024 elements each).
const LENGTHS: [usize; 6] = [0, 1, 8, 9, 100, 3000];

/// Member `rank`'s input of call `call`: varied values, so that a wrong pairing shows.
fn input(call: u64, rank: usize, len: usize) -> Vec<u64> {
    (0..len)
        .map(|i| hash(&[call, rank as u64, i as u64]) % 1000)
        .collect()
}

/// The results one member saw over a fixed sequence of calls: for each call, its output (the
/// root's only, for `reduce`).
type Seen = Vec<Vec<u64>>;

/// Runs the sequence of calls every algorithm must agree on: for each length, an `allreduce`
/// with `Sum`, a `reduce` with `Max` to a root that moves, an `allreduce` with `Xor`, an
/// `allreduce` of `f64` sums (exact: small integers), and an `allreduce` with an `Op::Custom`.
fn calls(member: &mut Member) -> Seen {
    let (rank, size) = (member.rank(), member.parties());
    let mut seen = Vec::new();
    for (index, &len) in LENGTHS.iter().enumerate() {
        let call = index as u64;
        let mine = input(call, rank, len);
        let mut out = vec![0u64; len];
        member.allreduce(&mine, &mut out, Op::Sum).unwrap();
        seen.push(out);

        let root = index % size;
        let mut out = vec![0u64; if rank == root { len } else { 0 }];
        member.reduce(root, &mine, &mut out, Op::Max).unwrap();
        seen.push(out);

        let mut out = vec![0u64; len];
        member.allreduce(&mine, &mut out, Op::Xor).unwrap();
        seen.push(out);

        let floats: Vec<f64> = mine.iter().map(|&x| x as f64).collect();
        let mut out = vec![0.0f64; len];
        member.allreduce(&floats, &mut out, Op::Sum).unwrap();
        seen.push(out.iter().map(|&x| x as u64).collect());

        let mut out = vec![0u64; len];
        // Associative and commutative, as every operator must be: the largest, made odd.
        let largest_odd = Op::custom(0, |a: u64, b: u64| a.max(b) | 1);
        member.allreduce(&mine, &mut out, largest_odd).unwrap();
        seen.push(out);
    }
    seen
}

/// What every member of a team of `size` built with `algorithm` saw, by rank.
fn run(size: usize, algorithm: ReduceAlgorithm) -> Vec<Seen> {
    let team = Team::builder(size)
        .reduce_algorithm(algorithm)
        .build()
        .expect("a valid team");
    let what = format!("{size} members, {algorithm}");
    run_all(&what, team.participants(), |mut member| calls(&mut member))
}

#[test]
fn every_algorithm_gives_the_linear_results() {
    for size in SIZES {
        let linear = run(size, ReduceAlgorithm::Linear);
        // The linear results against the sequential definition, once: the sum of 100 elements.
        let len = LENGTHS[4];
        let expected: Vec<u64> = (0..len)
            .map(|i| (0..size).map(|rank| input(4, rank, len)[i]).sum())
            .collect();
        assert_eq!(linear[0][4 * 5], expected, "{size} members: linear sum");
        for algorithm in ReduceAlgorithm::ALL {
            let got = run(size, algorithm);
            for rank in 0..size {
                for (call, (got, want)) in got[rank].iter().zip(&linear[rank]).enumerate() {
                    assert_eq!(
                        got, want,
                        "{size} members, {algorithm}, rank {rank}, call {call}: differs from linear"
                    );
                }
            }
        }
    }
}

#[test]
fn the_default_is_linear_and_sub_teams_inherit_the_choice() {
    assert_eq!(
        Team::new(3).unwrap().reduce_algorithm(),
        ReduceAlgorithm::Linear
    );
    let team = Team::builder(4)
        .reduce_algorithm(ReduceAlgorithm::StaticTree)
        .build()
        .unwrap();
    assert!(format!("{team:?}").contains("StaticTree"));
    let sums = run_all("split", team.participants(), |mut member| {
        let rank = member.rank();
        let mut half = member.split((rank % 2) as u32, 0).unwrap().unwrap();
        let mine = vec![rank as u64; 500];
        let mut out = vec![0; 500];
        half.allreduce(&mine, &mut out, Op::Sum).unwrap();
        out[0]
    });
    assert_eq!(sums, [2, 4, 2, 4]);
}

#[test]
fn many_calls_sync_modes_and_element_types_share_one_team() {
    for algorithm in ReduceAlgorithm::ALL {
        let team = Team::builder(3)
            .reduce_algorithm(algorithm)
            .build()
            .unwrap();
        run_all(
            &format!("{algorithm}"),
            team.participants(),
            move |mut member| {
                let rank = member.rank();
                for call in 0..24u64 {
                    let mode = SyncMode::ALL[(call % 3) as usize];
                    member.set_sync_mode(mode);
                    let len = [20, 2000, 9][(call % 3) as usize];
                    let mine: Vec<u64> = vec![call + rank as u64; len];
                    let mut out = vec![0; len];
                    member.allreduce(&mine, &mut out, Op::Sum).unwrap();
                    assert!(
                        out.iter().all(|&x| x == 3 * call + 3),
                        "{algorithm} {mode} {call}"
                    );
                    let mine = vec![rank as i32 - 1; len];
                    let mut out = vec![0; len];
                    member.allreduce(&mine, &mut out, Op::Min).unwrap();
                    assert!(out.iter().all(|&x| x == -1), "{algorithm} {mode} {call}");
                }
            },
        );
    }
}

#[test]
fn checked_mode_still_names_a_mismatch_before_data_moves() {
    for algorithm in [ReduceAlgorithm::DynamicPairs, ReduceAlgorithm::Auto] {
        let team = Team::builder(3)
            .reduce_algorithm(algorithm)
            .build()
            .unwrap();
        let results = run_all("mismatch", team.participants(), move |mut member| {
            let rank = member.rank();
            // Member 2 passes a longer array.
            let len = if rank == 2 { 40 } else { 30 };
            let mine = vec![1u64; len];
            let mut out = vec![0; len];
            let lengths = member.allreduce(&mine, &mut out, Op::Sum);
            // Member 1 passes a function of its own where the others pass a built-in op.
            let mine = vec![1u64; 30];
            let mut out = vec![0; 30];
            let operators = if rank == 1 {
                member.allreduce_with(&mine, &mut out, |a, b| a + b)
            } else {
                member.allreduce(&mine, &mut out, Op::Sum)
            };
            // The team is still usable.
            let mut out = vec![0; 30];
            member.allreduce(&mine, &mut out, Op::Sum).unwrap();
            assert_eq!(out, vec![3; 30]);
            (lengths, operators)
        });
        for (rank, (lengths, operators)) in results.into_iter().enumerate() {
            assert!(
                matches!(lengths, Err(Error::Mismatch { what: "length", .. })),
                "{algorithm}, rank {rank}: {lengths:?}"
            );
            assert!(
                matches!(
                    operators,
                    Err(Error::Mismatch {
                        what: "operation",
                        ..
                    })
                ),
                "{algorithm}, rank {rank}: {operators:?}"
            );
        }
    }
}

#[test]
fn an_unchecked_mismatch_fails_instead_of_hanging() {
    for algorithm in ReduceAlgorithm::ALL {
        let team = Team::builder(3)
            .unchecked()
            .reduce_algorithm(algorithm)
            .build()
            .unwrap();
        let results = run_all("unchecked", team.participants(), |mut member| {
            let rank = member.rank();
            let len = if rank == 0 { 50 } else { 60 };
            let mine = vec![1u64; len];
            let mut out = vec![0; len];
            member.allreduce(&mine, &mut out, Op::Sum)
        });
        for (rank, result) in results.into_iter().enumerate() {
            assert!(result.is_err(), "{algorithm}, rank {rank}: {result:?}");
        }
    }
}
