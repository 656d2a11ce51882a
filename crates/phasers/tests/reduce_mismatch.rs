//! Mismatched calls of an array reduction: participants that pass different lengths, call
//! `reduce` against `allreduce`, or pass an output of the wrong length, at 2 and 8 participants,
//! for every algorithm, in both modes, with the odd participant at the root and away from it.
//!
//! What every case checks (see `Reduction`'s docs, "Mismatched calls"):
//!
//! - every participant gets the same `Error::Mismatch`, naming two participants and what each
//!   passed, checked against what the test gave them: from the mismatched call itself, except a
//!   participant of `reduce` that may return at once (quick return, no output), which then gets
//!   it from its next call;
//! - nothing is written past an output (each output is followed by guard elements);
//! - the group is failed: every later call, matched or not, returns the same error at once, even
//!   from a participant calling alone, and `is_broken()` says so.
//!
//! Each case first runs matched calls of both modes (so `Auto` has chosen for itself and the
//! check is seen not to fire on matched calls), then the mismatched call after a seeded random
//! delay per participant, so arrival orders vary. A test in which participants are held back until
//! others returned makes sure the quick-return path is taken. Everything runs under the watchdog
//! (`reduce_support::within`), so a hang fails the test after 20 seconds instead of blocking CI;
//! the tests pass in debug and in release builds alike.

mod reduce_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use phasers::{Error, Op, ReduceAlgorithm, ReduceOutcome, Reducer, Reduction};
use reduce_support::{arrive_after, hash, payload_text, run_each_within, within, Mode};

/// Matched calls before the mismatched one: enough for `Auto` to run its own choice (it runs
/// `Linear` for the first three calls).
const WARMUP: usize = 4;
/// Matched calls after it, each of which must fail.
const AFTER: usize = 2;
const WARM_LEN: usize = 16;
/// What an output element holds before the call.
const UNTOUCHED: i64 = -1;
/// What the elements just past an output hold; a call that wrote past the output changes them.
const GUARD: i64 = -7;
const GUARD_LEN: usize = 8;

/// One participant's mismatched call.
#[derive(Debug, Clone, Copy)]
struct Side {
    mode: Mode,
    input: usize,
    output: usize,
}

impl Side {
    /// A well-formed call of `len` elements: an output only where `mode` gives a result.
    fn good(mode: Mode, len: usize, rank: usize, root: usize) -> Self {
        Side {
            mode,
            input: len,
            output: if mode.has_result(rank, root) { len } else { 0 },
        }
    }
}

/// A group shape and the mismatched call of each of its participants.
#[derive(Debug, Clone)]
struct Case {
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    sides: Vec<Side>,
    /// The `what` every participant's `Mismatch` must have.
    what: &'static str,
}

impl Case {
    fn name(&self) -> String {
        format!(
            "{}, {} parties, root {}: {:?}",
            self.algorithm, self.parties, self.root, self.sides
        )
    }

    /// Whether `rank` may return from the mismatched call before the difference is found: its
    /// data consumed in a `reduce` without an output, under an algorithm with quick return.
    fn may_quick_return(&self, rank: usize) -> bool {
        self.sides[rank].mode == Mode::Reduce
            && rank != self.root
            && matches!(
                self.algorithm,
                ReduceAlgorithm::StaticTree | ReduceAlgorithm::DynamicPairs | ReduceAlgorithm::Auto
            )
    }
}

/// What one participant saw.
struct Seen {
    mismatched: phasers::Result<ReduceOutcome>,
    /// Whether the guard past its output is intact.
    guard_intact: bool,
    later: Vec<phasers::Result<ReduceOutcome>>,
    handle: Reducer<i64>,
}

/// The participant counts, each with the roots to try.
const SHAPES: [(usize, &[usize]); 2] = [(2, &[0, 1]), (8, &[0, 5])];

/// Where the odd participant sits: at the root, just after it, and at the far end.
fn odd_positions(parties: usize, root: usize) -> Vec<usize> {
    let mut odd = vec![root, (root + 1) % parties, parties - 1];
    odd.sort_unstable();
    odd.dedup();
    odd
}

fn group(case: &Case) -> Reduction<i64> {
    Reduction::<i64>::builder(case.parties)
        .op(Op::Sum)
        .algorithm(case.algorithm)
        .root(case.root)
        .build()
        .expect("a valid group")
}

