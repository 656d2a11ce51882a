//! Bad input to an array reduction gets a typed error whose message says what was wrong, never a
//! panic and never a hang:
//!
//! - at construction: no participants, too many, a root out of range, a bitwise operator on a
//!   floating-point type, a builder without an operator (`InvalidArgument`);
//! - handing out a rank's handle twice, or a rank that does not exist;
//! - in a call: participants passing arrays of different lengths, calling `reduce` and `allreduce`
//!   in the same call, or an output of the wrong length (`Mismatch`), reported to the root for
//!   `reduce` and to everyone for `allreduce`, for every algorithm (the outputs of a mismatched
//!   call are unspecified: a master may have accumulated into its own before the mismatch was
//!   found); and the group stays usable: the next call with matching arguments gives the right
//!   result.
//!
//! Every test that runs participants does so under a watchdog (`reduce_support::within`), so a
//! hang fails the test after 20 seconds instead of blocking CI.

mod reduce_support;

use phasers::{Error, Op, ReduceAlgorithm, ReduceOutcome, Reduction};
use reduce_support::{run_each_within, Mode};

/// The message of an `InvalidArgument`, or a panic naming what came instead.
fn invalid_message<T: std::fmt::Debug>(result: phasers::Result<T>, what: &str) -> String {
    match result {
        Err(Error::InvalidArgument { message }) => message,
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

/// Asserts that `message` mentions every one of `needles`.
fn assert_mentions(what: &str, message: &str, needles: &[&str]) {
    for needle in needles {
        assert!(
            message.contains(needle),
            "{what}: the message should mention {needle:?}: {message}"
        );
    }
}

#[test]
fn zero_participants_is_invalid() {
    let message = invalid_message(Reduction::<i32>::new(0, Op::Sum), "new(0)");
    assert_mentions("new(0)", &message, &["at least 1"]);
    for algorithm in ReduceAlgorithm::ALL {
        let message = invalid_message(
            Reduction::<f64>::builder(0)
                .op(Op::Sum)
                .algorithm(algorithm)
                .build(),
            "builder(0)",
        );
        assert_mentions("builder(0)", &message, &["at least 1"]);
    }
    let message = invalid_message(
        Reduction::with_fn(0, |a: (u8, u8), b| (a.0 | b.0, a.1 & b.1)),
        "with_fn(0)",
    );
    assert_mentions("with_fn(0)", &message, &["at least 1"]);
}

#[test]
fn too_many_participants_is_invalid() {
    // 65535 is the largest group; one more is refused before anything is allocated for it.
    for parties in [65_536, usize::MAX] {
        let message = invalid_message(Reduction::<u64>::new(parties, Op::Sum), "too many");
        assert_mentions("too many", &message, &["65535", &parties.to_string()]);
    }
}

#[test]
fn root_out_of_range_is_invalid() {
    for (parties, root) in [(1, 1), (4, 4), (4, 1000)] {
        let what = format!("root {root} of {parties}");
        let message = invalid_message(
            Reduction::<i64>::builder(parties)
                .op(Op::Max)
                .root(root)
                .build(),
            &what,
        );
        // Names the root asked for and the participant count it must stay below.
        assert_mentions(&what, &message, &[&root.to_string(), &parties.to_string()]);
    }
}

#[test]
fn bitwise_ops_on_floats_are_invalid() {
    fn check<T: phasers::Element>(op: fn() -> Op<T>, name: &str) {
        let what = format!("Op::{name} on {}", std::any::type_name::<T>());
        let message = invalid_message(Reduction::<T>::new(3, op()), &what);
        assert_mentions(&what, &message, &[name, std::any::type_name::<T>()]);
        let message = invalid_message(
            Reduction::<T>::builder(3)
                .op(op())
                .algorithm(ReduceAlgorithm::DynamicPairs)
                .build(),
            &what,
        );
        assert_mentions(&what, &message, &[name]);
    }
    check::<f32>(|| Op::And, "And");
    check::<f32>(|| Op::Or, "Or");
    check::<f32>(|| Op::Xor, "Xor");
    check::<f64>(|| Op::And, "And");
    check::<f64>(|| Op::Or, "Or");
    check::<f64>(|| Op::Xor, "Xor");
    // The same operators on integers are fine, so the refusal really is about the type.
    assert!(Reduction::<u32>::new(3, Op::Xor).is_ok());
}

#[test]
fn builder_without_op_is_invalid() {
    for algorithm in ReduceAlgorithm::ALL {
        let message = invalid_message(
            Reduction::<i32>::builder(2).algorithm(algorithm).build(),
            "no op",
        );
        // Says how to give one.
        assert_mentions("no op", &message, &["op"]);
    }
}

#[test]
fn each_handle_is_handed_out_once() {
    let group = Reduction::<i32>::new(4, Op::Sum).expect("a valid group");
    let second = group.participant(2).expect("rank 2, the first time");
    assert_eq!(second.rank(), 2);
    let message = invalid_message(group.participant(2), "rank 2 again");
    assert_mentions("rank 2 again", &message, &["2"]);
    let message = invalid_message(group.participant(4), "rank 4 of 4");
    assert_mentions("rank 4 of 4", &message, &["4"]);
    // `participants` hands out the rest, in rank order, without the one already taken.
    let rest = group.participants();
    let ranks: Vec<usize> = rest.iter().map(|p| p.rank()).collect();
    assert_eq!(ranks, [0, 1, 3]);
    assert!(group.participants().is_empty(), "nothing left to hand out");
    invalid_message(group.participant(0), "rank 0 after participants()");
    // Handing out is not breaking: the handles hold no call yet.
    assert!(!group.is_broken());
}

/// What one participant does in one call: the mode, and the lengths of its input and output.
#[derive(Debug, Clone, Copy)]
struct Call {
    mode: Mode,
    input: usize,
    output: usize,
}

impl Call {
    /// A well-formed call of `len` elements; in `reduce`, only `root` passes an output.
    fn good(mode: Mode, len: usize, rank: usize, root: usize) -> Self {
        Call {
            mode,
            input: len,
            output: if mode.has_result(rank, root) { len } else { 0 },
        }
    }
}

/// What a participant's output holds after a call that must not write it.
const UNTOUCHED: i64 = -1;

/// `rank`'s input element `i` in call `call`: distinct per rank and call, so a result that
/// combined stale data shows.
fn input_value(call: usize, rank: usize, i: usize) -> i64 {
    (call * 1_000_000 + rank * 1000 + i) as i64
}

/// Runs `plan[rank]` (the same number of calls for everyone) on an `i64` sum group, every
/// participant on its own thread, and returns each participant's outcome and output per call.
/// Fails if any participant panics or the whole does not finish within the watchdog's limit.
fn run_plan(
    what: &str,
    group: &Reduction<i64>,
    plan: Vec<Vec<Call>>,
) -> Vec<Vec<(phasers::Result<ReduceOutcome>, Vec<i64>)>> {
    let plan = std::sync::Arc::new(plan);
    let outcomes = run_each_within(what, group, move |mut participant| {
        let rank = participant.rank();
        plan[rank]
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let input: Vec<i64> = (0..call.input)
                    .map(|i| input_value(index, rank, i))
                    .collect();
                let mut output = vec![UNTOUCHED; call.output];
                let outcome = call.mode.call(&mut participant, &input, &mut output);
                (outcome, output)
            })
            .collect::<Vec<_>>()
    });
    outcomes
        .into_iter()
        .map(|(rank, outcome)| {
            outcome.unwrap_or_else(|payload| {
                panic!(
                    "{what}: rank {rank} panicked: {}",
                    reduce_support::payload_text(&*payload)
                )
            })
        })
        .collect()
}

