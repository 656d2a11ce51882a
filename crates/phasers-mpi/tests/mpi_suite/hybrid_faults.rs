//! Hybrid teams that lose a member or run out of time: the members left get an error, never a
//! hang, and every rank finishes the case.

use std::time::Duration;

use phasers::Op;
use phasers_mpi::{Error, HybridTeam};

use crate::case::{ensure, every, Case, Ctx, Failures, INTENTIONAL};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "hybrid_dropped_member_breaks_its_process",
            run: dropped_member,
        },
        Case {
            name: "hybrid_panicking_custom_op_breaks_its_process",
            run: panicking_op,
        },
        Case {
            name: "hybrid_timeout_then_broken_others_complete",
            run: timeout,
        },
        Case {
            name: "hybrid_wait_timeout_leaves_the_call_pending",
            run: wait_timeout_pending,
        },
    ]
}

/// On every rank member 1 is dropped before the first call; the other members' calls return
/// `Broken` (no process reaches MPI, so no rank waits on another).
fn dropped_member(ctx: &Ctx<'_>) -> Result<(), String> {
    let team = HybridTeam::new(ctx.mpi, ctx.comm, 3).map_err(|e| format!("build: {e}"))?;
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut member in team.participants() {
            let failures = &failures;
            s.spawn(move || {
                if member.local_rank() == 1 {
                    drop(member);
                    return;
                }
                for _ in 0..2 {
                    let mut out = [0u64];
                    let result = member.allreduce(&[1], &mut out, Op::Sum);
                    failures.check(matches!(result, Err(Error::Broken { .. })), || {
                        format!("member {}: {result:?}, expected Broken", member.rank())
                    });
                }
            });
        }
    });
    failures.into_result()
}

/// A custom operator panics on every rank; the panicking thread's siblings get `Broken`, and
/// the panic reaches the panicking thread.
fn panicking_op(ctx: &Ctx<'_>) -> Result<(), String> {
    let team = HybridTeam::new(ctx.mpi, ctx.comm, 2).map_err(|e| format!("build: {e}"))?;
    let failures = Failures::default();
    let panicked = std::thread::scope(|s| {
        let handles: Vec<_> = team
            .participants()
            .into_iter()
            .map(|mut member| {
                let failures = &failures;
                s.spawn(move || {
                    let op = Op::custom(0u64, |_, _| panic!("{INTENTIONAL}: custom op"));
                    let mut out = [0u64];
                    let result = member.allreduce(&[1], &mut out, op);
                    failures.check(matches!(result, Err(Error::Broken { .. })), || {
                        format!("member {}: {result:?}, expected Broken", member.rank())
                    });
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().err()).count()
    });
    // Exactly the thread that combined panicked; its sibling saw Broken.
    let result = failures.into_result();
    ensure(panicked == 1, || {
        format!("{panicked} threads panicked, expected 1")
    })?;
    result
}

/// Rank 0 times out waiting for the others, gets `Timeout` and then `Broken`; the others arrive
/// later and complete the call that rank 0's MPI request still takes part in. Checked or not,
/// a one-word allreduce is one `MPI_Iallreduce` (checked, the word travels in the envelope)
/// that rank 0 started before it gave up; a call of several stages would leave the others
/// waiting for one that rank 0 never starts.
fn timeout(ctx: &Ctx<'_>) -> Result<(), String> {
    every([true, false], |checked| {
        timeout_in(ctx, checked).map_err(|e| format!("checked {checked}: {e}"))
    })
}

fn timeout_in(ctx: &Ctx<'_>, checked: bool) -> Result<(), String> {
    let team = HybridTeam::builder(ctx.mpi, ctx.comm, 2)
        .checked(checked)
        .timeout(Duration::from_millis(200))
        .build()
        .map_err(|e| format!("build: {e}"))?;
    let size = team.parties() as u64;
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut member in team.participants() {
            let failures = &failures;
            let rank = ctx.rank;
            s.spawn(move || {
                let mut out = [0u64];
                if rank == 0 {
                    let first = member.allreduce(&[1], &mut out, Op::Sum);
                    failures.check(matches!(first, Err(Error::Timeout { .. })), || {
                        format!("member {}: {first:?}, expected Timeout", member.rank())
                    });
                    let second = member.allreduce(&[1], &mut out, Op::Sum);
                    failures.check(matches!(second, Err(Error::Broken { .. })), || {
                        format!("member {}: {second:?}, expected Broken", member.rank())
                    });
                } else {
                    std::thread::sleep(Duration::from_millis(800));
                    let result = member.allreduce(&[1], &mut out, Op::Sum);
                    failures.check(result.is_ok() && out[0] == size, || {
                        format!(
                            "member {}: {result:?} {out:?}, expected {size}",
                            member.rank()
                        )
                    });
                }
            });
        }
    });
    failures.into_result()
}

/// The last rank comes late to a non-blocking allreduce; on the others, `wait_timeout` returns
/// `Timeout` and leaves the call pending (a `test` right after still says "not over"), then
/// `wait` completes it with the right sum, and the team goes on: not broken. Checked and not,
/// with one word (one MPI stage) and 1000 (checked: the envelope, then the data).
fn wait_timeout_pending(ctx: &Ctx<'_>) -> Result<(), String> {
    every(
        [(true, 1), (true, 1000), (false, 1), (false, 1000)],
        |(checked, len)| {
            wait_timeout_in(ctx, checked, len)
                .map_err(|e| format!("checked {checked}, {len} words: {e}"))
        },
    )
}

fn wait_timeout_in(ctx: &Ctx<'_>, checked: bool, len: usize) -> Result<(), String> {
    let team = HybridTeam::builder(ctx.mpi, ctx.comm, 2)
        .checked(checked)
        .build()
        .map_err(|e| format!("build: {e}"))?;
    let size = team.parties() as u64;
    let expected = size * (size + 1) / 2;
    let late = ctx.rank + 1 == ctx.size;
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut member in team.participants() {
            let failures = &failures;
            s.spawn(move || {
                let rank = member.rank();
                let input = vec![rank as u64 + 1; len];
                let mut out = vec![0u64; len];
                if late {
                    // Far longer than the others' timeout, so theirs passes first.
                    std::thread::sleep(Duration::from_millis(500));
                }
                let result =
                    member
                        .iallreduce(&input, &mut out, Op::Sum)
                        .and_then(|mut pending| {
                            if !late {
                                let early = pending.wait_timeout(Duration::from_millis(50));
                                failures.check(matches!(early, Err(Error::Timeout { .. })), || {
                                    format!(
                                    "member {rank}: {early:?} from wait_timeout, expected Timeout"
                                )
                                });
                                let polled = pending.test();
                                failures.check(matches!(polled, Ok(false)), || {
                                    format!(
                                        "member {rank}: {polled:?} from test, expected Ok(false)"
                                    )
                                });
                            }
                            pending.wait()
                        });
                failures.check(result.is_ok() && out.iter().all(|&v| v == expected), || {
                    format!(
                        "member {rank}: {result:?}, out[0] = {:?}, expected {expected}",
                        out.first()
                    )
                });
                let after = member.barrier();
                failures.check(after.is_ok(), || {
                    format!("member {rank}: barrier after the timed-out wait gave {after:?}")
                });
            });
        }
    });
    failures.into_result()
}
