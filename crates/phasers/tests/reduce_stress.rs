//! Stress tests of the array reductions: 1 to 64 participants (on the 2-core CI machines, heavily
//! oversubscribed), every algorithm, `reduce` and `allreduce` mixed at random over many episodes,
//! with seeded random arrival delays of up to 200 microseconds (some participants sleep, some spin,
//! some yield, some come at once). Every result is checked against the sequential sum, and every
//! outcome's episode, algorithm and `has_result`.
//!
//! The quick-return promise is checked indirectly: the moment a call returns, its participant
//! overwrites its input buffer with garbage (the same buffer is reused for the next call). An
//! algorithm that still read a participant's input after its call returned would fold garbage
//! into some result, which the check against the sequential sum catches. The inputs are designed
//! so that a lost, repeated, stale or foreign contribution always changes the sum.
//!
//! Episode counts shrink with the participant count so the whole file stays within about a
//! minute in a debug build on 2 cores.

mod reduce_support;

use std::sync::Arc;

use phasers::{Op, ReduceAlgorithm, Reduction};
use reduce_support::{arrive_after, assert_same, check_algorithm, hash, run_all, Mode};

/// Episodes for `parties` participants, so that each test takes a few seconds in a debug build on
/// 2 cores: few participants spend most of an episode in their arrival delays, many in waking
/// each other up.
fn episodes_for(parties: usize) -> u64 {
    match parties {
        1..=3 => 2000,
        4..=8 => 1000,
        9..=17 => 800,
        _ => 500,
    }
}

/// The lengths an episode may have: empty, shorter than, equal to and longer than the participant
/// count, and a few prime and round sizes, so chunks split unevenly.
fn length(parties: usize, h: u64) -> usize {
    [0, 1, 2, parties - 1, parties, parties + 1, 13, 97, 1000][(h % 9) as usize]
}

/// Rank `rank`'s input element `i` in episode `episode` is `x(episode, i) * (rank + 1) + y(episode,
/// rank)` (wrapping), so the sum over all ranks is `x * parties * (parties + 1) / 2 + sum of y`,
/// computed in O(1) per element instead of O(parties). Missing or repeating a rank changes the sum
/// by that rank's term, and `x` and `y` change with the episode, so stale data shows too.
struct Inputs {
    seed: u64,
    parties: usize,
}

impl Inputs {
    fn x(&self, episode: u64, i: usize) -> u64 {
        hash(&[self.seed, episode]).wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn y(&self, episode: u64, rank: usize) -> u64 {
        hash(&[self.seed, episode, rank as u64, 0x77])
    }

    /// Fills `buffer` with `rank`'s input of `episode`.
    fn fill(&self, buffer: &mut Vec<u64>, episode: u64, rank: usize, len: usize) {
        let y = self.y(episode, rank);
        buffer.clear();
        buffer.extend((0..len).map(|i| {
            self.x(episode, i)
                .wrapping_mul(rank as u64 + 1)
                .wrapping_add(y)
        }));
    }

    /// The sum of every rank's input of `episode`.
    fn expected(&self, episode: u64, len: usize) -> Vec<u64> {
        let n = self.parties as u64;
        let ranks = n * (n + 1) / 2;
        let ys = (0..self.parties).fold(0u64, |sum, rank| sum.wrapping_add(self.y(episode, rank)));
        (0..len)
            .map(|i| self.x(episode, i).wrapping_mul(ranks).wrapping_add(ys))
            .collect()
    }
}

/// Runs the stress for one algorithm and participant count.
fn stress(algorithm: ReduceAlgorithm, parties: usize) {
    let seed = hash(&[parties as u64, algorithm as u64, 0x5EED]);
    let episodes = episodes_for(parties);
    let root = parties * 7 / 10;
    let group = Reduction::<u64>::builder(parties)
        .op(Op::Sum)
        .algorithm(algorithm)
        .root(root)
        .build()
        .expect("a valid group");
    let what = format!("{algorithm}, {parties} parties, root {root}");
    let inputs = Arc::new(Inputs { seed, parties });
    let name = what.clone();
    let checked = run_all(&what, &group, move |mut participant| {
        let rank = participant.rank();
        let mut input = Vec::new();
        let mut output = Vec::new();
        let mut checked = 0u64;
        for episode in 0..episodes {
            // Everyone derives the same mode and length for the episode from the seed.
            let h = hash(&[seed, episode, 0xCA11]);
            let mode = Mode::BOTH[(h >> 32) as usize % 2];
            let len = length(parties, h);
            let receives = mode.has_result(rank, root);
            inputs.fill(&mut input, episode, rank, len);
            output.clear();
            output.resize(if receives { len } else { 0 }, 0);
            arrive_after(hash(&[seed, episode, rank as u64]));
            let outcome = mode
                .call(&mut participant, &input, &mut output)
                .unwrap_or_else(|error| panic!("{name}: rank {rank}, episode {episode}: {error}"));
            // The input may be reused at once: scribble over it before anything else, while
            // others may still be combining this episode.
            for x in input.iter_mut() {
                *x = !*x ^ 0xDEAD_BEEF;
            }
            let here = format!("{name}: rank {rank}, episode {episode} ({mode:?}, length {len})");
            assert_eq!(outcome.episode(), episode, "{here}");
            check_algorithm(&here, algorithm, outcome.algorithm());
            assert_eq!(outcome.has_result(), receives, "{here}");
            if receives {
                assert_same(&here, &output, &inputs.expected(episode, len));
                checked += 1;
            }
        }
        checked
    });
    // Every participant checked its allreduce results, and the root its reduce results too.
    let allreduces = (0..episodes)
        .filter(|&episode| (hash(&[seed, episode, 0xCA11]) >> 32) % 2 == 1)
        .count() as u64;
    for (rank, &count) in checked.iter().enumerate() {
        let expected = if rank == root { episodes } else { allreduces };
        assert_eq!(
            count, expected,
            "{what}: rank {rank} checked too few results"
        );
    }
}

/// One `#[test]` per (algorithm, participant count), so a failure names both.
macro_rules! stress_tests {
    ($($module:ident: $algorithm:expr;)*) => {$(
        mod $module {
            use super::*;

            #[test]
            fn parties_1_to_5() {
                for parties in 1..=5 {
                    stress($algorithm, parties);
                }
            }

            #[test]
            fn parties_7_8_9() {
                for parties in [7, 8, 9] {
                    stress($algorithm, parties);
                }
            }

            #[test]
            fn parties_16_17() {
                for parties in [16, 17] {
                    stress($algorithm, parties);
                }
            }

            #[test]
            fn parties_31_33() {
                for parties in [31, 33] {
                    stress($algorithm, parties);
                }
            }

            #[test]
            fn parties_64() {
                stress($algorithm, 64);
            }
        }
    )*};
}

stress_tests! {
    linear: ReduceAlgorithm::Linear;
    static_tree: ReduceAlgorithm::StaticTree;
    dynamic_pairs: ReduceAlgorithm::DynamicPairs;
    dynamic_group: ReduceAlgorithm::DynamicGroup;
    auto: ReduceAlgorithm::Auto;
}
