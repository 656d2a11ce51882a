//! Loom models of the array reductions: every interleaving (up to the preemption bound) of 2 or 3
//! participants through 2 episodes (and one at a higher bound), mixing `reduce` and `allreduce` over arrays of 1 to 3
//! elements, must give every participant that receives a result the exact sum, report the right
//! episode and `has_result`, and never need a participant's input after its call returned.
//!
//! - `dynamic_pairs`: the pairing word (the compare-and-swap that pairs arrivals, with the count
//!   packed beside the rank, one word per call parity) and the quick-return hand-off (the offer a
//!   waiting participant makes, taken, called and served by its master), with 2 and 3
//!   participants, the root at either end, `reduce` twice in a row (two quick returns back to
//!   back) and `reduce` then `allreduce`; with 3 participants also a single `reduce` and a single
//!   `allreduce` at a preemption bound of 1, where the 2-episode models must stay at 0.
//! - `static_tree`, `linear`, `dynamic_group`: 2 participants, `reduce` and `allreduce`.
//!
//! The quick-return check: each participant gets a fresh input vector per episode and overwrites
//! it with garbage the moment its call returns (keeping it allocated until the model ends, so a
//! late read is a wrong value, not a use after free). Loom switches threads only at the library's
//! synchronization points, so if any interleaving let a master read a participant's input after
//! that participant's call returned, the garbage would reach a result and fail the model. Loom
//! checks the library's own cells (the shared result buffer) for unordered accesses directly.
//!
//! Each model names its preemption bound, chosen so the whole file runs in about two minutes in
//! CI: the two-party quick-return model at 2 (half a million executions, about 70 s), the other
//! two-party models at 1 (up to 200,000 executions each), the three-party 2-episode models at 0,
//! where loom still switches threads at every blocking point (a bound of 1 did not finish in
//! 150 s; a bound of 2 on the two-party `reduce` then `allreduce` models did not finish in 240 s),
//! and the three-party 1-episode models at 1 (about 110,000 executions, 20 s each).
//! `--nocapture` prints how many executions each explored.
//! Run with `scripts/loom.sh loom_reduce` (or see that script for the cargo command).
#![cfg(phasers_loom)]

mod loom_support;
mod reduce_support;

use loom::thread;
use loom_support::model_bounded;
use phasers::{Op, ReduceAlgorithm, Reducer, Reduction};
use reduce_support::Mode;

/// What a spent input holds: far from any sum of real inputs, so a result that read it shows.
const GARBAGE: u64 = 0xDEAD_0000_0000;

/// Rank `rank`'s input element `i` in episode `episode`: distinct digits per rank, element and
/// episode, so a sum that is missing a rank, has one twice, or took another episode's data shows.
fn input(episode: usize, rank: usize, i: usize) -> u64 {
    (1 + rank as u64) + 10 * (1 + i as u64) + 100 * (1 + episode as u64)
}

fn expected(parties: usize, episode: usize, len: usize) -> Vec<u64> {
    (0..len)
        .map(|i| (0..parties).map(|rank| input(episode, rank, i)).sum())
        .collect()
}

/// One participant's episodes: a fresh input per call, spent (overwritten) at once after it.
fn participate(mut participant: Reducer<u64>, parties: usize, root: usize, plan: &[(Mode, usize)]) {
    let rank = participant.rank();
    let mut spent = Vec::new();
    for (episode, &(mode, len)) in plan.iter().enumerate() {
        let mut data: Vec<u64> = (0..len).map(|i| input(episode, rank, i)).collect();
        let receives = mode.has_result(rank, root);
        let mut output = vec![0; if receives { len } else { 0 }];
        let outcome = mode
            .call(&mut participant, &data, &mut output)
            .unwrap_or_else(|error| panic!("rank {rank}, episode {episode}: {error}"));
        // The input is the caller's again: scribble over it before anything else.
        data.fill(GARBAGE);
        spent.push(data);
        assert_eq!(outcome.episode(), episode as u64, "rank {rank}");
        assert_eq!(
            outcome.has_result(),
            receives,
            "rank {rank}, episode {episode}"
        );
        if receives {
            assert_eq!(
                output,
                expected(parties, episode, len),
                "rank {rank}, episode {episode} ({mode:?})"
            );
        }
    }
}

/// Every participant on its own loom thread (rank 0 on the model's main thread), through `plan`.
/// The `Reduction` object is dropped before the participants start: the handles keep the group.
fn reduction_model(
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    plan: &'static [(Mode, usize)],
    max_preemptions: usize,
) {
    model_bounded(max_preemptions, move || {
        let group = Reduction::<u64>::builder(parties)
            .op(Op::Sum)
            .algorithm(algorithm)
            .root(root)
            .build()
            .expect("a valid group");
        let mut handles = group.participants().into_iter();
        drop(group);
        let first = handles.next().expect("rank 0");
        let threads: Vec<_> = handles
            .map(|participant| thread::spawn(move || participate(participant, parties, root, plan)))
            .collect();
        participate(first, parties, root, plan);
        for thread in threads {
            thread.join().expect("a participant's thread panicked");
        }
    });
}

/// `name: algorithm, parties, root, plan, at most this many preemptions;`
macro_rules! reduction_models {
    ($($module:ident => { $($name:ident: $algorithm:expr, $parties:literal, $root:literal, $plan:expr, $preemptions:literal;)* })*) => {$(
        mod $module {
            use super::*;

            $(
                #[test]
                fn $name() {
                    reduction_model($algorithm, $parties, $root, $plan, $preemptions);
                }
            )*
        }
    )*};
}

use Mode::{Allreduce, Reduce};

reduction_models! {
    dynamic_pairs => {
        two_parties_reduce_then_allreduce: ReduceAlgorithm::DynamicPairs, 2, 0, &[(Reduce, 2), (Allreduce, 1)], 1;
        two_parties_root_1_reduce_twice: ReduceAlgorithm::DynamicPairs, 2, 1, &[(Reduce, 1), (Reduce, 3)], 2;
        three_parties_reduce_then_allreduce: ReduceAlgorithm::DynamicPairs, 3, 0, &[(Reduce, 1), (Allreduce, 2)], 0;
        three_parties_root_2_reduce_twice: ReduceAlgorithm::DynamicPairs, 3, 2, &[(Reduce, 2), (Reduce, 1)], 0;
        three_parties_root_2_one_reduce: ReduceAlgorithm::DynamicPairs, 3, 2, &[(Reduce, 2)], 1;
        three_parties_one_allreduce: ReduceAlgorithm::DynamicPairs, 3, 0, &[(Allreduce, 2)], 1;
    }
    static_tree => {
        two_parties_reduce_then_allreduce: ReduceAlgorithm::StaticTree, 2, 0, &[(Reduce, 2), (Allreduce, 1)], 1;
        two_parties_root_1_reduce_twice: ReduceAlgorithm::StaticTree, 2, 1, &[(Reduce, 3), (Reduce, 1)], 1;
    }
    linear => {
        two_parties_reduce_then_allreduce: ReduceAlgorithm::Linear, 2, 0, &[(Reduce, 2), (Allreduce, 3)], 2;
    }
    dynamic_group => {
        two_parties_reduce_then_allreduce: ReduceAlgorithm::DynamicGroup, 2, 0, &[(Reduce, 1), (Allreduce, 2)], 1;
    }
}
