//! The non-blocking composed hybrid collectives (`iallgather`, `ialltoall`, `iscan_inclusive`,
//! `iscan_exclusive`): their results against the sequential definitions with 1 and 3 threads
//! per process, checked and unchecked, whether the handle is waited for, polled with `test` to
//! completion, or dropped; a checked mismatch against another call reaches every member; and a
//! `wait_timeout` on a process that is late gives `Timeout` and leaves the call pending.

use std::sync::Arc;
use std::time::Duration;

use phasers::Op;
use phasers_mpi::{Error, HybridMember, HybridPending, HybridTeam, Result};

use crate::case::{every, Case, Ctx, Failures};
use crate::hybrid_composed::{value, with_team};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "hybrid_icomposed_match_their_sequential_definitions",
            run: results,
        },
        Case {
            name: "hybrid_icomposed_test_polled_to_completion_stays_over",
            run: polled,
        },
        Case {
            name: "hybrid_icomposed_checked_mismatches_reach_every_member",
            run: mismatches,
        },
        Case {
            name: "hybrid_icomposed_wait_timeout_leaves_the_call_pending",
            run: wait_timeout_pending,
        },
    ]
}

/// Element counts every call runs (0 as well: an empty call must work too).
const LENS: [usize; 4] = [0, 1, 7, 1000];

/// How a member finishes a handle.
#[derive(Clone, Copy, Debug)]
enum Finish {
    Wait,
    /// `test` until it says over, then `test` again (the same answer) and drop.
    Poll,
    /// Drop the handle, which waits.
    Drop,
}

/// Each member finishes its handles its own way, and changes way from call to call, so that one
/// call meets members that wait, poll and drop.
fn finish_of(member: usize, call: u64) -> Finish {
    match (member as u64 + call) % 3 {
        0 => Finish::Wait,
        1 => Finish::Poll,
        _ => Finish::Drop,
    }
}

/// Finishes `pending` as `how`; the call's result (a dropped handle's is not seen: `Ok`).
fn finish(pending: HybridPending<'_>, how: Finish, failures: &Failures) -> Result<()> {
    match how {
        Finish::Wait => pending.wait(),
        Finish::Poll => poll_to_end(pending, failures),
        Finish::Drop => {
            drop(pending);
            Ok(())
        }
    }
}

/// Polls `pending` with `test` until it is over; a second `test` must say the same.
fn poll_to_end(mut pending: HybridPending<'_>, failures: &Failures) -> Result<()> {
    let first = loop {
        match pending.test() {
            Ok(false) => std::thread::yield_now(),
            other => break other,
        }
    };
    let again = pending.test();
    let same = match (&first, &again) {
        (Ok(a), Ok(b)) => a == b,
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    };
    failures.check(same, || {
        format!("test after the call was over gave {again:?}, first {first:?}")
    });
    first.map(|_| ())
}

/// Runs `body` on teams of 1 and 3 threads per process, checked and unchecked.
fn every_team(
    ctx: &Ctx<'_>,
    body: impl Fn(&mut HybridMember, &Failures) + Sync,
) -> Result<(), String> {
    let configs = [true, false]
        .into_iter()
        .flat_map(|checked| [1, 3].into_iter().map(move |threads| (checked, threads)));
    every(configs, |(checked, threads)| {
        with_team(ctx, threads, checked, &body)
            .map_err(|e| format!("checked {checked}, {threads} threads each: {e}"))
    })
}

/// Member `m`'s prefix of `input` with `f` over members `0..=m` (`None` for an exclusive
/// scan's member 0).
fn prefix(
    m: usize,
    exclusive: bool,
    input: impl Fn(usize) -> Vec<u64>,
    f: impl Fn(u64, u64) -> u64,
) -> Option<Vec<u64>> {
    let last = if exclusive { m.checked_sub(1)? } else { m };
    let mut acc = input(0);
    for k in 1..=last {
        for (a, b) in acc.iter_mut().zip(input(k)) {
            *a = f(*a, b);
        }
    }
    Some(acc)
}