/// The fields of a `Mismatch`, or a panic naming what came instead.
fn mismatch(what: &str, outcome: &phasers::Result<ReduceOutcome>) -> (String, String) {
    match outcome {
        Err(error @ Error::Mismatch { what: kind, .. }) => (kind.to_string(), error.to_string()),
        other => panic!("{what}: expected Mismatch, got {other:?}"),
    }
}

/// Checks a mismatched call (call 0 of `results`) and the matching calls after it: the root (for
/// `reduce`) and every participant of an `allreduce` got `Mismatch` whose message mentions each of
/// `needles` (of kind `kind` where given); others got `Ok`
/// (they returned before the mismatch was found) or a `Mismatch`; every later call is right.
#[allow(clippy::too_many_arguments)]
fn check_mismatch_then_recovery(
    what: &str,
    results: &[Vec<(phasers::Result<ReduceOutcome>, Vec<i64>)>],
    must_see: &dyn Fn(usize) -> bool,
    kind: Option<&str>,
    needles: &[&str],
    plan: &[Vec<Call>],
    root: usize,
) {
    for (rank, calls) in results.iter().enumerate() {
        let (outcome, _) = &calls[0];
        let what = format!("{what}: rank {rank}");
        match outcome {
            Ok(done) if !must_see(rank) => {
                // Returned before the mismatch was found: it got no result to write.
                assert!(
                    !done.has_result(),
                    "{what}: a result from a mismatched call"
                );
            }
            outcome => {
                let (got_kind, message) = mismatch(&what, outcome);
                if let Some(kind) = kind {
                    assert_eq!(got_kind, kind, "{what}: {message}");
                }
                assert_mentions(&what, &message, needles);
            }
        }
    }
    // The group is still usable: the following calls, well formed, give the right sums.
    for (index, _) in plan[0].iter().enumerate().skip(1) {
        let len = plan[0][index].input;
        let expected: Vec<i64> = (0..len)
            .map(|i| {
                (0..results.len())
                    .map(|rank| input_value(index, rank, i))
                    .sum()
            })
            .collect();
        for (rank, calls) in results.iter().enumerate() {
            let what = format!("{what}: rank {rank}, call {index} after the mismatch");
            let (outcome, output) = &calls[index];
            let outcome = outcome
                .as_ref()
                .unwrap_or_else(|error| panic!("{what}: {error}"));
            assert_eq!(
                outcome.episode(),
                index as u64,
                "{what}: episodes count every call"
            );
            if plan[rank][index].mode.has_result(rank, root) {
                assert_eq!(output, &expected, "{what}");
            }
        }
    }
}

