//! Loom models of a reduction whose operator panics in one participant: 2 participants, one
//! `allreduce` of one element, rank 1's input poisoned so that whichever participant combines it
//! panics. In every interleaving exactly one participant panics, and the other must get
//! `Error::Broken` naming it, never `Ok` with a result that the panicking chunk never wrote.
//!
//! The interleaving these models exist for: the slave claims the pair's only chunk and panics in
//! it; the chunk counts as finished, which lets the master see the job done, check whether the
//! group broke, and return. The slave must break the group before its chunk counts (`reduce/
//! job.rs`), or the master returns `Ok` with an unwritten result (`tests/reduce_broken.rs` caught
//! it once under load; here loom finds it in every run).
//!
//! Run with `scripts/loom.sh loom_reduce_panic`.
#![cfg(phasers_loom)]

mod loom_support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use loom::thread;
use loom_support::model_bounded;
use phasers::{Error, Op, ReduceAlgorithm, Reducer, Reduction};

/// The element that makes the operator panic.
const POISON: u64 = 999;

/// What the poisoned operator panics with.
const POISON_TEXT: &str = "the poisoned element";

/// Keeps the expected panic, thousands of times over, out of the output; any other panic (a
/// failed check) is printed as usual.
fn quiet_expected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&POISON_TEXT) {
                default(info);
            }
        }));
    });
}

/// One participant's `allreduce`: its panic (`None`) or what the call returned.
fn participate(mut participant: Reducer<u64>) -> Option<phasers::Result<bool>> {
    let input = [if participant.rank() == 1 { POISON } else { 1 }];
    let mut output = [0u64];
    catch_unwind(AssertUnwindSafe(|| {
        participant
            .allreduce(&input, &mut output)
            .map(|outcome| outcome.has_result())
    }))
    .ok()
}

fn panic_model(algorithm: ReduceAlgorithm, max_preemptions: usize) {
    quiet_expected_panics();
    model_bounded(max_preemptions, move || {
        let op = Op::custom(0, |a: u64, b: u64| {
            if a == POISON || b == POISON {
                std::panic::panic_any(POISON_TEXT);
            }
            a + b
        });
        let group = Reduction::<u64>::builder(2)
            .op(op)
            .algorithm(algorithm)
            .build()
            .expect("a valid group");
        let mut handles = group.participants().into_iter();
        drop(group);
        let first = handles.next().expect("rank 0");
        let second = handles.next().expect("rank 1");
        let other = thread::spawn(move || participate(second));
        let endings = [
            participate(first),
            other.join().expect("the panic is caught"),
        ];
        let panicked: Vec<usize> = (0..2).filter(|&rank| endings[rank].is_none()).collect();
        assert_eq!(
            panicked.len(),
            1,
            "one participant combines the poison: {endings:?}"
        );
        let culprit = panicked[0];
        let survivor = 1 - culprit;
        assert_eq!(
            endings[survivor],
            Some(Err(Error::Broken {
                by: culprit,
                episode: 0
            })),
            "rank {survivor} returned from the call whose operator panicked in rank {culprit}"
        );
    });
}

#[test]
fn static_tree() {
    panic_model(ReduceAlgorithm::StaticTree, 2);
}

#[test]
fn dynamic_pairs() {
    panic_model(ReduceAlgorithm::DynamicPairs, 2);
}

#[test]
fn dynamic_group() {
    panic_model(ReduceAlgorithm::DynamicGroup, 2);
}

#[test]
fn linear() {
    panic_model(ReduceAlgorithm::Linear, 2);
}