/// One participant: the matched warm-up calls (checked), a delay, the mismatched call, then the
/// later calls.
fn participate(case: &Case, seed: u64, mut p: Reducer<i64>) -> Seen {
    let rank = p.rank();
    let name = case.name();
    for call in 0..WARMUP {
        let mode = Mode::BOTH[call % 2];
        let input = vec![(rank * 10 + call) as i64; WARM_LEN];
        let receives = mode.has_result(rank, case.root);
        let mut output = vec![UNTOUCHED; if receives { WARM_LEN } else { 0 }];
        let outcome = mode
            .call(&mut p, &input, &mut output)
            .unwrap_or_else(|error| panic!("{name}: rank {rank}, matched call {call}: {error}"));
        assert_eq!(outcome.has_result(), receives, "{name}: rank {rank}");
        if receives {
            let sum: i64 = (0..case.parties).map(|r| (r * 10 + call) as i64).sum();
            assert_eq!(
                output,
                vec![sum; WARM_LEN],
                "{name}: rank {rank}, call {call}"
            );
        }
    }
    arrive_after(hash(&[seed, rank as u64]));
    let side = case.sides[rank];
    let input = vec![1i64; side.input];
    let mut output = vec![UNTOUCHED; side.output];
    output.extend([GUARD; GUARD_LEN]);
    let mismatched = side.mode.call(&mut p, &input, &mut output[..side.output]);
    let guard_intact = output[side.output..].iter().all(|&x| x == GUARD);
    let later = (0..AFTER)
        .map(|_| {
            let mut output = [0; WARM_LEN];
            p.allreduce(&[1; WARM_LEN], &mut output)
        })
        .collect();
    Seen {
        mismatched,
        guard_intact,
        later,
        handle: p,
    }
}

/// Runs `case` and checks everything the module docs promise.
fn run_case(case: Case, seed: u64) {
    let name = case.name();
    let group = group(&case);
    let shared = Arc::new(case.clone());
    let seen: Vec<Seen> = run_each_within(&name, &group, move |p| participate(&shared, seed, p))
        .into_iter()
        .map(|(rank, outcome)| {
            outcome.unwrap_or_else(|payload| {
                panic!("{name}: rank {rank} panicked: {}", payload_text(&*payload))
            })
        })
        .collect();
    let error = seen
        .iter()
        .find_map(|s| s.mismatched.as_ref().err().cloned())
        .unwrap_or_else(|| panic!("{name}: nobody got an error from the mismatched call"));
    check_names_both_sides(&case, &error);
    for (rank, s) in seen.iter().enumerate() {
        let what = format!("{name}: rank {rank}");
        match &s.mismatched {
            Err(got) => assert_eq!(got, &error, "{what}: a different error"),
            Ok(outcome) => {
                assert!(
                    case.may_quick_return(rank),
                    "{what}: Ok from the mismatched call, though it had to wait for it: {outcome:?}"
                );
                assert!(
                    !outcome.has_result(),
                    "{what}: a result from a mismatched call"
                );
                assert_eq!(outcome.episode(), WARMUP as u64, "{what}");
            }
        }
        assert!(s.guard_intact, "{what}: written past its output");
        for (index, later) in s.later.iter().enumerate() {
            assert_eq!(
                later.as_ref().err(),
                Some(&error),
                "{what}: call {index} after the mismatch"
            );
        }
    }
    assert!(group.is_broken(), "{name}: is_broken() after a mismatch");
    // A failed group answers at once: one participant calling alone is not left waiting.
    let mut lone = seen.into_iter().next().expect("a participant").handle;
    let again = within(&name, move || lone.reduce(&[5; 3], &mut [0; 3]));
    assert_eq!(again.err(), Some(error), "{name}: a lone call");
}

/// The error names two participants and what each of them really passed.
fn check_names_both_sides(case: &Case, error: &Error) {
    let name = case.name();
    let Error::Mismatch {
        what,
        rank,
        ours,
        other,
        theirs,
    } = error
    else {
        panic!("{name}: expected Mismatch, got {error:?}");
    };
    assert_eq!(*what, case.what, "{name}: {error}");
    assert!(
        *rank < case.parties && *other < case.parties,
        "{name}: {error}"
    );
    let (mine, their) = (case.sides[*rank], case.sides[*other]);
    let mode_name = |mode: Mode| match mode {
        Mode::Reduce => "reduce",
        Mode::Allreduce => "allreduce",
    };
    let (expected_ours, expected_theirs) = match *what {
        "length" => (
            format!("{} elements", mine.input),
            format!("{} elements", their.input),
        ),
        "operation" => (
            mode_name(mine.mode).to_string(),
            mode_name(their.mode).to_string(),
        ),
        "output length" => {
            assert_eq!(
                rank, other,
                "{name}: one participant's own lengths: {error}"
            );
            (
                format!("an input of {} elements", mine.input),
                format!("an output of {} elements", mine.output),
            )
        }
        other => panic!("{name}: unexpected kind {other:?}: {error}"),
    };
    assert_eq!(ours, &expected_ours, "{name}: {error}");
    assert_eq!(theirs, &expected_theirs, "{name}: {error}");
    assert_ne!(ours, theirs, "{name}: the two sides must differ: {error}");
    let message = error.to_string();
    for needle in [ours, theirs, &rank.to_string(), &other.to_string()] {
        assert!(message.contains(needle.as_str()), "{name}: {message}");
    }
}

