//! Loom models of a reduction that loses two participants in the wrong order (issue 31): 3
//! participants, one `reduce` of one element rooted at rank 0. Rank 2 is dropped without ever
//! calling; rank 1 makes the call and drops its handle right after it returns. Rank 1 may have
//! quick-returned (its data taken by the root) and dropped its handle, breaking the group from
//! call 1, before rank 2 breaks it from call 0; the group must then lower the break to call 0, or
//! the root waits for ever for data that can never come.
//!
//! In every interleaving the root must get `Error::Broken { by: 2, episode: 0 }`, and rank 1
//! either `Ok` without the result (its data was consumed) or that same error. Loom reports a hang
//! as a deadlock.
//!
//! Run with `scripts/loom.sh loom_reduce_leave`.
#![cfg(phasers_loom)]

mod loom_support;

use loom::thread;
use loom_support::model_bounded;
use phasers::{Error, Op, ReduceAlgorithm, Reduction};

const LOST: Error = Error::Broken { by: 2, episode: 0 };

fn leave_model(algorithm: ReduceAlgorithm, max_preemptions: usize) {
    model_bounded(max_preemptions, move || {
        let group = Reduction::<u64>::builder(3)
            .op(Op::Sum)
            .algorithm(algorithm)
            .root(0)
            .build()
            .expect("a valid group");
        let mut handles = group.participants().into_iter();
        drop(group);
        let mut root = handles.next().expect("rank 0");
        let mut leaver = handles.next().expect("rank 1");
        let lost = handles.next().expect("rank 2");
        let leaving = thread::spawn(move || {
            let outcome = leaver.reduce(&[1], &mut []);
            drop(leaver);
            outcome
        });
        let losing = thread::spawn(move || drop(lost));
        let mut output = [0u64];
        let rooted = root.reduce(&[1], &mut output);
        let left = leaving.join().expect("rank 1 does not panic");
        losing.join().expect("dropping does not panic");
        assert_eq!(rooted, Err(LOST), "the root, with rank 1 {left:?}");
        assert!(
            matches!(&left, Ok(outcome) if !outcome.has_result()) || left == Err(LOST),
            "rank 1 returned {left:?}"
        );
    });
}

/// One preemption: 21,000 executions in about 2 s; two take 2.5 million and over 3 minutes, too
/// long for CI. One already finds the hang without the fix.
#[test]
fn static_tree() {
    leave_model(ReduceAlgorithm::StaticTree, 1);
}

#[test]
fn dynamic_pairs() {
    leave_model(ReduceAlgorithm::DynamicPairs, 2);
}