/// A fresh `i64` sum group: each case gets its own, since the runner hands out every handle and
/// drops it at the end.
fn sum_group(algorithm: ReduceAlgorithm, parties: usize, root: usize) -> Reduction<i64> {
    Reduction::<i64>::builder(parties)
        .op(Op::Sum)
        .algorithm(algorithm)
        .root(root)
        .build()
        .expect("a valid group")
}

/// The participant counts and roots the mismatch tests use: a pair either way round, and an odd
/// count with the root in the middle.
const SHAPES: [(usize, usize); 3] = [(2, 0), (2, 1), (5, 2)];

/// The two well-formed calls that follow every mismatch: one of each mode.
fn recovery(len: usize, rank: usize, root: usize) -> [Call; 2] {
    [
        Call::good(Mode::Allreduce, len, rank, root),
        Call::good(Mode::Reduce, len, rank, root),
    ]
}

#[test]
fn length_mismatch() {
    const LEN: usize = 1234;
    const ODD: usize = 1237;
    for algorithm in ReduceAlgorithm::ALL {
        for (parties, root) in SHAPES {
            // Each mode, with the odd one out at the root, away from it, and (with five) at the
            // far end.
            for mode in Mode::BOTH {
                for odd in [root, (root + 1) % parties, parties - 1] {
                    let what = format!(
                        "{algorithm}, {parties} parties, root {root}, {mode:?}, rank {odd} \
                         passes {ODD} elements, the others {LEN}"
                    );
                    let plan: Vec<Vec<Call>> = (0..parties)
                        .map(|rank| {
                            let len = if rank == odd { ODD } else { LEN };
                            let mut calls = vec![Call::good(mode, len, rank, root)];
                            calls.extend(recovery(LEN, rank, root));
                            calls
                        })
                        .collect();
                    let group = sum_group(algorithm, parties, root);
                    let results = run_plan(&what, &group, plan.clone());
                    check_mismatch_then_recovery(
                        &what,
                        &results,
                        &|rank| mode.has_result(rank, root),
                        Some("length"),
                        &["1234", "1237"],
                        &plan,
                        root,
                    );
                }
            }
        }
    }
}

/// An empty array against a non-empty one is a mismatch too (empty calls are not special).
#[test]
fn empty_against_non_empty() {
    for algorithm in ReduceAlgorithm::ALL {
        for mode in Mode::BOTH {
            let (parties, root) = (3, 0);
            let what = format!("{algorithm}, {mode:?}, rank 1 passes 0 elements, the others 9");
            let group = sum_group(algorithm, parties, root);
            let plan: Vec<Vec<Call>> = (0..parties)
                .map(|rank| {
                    let len = if rank == 1 { 0 } else { 9 };
                    let mut calls = vec![Call::good(mode, len, rank, root)];
                    calls.extend(recovery(9, rank, root));
                    calls
                })
                .collect();
            let results = run_plan(&what, &group, plan.clone());
            check_mismatch_then_recovery(
                &what,
                &results,
                &|rank| mode.has_result(rank, root),
                Some("length"),
                &["0", "9"],
                &plan,
                root,
            );
        }
    }
}