/// Lengths: the others pass the first, the odd participant the second.
const LENGTHS: [(usize, usize); 5] = [(2, 102), (102, 2), (8, 9), (9, 8), (9, 0)];

fn length_mismatch(algorithm: ReduceAlgorithm) {
    for (parties, roots) in SHAPES {
        for &root in roots {
            for mode in Mode::BOTH {
                for odd in odd_positions(parties, root) {
                    for (common, odd_len) in LENGTHS {
                        let sides = (0..parties)
                            .map(|rank| {
                                let len = if rank == odd { odd_len } else { common };
                                Side::good(mode, len, rank, root)
                            })
                            .collect();
                        let case = Case {
                            algorithm,
                            parties,
                            root,
                            sides,
                            what: "length",
                        };
                        let seed = hash(&[parties as u64, root as u64, odd as u64, odd_len as u64]);
                        run_case(case, seed);
                    }
                }
            }
        }
    }
}

/// One participant calls the other mode than everyone else; every output is full, so only the
/// mode differs.
fn operation_mismatch(algorithm: ReduceAlgorithm) {
    const LEN: usize = 40;
    for (parties, roots) in SHAPES {
        for &root in roots {
            for others in Mode::BOTH {
                let odd_mode = match others {
                    Mode::Reduce => Mode::Allreduce,
                    Mode::Allreduce => Mode::Reduce,
                };
                for odd in odd_positions(parties, root) {
                    let sides = (0..parties)
                        .map(|rank| Side {
                            mode: if rank == odd { odd_mode } else { others },
                            input: LEN,
                            output: LEN,
                        })
                        .collect();
                    let case = Case {
                        algorithm,
                        parties,
                        root,
                        sides,
                        what: "operation",
                    };
                    run_case(case, hash(&[parties as u64, root as u64, odd as u64, 77]));
                }
            }
        }
    }
}

/// A participant that receives the result passes an output too short, too long, or empty.
fn output_mismatch(algorithm: ReduceAlgorithm) {
    const LEN: usize = 9;
    for (parties, roots) in SHAPES {
        for &root in roots {
            for mode in Mode::BOTH {
                let receivers: Vec<usize> = odd_positions(parties, root)
                    .into_iter()
                    .filter(|&rank| mode.has_result(rank, root))
                    .collect();
                for odd in receivers {
                    for wrong in [LEN - 1, LEN + 1, 0] {
                        let sides = (0..parties)
                            .map(|rank| {
                                let mut side = Side::good(mode, LEN, rank, root);
                                if rank == odd {
                                    side.output = wrong;
                                }
                                side
                            })
                            .collect();
                        let case = Case {
                            algorithm,
                            parties,
                            root,
                            sides,
                            what: "output length",
                        };
                        run_case(
                            case,
                            hash(&[parties as u64, root as u64, odd as u64, wrong as u64]),
                        );
                    }
                }
            }
        }
    }
}

/// `name: algorithm;` makes the three tests of one algorithm.
macro_rules! mismatch_tests {
    ($($module:ident: $algorithm:expr;)*) => {$(
        mod $module {
            use super::*;

            #[test]
            fn length() {
                length_mismatch($algorithm);
            }

            #[test]
            fn operation() {
                operation_mismatch($algorithm);
            }

            #[test]
            fn output_length() {
                output_mismatch($algorithm);
            }
        }
    )*};
}

mismatch_tests! {
    linear: ReduceAlgorithm::Linear;
    static_tree: ReduceAlgorithm::StaticTree;
    dynamic_pairs: ReduceAlgorithm::DynamicPairs;
    dynamic_group: ReduceAlgorithm::DynamicGroup;
    auto: ReduceAlgorithm::Auto;
}