/// Every i-form, every length, each member finishing its handles in turn by `wait`, `test`
/// polling and drop; every element of every result checked.
fn results(ctx: &Ctx<'_>) -> Result<(), String> {
    every_team(ctx, |member, failures| {
        let (me, size) = (member.rank(), member.parties());
        let mut c = 0u64;
        for len in LENS {
            // iallgather
            c += 1;
            let how = finish_of(me, c);
            let input: Vec<u64> = (0..len).map(|i| value(me, i, c)).collect();
            let mut output = vec![0u64; size * len];
            let result = member
                .iallgather(&input, &mut output)
                .and_then(|p| finish(p, how, failures));
            let want: Vec<u64> = (0..size)
                .flat_map(|m| (0..len).map(move |i| value(m, i, c)))
                .collect();
            failures.check(result.is_ok() && output == want, || {
                format!("member {me}: iallgather of {len} ({how:?}): {result:?}, wrong result")
            });

            // ialltoall: block j of member m's input goes to member j.
            c += 1;
            let how = finish_of(me, c);
            let input: Vec<u64> = (0..size * len).map(|i| value(me, i, c)).collect();
            let mut output = vec![0u64; size * len];
            let result = member
                .ialltoall(&input, &mut output)
                .and_then(|p| finish(p, how, failures));
            let want: Vec<u64> = (0..size)
                .flat_map(|i| (0..len).map(move |k| value(i, me * len + k, c)))
                .collect();
            failures.check(result.is_ok() && output == want, || {
                let wrong = output.iter().zip(&want).position(|(a, b)| a != b);
                format!(
                    "member {me}: ialltoall of {len} per block ({how:?}): {result:?}, first \
                     wrong at {wrong:?}"
                )
            });

            // The scans, with a built-in op and a custom one that does not commute.
            type U64Op = (&'static str, fn() -> Op<u64>, fn(u64, u64) -> u64);
            let ops: [U64Op; 2] = [
                ("sum", || Op::Sum, u64::wrapping_add),
                (
                    "custom",
                    || Op::Custom {
                        identity: 0,
                        combine: Arc::new(|a: u64, b: u64| a.wrapping_mul(31).wrapping_add(b)),
                    },
                    |a, b| a.wrapping_mul(31).wrapping_add(b),
                ),
            ];
            for exclusive in [false, true] {
                for (name, op, f) in ops {
                    c += 1;
                    let how = finish_of(me, c);
                    let input =
                        |m: usize| -> Vec<u64> { (0..len).map(|i| value(m, i, c)).collect() };
                    // Member 0's exclusive output must stay as it was.
                    let before: Vec<u64> = (0..len).map(|i| u64::MAX - i as u64).collect();
                    let mut output = before.clone();
                    let mine = input(me);
                    let started = if exclusive {
                        member.iscan_exclusive(&mine, &mut output, op())
                    } else {
                        member.iscan_inclusive(&mine, &mut output, op())
                    };
                    let result = started.and_then(|p| finish(p, how, failures));
                    let want = prefix(me, exclusive, input, f).unwrap_or(before);
                    failures.check(result.is_ok() && output == want, || {
                        format!(
                            "member {me}: iscan (exclusive {exclusive}) {name} of {len} \
                             ({how:?}): {result:?}, wrong result"
                        )
                    });
                }
            }
        }
        // An i-form and its blocking form are the same call: they meet.
        let mut all = vec![0u64; size];
        let result = if me % 2 == 0 {
            member.allgather(&[me as u64], &mut all)
        } else {
            member
                .iallgather(&[me as u64], &mut all)
                .and_then(HybridPending::wait)
        };
        failures.check(
            result.is_ok() && all == (0..size as u64).collect::<Vec<_>>(),
            || format!("member {me}: allgather beside iallgather: {result:?}, {all:?}"),
        );
    })
}

/// Every member polls every i-form with `test` only, counting its polls; once over, `test`
/// keeps saying so, and `wait` after it returns the same result.
fn polled(ctx: &Ctx<'_>) -> Result<(), String> {
    every_team(ctx, |member, failures| {
        let (me, size) = (member.rank(), member.parties());
        let len = 5;
        let input: Vec<u64> = (0..size * len).map(|i| value(me, i, 1)).collect();
        let mut output = vec![0u64; size * len];
        let outcome = member.ialltoall(&input, &mut output).map(|mut pending| {
            let mut polls = 0u64;
            let first = loop {
                polls += 1;
                match pending.test() {
                    Ok(false) => std::thread::yield_now(),
                    other => break other,
                }
            };
            let again: Vec<_> = (0..3).map(|_| pending.test()).collect();
            let waited = pending.wait();
            (polls, first, again, waited)
        });
        match outcome {
            Ok((polls, first, again, waited)) => {
                failures.check(
                    matches!(first, Ok(true))
                        && again.iter().all(|r| matches!(r, Ok(true)))
                        && waited.is_ok(),
                    || {
                        format!(
                            "member {me}: ialltoall polled {polls} times: {first:?}, then \
                             {again:?}, then wait {waited:?}"
                        )
                    },
                );
            }
            Err(error) => failures.add(format!("member {me}: ialltoall: {error}")),
        }
        let want: Vec<u64> = (0..size)
            .flat_map(|i| (0..len).map(move |k| value(i, me * len + k, 1)))
            .collect();
        failures.check(output == want, || {
            format!("member {me}: polled ialltoall: wrong result")
        });

        let mut prefix = [0i64];
        let outcome = member
            .iscan_inclusive(&[me as i64 + 1], &mut prefix, Op::Sum)
            .and_then(|p| poll_to_end(p, failures));
        let r = me as i64 + 1;
        failures.check(outcome.is_ok() && prefix == [r * (r + 1) / 2], || {
            format!("member {me}: polled iscan_inclusive: {outcome:?}, {prefix:?}")
        });
    })
}

/// Checked, 1 and 3 threads per process: the last member makes another call than the others'
/// i-form (another composed call, a plain gather, another op); every member of every process
/// gets `Error::Mismatch`, from `wait` or from `test`, and `test` says so again; the team works
/// afterwards.
fn mismatches(ctx: &Ctx<'_>) -> Result<(), String> {
    /// A name, and the call of a member (`odd`: the last member, which calls differently),
    /// finished as `how`.
    type Scenario = (
        &'static str,
        fn(&mut HybridMember, bool, Finish, &Failures) -> Result<()>,
    );
    let scenarios: [Scenario; 4] = [
        (
            "iallgather against a plain gather",
            |m, odd, how, failures| {
                let mut all = vec![0u64; m.parties()];
                if odd {
                    // A plain gather to member 0 (never this one), an allgather's first step.
                    m.gather(0, &[1u64], &mut [])
                } else {
                    finish(m.iallgather(&[1u64], &mut all)?, how, failures)
                }
            },
        ),
        (
            "ialltoall against an iallgather",
            |m, odd, how, failures| {
                let size = m.parties();
                let (input, mut out) = (vec![1u32; size], vec![0u32; size]);
                let pending = if odd {
                    m.iallgather(&input[..1], &mut out)
                } else {
                    m.ialltoall(&input, &mut out)
                };
                let pending = pending?;
                finish(pending, how, failures)
            },
        ),
        (
            "iscan_inclusive against a blocking scan_exclusive",
            |m, odd, how, failures| {
                let mut out = [0u64];
                if odd {
                    m.scan_exclusive(&[1], &mut out, Op::Sum)
                } else {
                    finish(m.iscan_inclusive(&[1], &mut out, Op::Sum)?, how, failures)
                }
            },
        ),
        (
            "iscan_exclusive with another op",
            |m, odd, how, failures| {
                let op = if odd { Op::Max } else { Op::Min };
                let mut out = [0i32; 2];
                let pending = m.iscan_exclusive(&[1, 2], &mut out, op)?;
                finish(pending, how, failures)
            },
        ),
    ];
    let configs = scenarios
        .into_iter()
        .flat_map(|s| [1, 3].into_iter().map(move |threads| (s, threads)));
    every(configs, |((what, scenario), threads)| {
        with_team(ctx, threads, true, |member, failures| {
            let (me, size) = (member.rank(), member.parties());
            // Waited for by some, polled by others (`poll_to_end` checks `test` again); a
            // dropped handle would hide the error.
            let how = if me % 2 == 0 {
                Finish::Wait
            } else {
                Finish::Poll
            };
            let result = scenario(member, me == size - 1, how, failures);
            failures.check(matches!(result, Err(Error::Mismatch { .. })), || {
                format!("member {me} ({how:?}): {result:?}, expected Mismatch")
            });
            // The next call lines up again.
            let mut all = vec![0u64; size];
            let after = member
                .iallgather(&[me as u64], &mut all)
                .and_then(HybridPending::wait);
            failures.check(
                after.is_ok() && all == (0..size as u64).collect::<Vec<_>>(),
                || format!("member {me}: iallgather after the mismatch: {after:?}, {all:?}"),
            );
        })
        .map_err(|e| format!("{what}, {threads} threads each: {e}"))
    })
}

/// The last rank is late, either to the call or to polling it after its start (so that the
/// others may be through the gather and wait in the second step); on the others, `wait_timeout`
/// returns `Timeout` and leaves the call pending (a `test` right after says "not over"), then
/// `wait` completes it with the right result, and the team goes on: not broken. Checked and
/// not, every i-form. (Unchecked, with the late rank late to poll only, a process may finish
/// the call before it: then `test` says "over".)
fn wait_timeout_pending(ctx: &Ctx<'_>) -> Result<(), String> {
    let configs = [true, false].into_iter().flat_map(|checked| {
        [false, true]
            .into_iter()
            .map(move |late_to_poll| (checked, late_to_poll))
    });
    every(configs, |(checked, late_to_poll)| {
        wait_timeout_in(ctx, checked, late_to_poll)
            .map_err(|e| format!("checked {checked}, late to poll {late_to_poll}: {e}"))
    })
}

fn wait_timeout_in(ctx: &Ctx<'_>, checked: bool, late_to_poll: bool) -> Result<(), String> {
    let team = HybridTeam::builder(ctx.mpi, ctx.comm, 2)
        .checked(checked)
        .build()
        .map_err(|e| format!("build: {e}"))?;
    let late = ctx.rank + 1 == ctx.size;
    // Far longer than the others' wait, so theirs passes first.
    let pause = || std::thread::sleep(Duration::from_millis(300));
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut member in team.participants() {
            let failures = &failures;
            s.spawn(move || {
                let (me, size) = (member.rank(), member.parties());
                // Runs `pending` to its end, the late rank pausing or the others timing out
                // first; the call's result.
                let run = |mut pending: HybridPending<'_>, call: &str| {
                    if late {
                        if late_to_poll {
                            pause();
                        }
                    } else {
                        let early = pending.wait_timeout(Duration::from_millis(30));
                        let polled = pending.test();
                        // Unchecked, a process through the gather may finish the second step
                        // without the late one: member 0's sends need no receiver to be there.
                        let over = !checked && late_to_poll && early.is_ok();
                        failures.check(over || matches!(early, Err(Error::Timeout { .. })), || {
                            format!(
                                "member {me}: {call}: {early:?} from wait_timeout, expected \
                                 Timeout"
                            )
                        });
                        failures.check(matches!(polled, Ok(done) if done == over), || {
                            format!(
                                "member {me}: {call}: {polled:?} from test, expected Ok({over})"
                            )
                        });
                    }
                    pending.wait()
                };
                let before_call = || {
                    if late && !late_to_poll {
                        pause();
                    }
                };

                before_call();
                let mut all = vec![0u64; 2 * size];
                let input = [me as u64, 10 * me as u64];
                let result = member
                    .iallgather(&input, &mut all)
                    .and_then(|p| run(p, "iallgather"));
                let want: Vec<u64> = (0..size as u64).flat_map(|r| [r, 10 * r]).collect();
                failures.check(result.is_ok() && all == want, || {
                    format!("member {me}: iallgather: {result:?}, {all:?}")
                });

                before_call();
                let input: Vec<u64> = (0..size).map(|j| (100 * me + j) as u64).collect();
                let mut out = vec![0u64; size];
                let result = member
                    .ialltoall(&input, &mut out)
                    .and_then(|p| run(p, "ialltoall"));
                let want: Vec<u64> = (0..size).map(|i| (100 * i + me) as u64).collect();
                failures.check(result.is_ok() && out == want, || {
                    format!("member {me}: ialltoall: {result:?}, {out:?}")
                });

                before_call();
                let mut prefix = [0u64];
                let r = me as u64 + 1;
                let result = member
                    .iscan_inclusive(&[r], &mut prefix, Op::Sum)
                    .and_then(|p| run(p, "iscan_inclusive"));
                failures.check(result.is_ok() && prefix == [r * (r + 1) / 2], || {
                    format!("member {me}: iscan_inclusive: {result:?}, {prefix:?}")
                });

                before_call();
                let mut before = [7u64];
                let result = member
                    .iscan_exclusive(&[r], &mut before, Op::Sum)
                    .and_then(|p| run(p, "iscan_exclusive"));
                let want = if me == 0 { 7 } else { (r - 1) * r / 2 };
                failures.check(result.is_ok() && before == [want], || {
                    format!("member {me}: iscan_exclusive: {result:?}, {before:?}")
                });

                let after = member.barrier();
                failures.check(after.is_ok(), || {
                    format!("member {me}: barrier after the timed-out waits gave {after:?}")
                });
            });
        }
    });
    failures.into_result()
}
