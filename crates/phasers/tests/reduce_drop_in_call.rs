//! A participant lost while the others are inside a call never hangs them (issue 31).
//!
//! The survivors enter `reduce` or `allreduce`; one participant, which never entered, is then
//! dropped, or its thread panics. Every survivor must learn of it within 50 ms: its call
//! returns `Broken` naming the lost rank, except that a `reduce` participant without the result
//! may quick-return `Ok` (its data was consumed before the loss), and then one of its next two
//! calls returns `Broken`. This runs for every algorithm, with the root and a non-root lost, at 4,
//! 8 and 64 participants (64 threads oversubscribe a 2-core machine 32 times).
//!
//! Survivors either go on calling until they get the error, or leave (drop their handles) after
//! one call, as a program whose threads each make one call does. `reduce` under the static tree
//! and dynamic pairs used to hang its root in the second case: a survivor that quick-returned
//! and dropped its handle broke the group from call 1 first, and the lost participant's break
//! from call 0, coming later, changed nothing, so call 0's waiters waited for ever.
//!
//! Every case runs under the hang watchdog, so a hang fails after 20 seconds.

mod loss_support;
mod reduce_support;

use std::time::Instant;

use loss_support::{quiet_deliberate_panics, Loss, LossClock};
use phasers::{Error, Op, ReduceAlgorithm, Reduction};
use reduce_support::{payload_text, run_each_within, Mode};

const LEN: usize = 1000;

/// What a survivor does after a call that returned `Ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Survivors {
    /// Calls again, until it gets the error.
    CallAgain,
    /// Drops its handle: its thread is done.
    Leave,
}

#[test]
fn a_participant_lost_during_a_call_breaks_every_algorithm() {
    quiet_deliberate_panics();
    for algorithm in ReduceAlgorithm::ALL {
        for parties in [4, 8, 64] {
            let root = 0;
            for lost in [root, parties - 1, parties / 2 + 1] {
                for mode in Mode::BOTH {
                    for loss in Loss::BOTH {
                        for survivors in [Survivors::CallAgain, Survivors::Leave] {
                            let case = (algorithm, parties, root, lost, mode, loss, survivors);
                            lost_during_call(case);
                        }
                    }
                }
            }
        }
    }
}

type Case = (ReduceAlgorithm, usize, usize, usize, Mode, Loss, Survivors);

fn lost_during_call((algorithm, parties, root, lost, mode, loss, survivors): Case) {
    let what = format!(
        "{algorithm}, {mode:?} of {parties} participants rooted at {root}, participant {lost} \
         lost by {loss:?}, the others {survivors:?}"
    );
    let group = Reduction::<u64>::builder(parties)
        .op(Op::Sum)
        .algorithm(algorithm)
        .root(root)
        .build()
        .expect("a valid group");
    let clock = LossClock::default();
    let losing = clock.clone();
    let outcomes = run_each_within(&what, &group, move |mut participant| {
        let rank = participant.rank();
        if rank == lost {
            losing.lose(participant, loss);
            return None;
        }
        let input = vec![rank as u64; LEN];
        let mut output = vec![0; if mode.has_result(rank, root) { LEN } else { 0 }];
        // The calls this participant made, in order; the last one is the error.
        let mut results = Vec::new();
        loop {
            let result = mode.call(&mut participant, &input, &mut output);
            let done = result.is_err() || survivors == Survivors::Leave;
            results.push(result);
            if done || results.len() > 2 {
                return Some((results, Instant::now()));
            }
        }
    });
    for (rank, outcome) in outcomes {
        let (results, ended) = match outcome {
            Err(payload) => {
                assert!(
                    rank == lost && loss == Loss::Panic,
                    "{what}: participant {rank} panicked: {}",
                    payload_text(&*payload)
                );
                continue;
            }
            Ok(None) => continue,
            Ok(Some(ended)) => ended,
        };
        let last = results.last().expect("at least one call");
        if survivors == Survivors::Leave && matches!(last, Ok(outcome) if !outcome.has_result()) {
            // It quick-returned and left; the break is the others' to see.
            continue;
        }
        assert!(
            matches!(last, Err(Error::Broken { by, episode: 0 }) if *by == lost),
            "{what}: participant {rank}'s calls returned {results:?}; the last must be Broken by \
             {lost} from episode 0"
        );
        // Only quick returns without a result may come before the error: at most two, since a
        // call waits until the call two before it completed.
        let quick_returns = results[..results.len() - 1]
            .iter()
            .all(|result| matches!(result, Ok(outcome) if !outcome.has_result()));
        assert!(
            quick_returns,
            "{what}: participant {rank}'s calls returned {results:?}"
        );
        clock.assert_prompt(&what, &format!("participant {rank}"), ended);
    }
}
