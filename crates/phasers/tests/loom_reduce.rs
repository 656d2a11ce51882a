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
//! - `mismatch`: calls whose participants disagree (a longer array at the participant that arrives
//!   last in the tree, `reduce` against `allreduce`, an output of the wrong length), followed by a
//!   matched call. Every participant must get the same `Error::Mismatch` by its last call, never
//!   an `Ok` with a result from the mismatched call, and nobody may wait for ever: the mismatched
//!   call completes without a result, its completer fails the group from the next call on, and
//!   that wakes a participant that quick-returned and already waits in the next call.
//!
//! Each model names its preemption bound, chosen so the whole file runs in about three minutes in
//! CI: the two-party quick-return model at 2 (half a million executions, about 70 s), the other
//! two-party models at 1 (up to 200,000 executions each), the three-party 2-episode models at 0,
//! where loom still switches threads at every blocking point (a bound of 1 did not finish in
//! 150 s; a bound of 2 on the two-party `reduce` then `allreduce` models did not finish in 240 s),
//! and the three-party 1-episode models at 1 (about 110,000 executions, 20 s each). The mismatch
//! models are cheaper (a mismatched call combines nothing): the two-party ones at 2 (up to 15,000
//! executions), the three-party ones at 1, where the static tree's explores about 340,000
//! executions (45 s), a fifth of them with a participant that quick-returned from the mismatched
//! call, and the dynamic pairs' about 2,000 (at 2 it would take 290,000).
//! `--nocapture` prints how many executions each explored.
//! Run with `scripts/loom.sh loom_reduce` (or see that script for the cargo command).
#![cfg(phasers_loom)]

mod loom_support;
mod reduce_support;

use loom::thread;
use loom_support::model_bounded;
use phasers::{Error, Op, ReduceAlgorithm, Reducer, Reduction};
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

/// One participant's mismatched call then matched calls (`plan[0]` is this participant's own
/// mismatched call, the rest are everyone's), returning every outcome. Inputs are spent at once
/// after each call, as in [`participate`].
fn participate_mismatched(
    mut participant: Reducer<u64>,
    root: usize,
    plan: &[(Mode, usize, usize)],
) -> Vec<phasers::Result<phasers::ReduceOutcome>> {
    let rank = participant.rank();
    let mut spent = Vec::new();
    let mut outcomes = Vec::new();
    for (episode, &(mode, len, out_len)) in plan.iter().enumerate() {
        let mut data: Vec<u64> = (0..len).map(|i| input(episode, rank, i)).collect();
        let receives = mode.has_result(rank, root);
        let mut output = vec![0; if receives { out_len } else { 0 }];
        outcomes.push(mode.call(&mut participant, &data, &mut output));
        data.fill(GARBAGE);
        spent.push(data);
    }
    outcomes
}

/// `plans[rank]` per participant; checks that everyone gets the same `Mismatch` of kind `what` by
/// its last call, that every call after the first error returns it too, and that an `Ok` before it
/// carries no result.
fn mismatch_model(
    algorithm: ReduceAlgorithm,
    root: usize,
    plans: &'static [&'static [(Mode, usize, usize)]],
    what: &'static str,
    max_preemptions: usize,
) {
    model_bounded(max_preemptions, move || {
        let parties = plans.len();
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
            .map(|participant| {
                let plan = plans[participant.rank()];
                thread::spawn(move || participate_mismatched(participant, root, plan))
            })
            .collect();
        let mut outcomes = vec![participate_mismatched(first, root, plans[0])];
        for thread in threads {
            outcomes.push(thread.join().expect("a participant's thread panicked"));
        }
        let error = outcomes
            .iter()
            .flatten()
            .find_map(|outcome| outcome.as_ref().err().cloned())
            .expect("someone learns of the mismatch");
        assert!(
            matches!(&error, Error::Mismatch { what: kind, .. } if *kind == what),
            "{error}"
        );
        for (rank, calls) in outcomes.iter().enumerate() {
            let first_error = calls
                .iter()
                .position(|outcome| outcome.is_err())
                .unwrap_or_else(|| panic!("rank {rank} never learned of the mismatch"));
            for (episode, outcome) in calls.iter().enumerate() {
                match outcome {
                    Ok(done) => assert!(
                        episode < first_error && !done.has_result(),
                        "rank {rank}, episode {episode}: {done:?}"
                    ),
                    Err(got) => assert_eq!(got, &error, "rank {rank}, episode {episode}"),
                }
            }
        }
    });
}

/// `name: algorithm, root, plans, kind of mismatch, at most this many preemptions;`
macro_rules! mismatch_models {
    ($($name:ident: $algorithm:expr, $root:literal, $plans:expr, $what:literal, $preemptions:literal;)*) => {
        mod mismatch {
            use super::*;

            $(
                #[test]
                fn $name() {
                    mismatch_model($algorithm, $root, $plans, $what, $preemptions);
                }
            )*
        }
    };
}

mismatch_models! {
    // Rank 1 is consumed by the root in the first round and may return before rank 2's longer
    // array is seen; it must learn from its next call, which waits for the root.
    static_tree_three_parties_late_length: ReduceAlgorithm::StaticTree, 0, &[
        &[(Reduce, 1, 1), (Reduce, 1, 1)],
        &[(Reduce, 1, 0), (Reduce, 1, 0)],
        &[(Reduce, 2, 0), (Reduce, 1, 0)],
    ], "length", 1;
    // Whoever pairs first may return before the odd one arrives.
    dynamic_pairs_three_parties_length: ReduceAlgorithm::DynamicPairs, 0, &[
        &[(Reduce, 1, 1), (Reduce, 1, 1)],
        &[(Reduce, 1, 0), (Reduce, 1, 0)],
        &[(Reduce, 2, 0), (Reduce, 1, 0)],
    ], "length", 1;
    dynamic_pairs_two_parties_operation: ReduceAlgorithm::DynamicPairs, 1, &[
        &[(Allreduce, 1, 1), (Reduce, 1, 1)],
        &[(Reduce, 1, 1), (Reduce, 1, 1)],
    ], "operation", 2;
    static_tree_two_parties_output_length: ReduceAlgorithm::StaticTree, 0, &[
        &[(Allreduce, 2, 2), (Allreduce, 1, 1)],
        &[(Allreduce, 2, 1), (Allreduce, 1, 1)],
    ], "output length", 2;
    linear_two_parties_length: ReduceAlgorithm::Linear, 0, &[
        &[(Allreduce, 1, 1), (Reduce, 1, 1)],
        &[(Allreduce, 3, 3), (Reduce, 1, 1)],
    ], "length", 2;
    dynamic_group_two_parties_length: ReduceAlgorithm::DynamicGroup, 0, &[
        &[(Reduce, 2, 2), (Reduce, 1, 1)],
        &[(Reduce, 1, 0), (Reduce, 1, 0)],
    ], "length", 2;
}
