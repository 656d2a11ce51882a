//! Issue 35's light path: blocking calls that end at their opening meeting (barriers, and
//! broadcasts and reductions of up to 64 bytes) skip the engine's state and steps, and one-word
//! allreduces carry their inputs and result in the meeting's own cache line.
//!
//! The stress test checks the barrier's promise (nobody leaves call k before every member arrived
//! at k) and every one-word result, with 1 to 64 members on the 2-core CI machines (so mostly
//! oversubscribed), through team sizes whose inputs lie in the release line, in the far cells,
//! and in more than one far line. The others check what the light path must keep: errors for
//! every member (mismatches, a panicking operator), and results for every element type.

use std::sync::atomic::{AtomicUsize, Ordering};

use phasers::{Error, Op, Team};

/// Calls per member of a stress run, alternating a barrier and a one-word allreduce; small
/// enough that 64 members on 2 cores finish in a few seconds of a debug build.
const CALLS: usize = 2000;

fn stress(size: usize) {
    let team = Team::new(size).unwrap();
    let arrived: Vec<AtomicUsize> = (0..CALLS).map(|_| AtomicUsize::new(0)).collect();
    std::thread::scope(|s| {
        for mut member in team.participants() {
            let arrived = &arrived;
            s.spawn(move || {
                let rank = member.rank() as u64;
                for (call, count) in arrived.iter().enumerate() {
                    count.fetch_add(1, Ordering::SeqCst);
                    if call % 2 == 0 {
                        member.barrier().unwrap();
                    } else {
                        let mut out = [0u64];
                        let mine = [rank + 1000 * call as u64];
                        member.allreduce(&mine, &mut out, Op::Sum).unwrap();
                        let size = size as u64;
                        let want = size * (size - 1) / 2 + 1000 * call as u64 * size;
                        assert_eq!(out[0], want, "call {call} on member {rank}");
                    }
                    let seen = count.load(Ordering::SeqCst);
                    assert_eq!(seen, size, "member {rank} left call {call} early");
                }
            });
        }
    });
}

#[test]
fn barrier_invariant_and_word_results_up_to_64_members() {
    for size in [1, 2, 3, 4, 5, 8, 17, 20, 64] {
        stress(size);
    }
}

/// Every element type of a built-in op travels in a word: results for 4 and 8 bytes, and for
/// every op, on a team whose inputs lie in both kinds of cell.
#[test]
fn word_allreduce_of_every_element_type() {
    let team = Team::new(5).unwrap();
    std::thread::scope(|s| {
        for mut m in team.participants() {
            s.spawn(move || {
                let r = m.rank();
                let mut product = [0u32];
                m.allreduce(&[r as u32 + 1], &mut product, Op::Product)
                    .unwrap();
                assert_eq!(product, [120]);
                let mut small = [0i32];
                m.allreduce(&[-(r as i32)], &mut small, Op::Min).unwrap();
                assert_eq!(small, [-4]);
                let mut word = [0u32];
                m.allreduce(&[1 << r], &mut word, Op::Or).unwrap();
                assert_eq!(word, [31]);
                // Member r clears bit r + 1: bits 1 to 5 end up cleared.
                let mut mask = [0u32];
                m.allreduce(&[!(1u32 << (r + 1))], &mut mask, Op::And)
                    .unwrap();
                assert_eq!(mask, [!0b11_1110]);
                let mut parity = [0u64];
                m.allreduce(&[r as u64 + 1], &mut parity, Op::Xor).unwrap();
                // 1 ^ 2 ^ 3 ^ 4 ^ 5.
                assert_eq!(parity, [1]);
                let mut small_max = [0i32];
                m.allreduce(&[r as i32 - 2], &mut small_max, Op::Max)
                    .unwrap();
                assert_eq!(small_max, [2]);
                let mut float = [0f32];
                m.allreduce(&[r as f32 * 0.5], &mut float, Op::Max).unwrap();
                assert_eq!(float, [2.0]);
                let mut double = [0f64];
                m.allreduce(&[0.25], &mut double, Op::Sum).unwrap();
                assert_eq!(double, [1.25]);
                let mut wide = [0i64];
                let custom = Op::custom(0i64, |a, b| a - b);
                m.allreduce(&[r as i64], &mut wide, custom).unwrap();
                // In rank order: ((((0 - 1) - 2) - 3) - 4).
                assert_eq!(wide, [-10]);
            });
        }
    });
}

/// A barrier against a one-word allreduce: every member gets the `Mismatch`, and the team goes on.
#[test]
fn light_calls_that_differ_fail_for_every_member() {
    let team = Team::new(3).unwrap();
    std::thread::scope(|s| {
        for mut m in team.participants() {
            s.spawn(move || {
                let error = if m.rank() == 2 {
                    m.allreduce(&[1u64], &mut [0], Op::Sum).unwrap_err()
                } else {
                    m.barrier().unwrap_err()
                };
                assert!(
                    matches!(
                        error,
                        Error::Mismatch {
                            what: "collective",
                            ..
                        }
                    ),
                    "{error:?}"
                );
                let mut out = [0u64];
                m.allreduce(&[1u64], &mut out, Op::Sum).unwrap();
                assert_eq!(out, [3]);
                m.barrier().unwrap();
            });
        }
    });
}

/// A custom op that panics in a one-word allreduce: the completer's panic goes on in its thread,
/// and every other member gets `Broken`.
#[test]
fn a_panicking_op_in_a_word_allreduce_breaks_the_call_for_all() {
    let team = Team::new(3).unwrap();
    let outcomes: Vec<std::thread::Result<phasers::Result<()>>> = std::thread::scope(|s| {
        let handles: Vec<_> = team
            .participants()
            .into_iter()
            .map(|mut m| {
                s.spawn(move || {
                    let op = Op::custom(0u64, |_, _| panic!("this op panics"));
                    m.allreduce(&[1u64], &mut [0], op)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    let panicked = outcomes.iter().filter(|o| o.is_err()).count();
    assert_eq!(panicked, 1, "only the completer runs the op");
    for outcome in outcomes.into_iter().flatten() {
        assert!(matches!(outcome, Err(Error::Broken { .. })), "{outcome:?}");
    }
}