#[test]
fn reduce_against_allreduce() {
    const LEN: usize = 40;
    for algorithm in ReduceAlgorithm::ALL {
        for (parties, root) in SHAPES {
            // One participant calls the other mode than everyone else: at the root, and away
            // from it, each way round.
            for (odd, others) in [
                (root, Mode::Reduce),
                (root, Mode::Allreduce),
                ((root + 1) % parties, Mode::Reduce),
                ((root + 1) % parties, Mode::Allreduce),
            ] {
                let odd_mode = match others {
                    Mode::Reduce => Mode::Allreduce,
                    Mode::Allreduce => Mode::Reduce,
                };
                let what = format!(
                    "{algorithm}, {parties} parties, root {root}: rank {odd} calls {odd_mode:?}, \
                     the others {others:?}"
                );
                let plan: Vec<Vec<Call>> = (0..parties)
                    .map(|rank| {
                        let mode = if rank == odd { odd_mode } else { others };
                        // Everyone passes a full output, so no length is wrong: only the mode.
                        let mut calls = vec![Call {
                            mode,
                            input: LEN,
                            output: LEN,
                        }];
                        calls.extend(recovery(LEN, rank, root));
                        calls
                    })
                    .collect();
                let group = sum_group(algorithm, parties, root);
                let results = run_plan(&what, &group, plan.clone());
                // The root always waits for everyone's data, and so does every allreduce caller;
                // a reduce caller elsewhere may have handed its data on and returned.
                let callers: Vec<Mode> = plan.iter().map(|calls| calls[0].mode).collect();
                check_mismatch_then_recovery(
                    &what,
                    &results,
                    &|rank| rank == root || callers[rank] == Mode::Allreduce,
                    Some("operation"),
                    &["allreduce", "reduce"],
                    &plan,
                    root,
                );
            }
        }
    }
}

#[test]
fn wrong_output_length() {
    const LEN: usize = 321;
    for algorithm in ReduceAlgorithm::ALL {
        for (parties, root) in SHAPES {
            // The root of a reduce, and any participant of an allreduce, with an output too short,
            // too long, or missing.
            let cases = [320, 322, 0].into_iter().flat_map(|wrong| {
                [
                    (Mode::Reduce, root, wrong),
                    (Mode::Allreduce, root, wrong),
                    (Mode::Allreduce, (root + 1) % parties, wrong),
                ]
            });
            for (mode, odd, wrong) in cases {
                let what = format!(
                    "{algorithm}, {parties} parties, root {root}, {mode:?}: rank {odd} passes an \
                     output of {wrong} for an input of {LEN}"
                );
                let plan: Vec<Vec<Call>> = (0..parties)
                    .map(|rank| {
                        let mut first = Call::good(mode, LEN, rank, root);
                        if rank == odd {
                            first.output = wrong;
                        }
                        let mut calls = vec![first];
                        calls.extend(recovery(LEN, rank, root));
                        calls
                    })
                    .collect();
                let group = sum_group(algorithm, parties, root);
                let results = run_plan(&what, &group, plan.clone());
                // The participant with the wrong output is told its own lengths; the others of an
                // allreduce learn that the call failed.
                let (kind, message) = mismatch(&what, &results[odd][0].0);
                assert_eq!(kind, "output length", "{what}: {message}");
                assert_mentions(&what, &message, &[&LEN.to_string(), &wrong.to_string()]);
                check_mismatch_then_recovery(
                    &what,
                    &results,
                    &|rank| mode.has_result(rank, root),
                    None,
                    &[],
                    &plan,
                    root,
                );
            }
        }
    }
}

/// A non-root participant of `reduce` may pass an output of any length: it is not written, and
/// its length is not checked against anyone's.
#[test]
fn non_root_output_is_free() {
    for algorithm in ReduceAlgorithm::ALL {
        let (parties, root, len) = (4, 1, 17);
        let what = format!("{algorithm}: non-root outputs of lengths 0, 5 and 40");
        let group = sum_group(algorithm, parties, root);
        let plan: Vec<Vec<Call>> = (0..parties)
            .map(|rank| {
                let output = [0, len, 5, 40][rank];
                vec![Call {
                    mode: Mode::Reduce,
                    input: len,
                    output,
                }]
            })
            .collect();
        let results = run_plan(&what, &group, plan);
        let expected: Vec<i64> = (0..len)
            .map(|i| (0..parties).map(|rank| input_value(0, rank, i)).sum())
            .collect();
        for (rank, calls) in results.iter().enumerate() {
            let (outcome, output) = &calls[0];
            let outcome = outcome
                .as_ref()
                .unwrap_or_else(|error| panic!("{what}: rank {rank}: {error}"));
            assert_eq!(outcome.has_result(), rank == root, "{what}: rank {rank}");
            if rank == root {
                assert_eq!(output, &expected, "{what}");
            } else {
                assert!(
                    output.iter().all(|&x| x == UNTOUCHED),
                    "{what}: rank {rank}"
                );
            }
        }
    }
}