/// The quick-return path for certain: the odd participant (and its neighbour) are held back until
/// the participants that can return at once have returned from the mismatched call, so they
/// return `Ok` before anyone can know. They must learn of the mismatch from a later call: the
/// next, or, where they return from that one at once too (their data consumed by another early
/// participant while the mismatched call still waits for the late ones), the one after; every
/// call after the first error returns it too.
#[test]
fn quick_returners_learn_at_a_later_call() {
    const PARTIES: usize = 8;
    const LATER: usize = 3;
    for algorithm in [ReduceAlgorithm::StaticTree, ReduceAlgorithm::DynamicPairs] {
        let name = format!("{algorithm}: ranks 6 and 7 late, rank 7 passes 9 elements");
        // Static tree rooted at 0: 1, 3 and 5 are consumed in the first round, without 6 or 7.
        // Dynamic pairs: the six early participants pair among themselves until one waits, and
        // at most one of those consumed is the root.
        let early_returns = match algorithm {
            ReduceAlgorithm::StaticTree => 3,
            _ => 4,
        };
        let group = Reduction::<i64>::builder(PARTIES)
            .op(Op::Sum)
            .algorithm(algorithm)
            .build()
            .expect("a valid group");
        let returned = Arc::new(AtomicUsize::new(0));
        let outcomes = run_each_within(&name, &group, move |mut p| {
            let rank = p.rank();
            let late = rank >= 6;
            if late {
                while returned.load(Ordering::Acquire) < early_returns {
                    std::thread::yield_now();
                }
            }
            let len = if rank == 7 { 9 } else { 8 };
            let mut output = vec![0; if p.is_root() { len } else { 0 }];
            let mut outcomes = vec![p.reduce(&vec![1; len], &mut output)];
            if !late && outcomes[0].is_ok() {
                returned.fetch_add(1, Ordering::Release);
            }
            for _ in 0..LATER {
                let mut output = vec![0; if p.is_root() { 8 } else { 0 }];
                outcomes.push(p.reduce(&[1; 8], &mut output));
            }
            outcomes
        });
        let outcomes: Vec<_> = outcomes
            .into_iter()
            .map(|(rank, outcome)| {
                outcome.unwrap_or_else(|payload| {
                    panic!("{name}: rank {rank} panicked: {}", payload_text(&*payload))
                })
            })
            .collect();
        let error = outcomes[0][0]
            .clone()
            .expect_err("the root learns from the call");
        assert!(
            matches!(&error, Error::Mismatch { what: "length", .. }),
            "{name}: {error}"
        );
        let quick = outcomes.iter().filter(|calls| calls[0].is_ok()).count();
        assert!(
            quick >= early_returns,
            "{name}: only {quick} returned Ok before the late ones came"
        );
        for (rank, calls) in outcomes.iter().enumerate() {
            let first_error = calls
                .iter()
                .position(|outcome| outcome.is_err())
                .unwrap_or(calls.len());
            assert!(
                first_error <= 2,
                "{name}: rank {rank} learned only from call {first_error}: {calls:?}"
            );
            for (index, outcome) in calls.iter().enumerate() {
                match outcome {
                    Ok(done) => assert!(
                        index < first_error && rank != 0 && rank < 6 && !done.has_result(),
                        "{name}: rank {rank}, call {index}: {done:?}"
                    ),
                    Err(got) => assert_eq!(got, &error, "{name}: rank {rank}, call {index}"),
                }
            }
        }
    }
}

/// A non-root participant of `reduce` may pass an output of any length: it is not written, and
/// its length is not compared with anyone's.
#[test]
fn non_root_output_is_free() {
    for algorithm in ReduceAlgorithm::ALL {
        let (parties, root, len) = (4, 1, 17);
        let name = format!("{algorithm}: non-root outputs of lengths 0, 5 and 40");
        let group = Reduction::<i64>::builder(parties)
            .op(Op::Sum)
            .algorithm(algorithm)
            .root(root)
            .build()
            .expect("a valid group");
        let outcomes = run_each_within(&name, &group, move |mut p| {
            let rank = p.rank();
            let mut output = vec![UNTOUCHED; [0, len, 5, 40][rank]];
            let outcome = p.reduce(&vec![rank as i64 + 1; len], &mut output);
            (outcome, output)
        });
        for (rank, outcome) in outcomes {
            let (outcome, output) = outcome.unwrap_or_else(|payload| {
                panic!("{name}: rank {rank} panicked: {}", payload_text(&*payload))
            });
            let outcome = outcome.unwrap_or_else(|error| panic!("{name}: rank {rank}: {error}"));
            assert_eq!(outcome.has_result(), rank == root, "{name}: rank {rank}");
            if rank == root {
                assert_eq!(output, vec![10; len], "{name}");
            } else {
                assert!(
                    output.iter().all(|&x| x == UNTOUCHED),
                    "{name}: rank {rank}"
                );
            }
        }
    }
}
