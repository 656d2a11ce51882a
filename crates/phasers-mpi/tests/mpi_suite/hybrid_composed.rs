//! The composed hybrid collectives (allgather, alltoall, inclusive and exclusive scans) against
//! their sequential definitions, checked and unchecked, with 1, 2 or 3 threads per process and
//! with a different number on each process; and bad arguments: an output of the wrong length
//! is `InvalidArgument` without a hang, whichever member passes it.

use std::sync::Arc;

use phasers::Op;
use phasers_mpi::{Error, HybridMember, HybridTeam};

use crate::case::{every, Case, Ctx, Failures};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "hybrid_composed_allgather_matches_its_sequential_definition",
            run: allgather,
        },
        Case {
            name: "hybrid_composed_alltoall_matches_its_sequential_definition",
            run: alltoall,
        },
        Case {
            name: "hybrid_composed_scans_match_their_sequential_definitions",
            run: scans,
        },
        Case {
            name: "hybrid_composed_wrong_lengths_are_invalid_without_a_hang",
            run: wrong_lengths,
        },
        Case {
            name: "hybrid_composed_checked_mismatches_reach_every_member",
            run: mismatches,
        },
    ]
}

/// Element counts every case runs (0 as well: an empty call must work too).
const LENS: [usize; 4] = [0, 1, 7, 1000];

/// A name, and this process's threads from its rank.
type Layout = (&'static str, fn(usize) -> usize);

/// Threads per process: 1, 2 or 3 on every process, and a different number on each.
const LAYOUTS: [Layout; 4] = [
    ("1 thread each", |_| 1),
    ("2 threads each", |_| 2),
    ("3 threads each", |_| 3),
    ("1 + rank % 3 threads", |rank| 1 + rank % 3),
];

/// A value naming (member, index, call): every element tells where it came from.
pub fn value(member: usize, index: usize, call: u64) -> u64 {
    (call << 48) | ((member as u64) << 32) | index as u64
}

/// Builds a team of `threads` members on this process and runs `body` on each member's thread.
pub fn with_team(
    ctx: &Ctx<'_>,
    threads: usize,
    checked: bool,
    body: impl Fn(&mut HybridMember, &Failures) + Sync,
) -> Result<(), String> {
    let team = HybridTeam::builder(ctx.mpi, ctx.comm, threads)
        .checked(checked)
        .build()
        .map_err(|e| format!("build: {e}"))?;
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut member in team.participants() {
            let (failures, body) = (&failures, &body);
            s.spawn(move || body(&mut member, failures));
        }
    });
    failures.into_result()
}

/// Runs `body` on a team of every layout, checked and unchecked.
fn every_team(
    ctx: &Ctx<'_>,
    body: impl Fn(&mut HybridMember, &Failures) + Sync,
) -> Result<(), String> {
    let configs = [true, false]
        .into_iter()
        .flat_map(|checked| LAYOUTS.into_iter().map(move |layout| (checked, layout)));
    every(configs, |(checked, (layout, threads))| {
        with_team(ctx, threads(ctx.rank), checked, &body)
            .map_err(|e| format!("checked {checked}, {layout}: {e}"))
    })
}

fn allgather(ctx: &Ctx<'_>) -> Result<(), String> {
    every_team(ctx, |member, failures| {
        let (me, size) = (member.rank(), member.parties());
        for (c, len) in LENS.into_iter().enumerate() {
            let c = c as u64;
            let input: Vec<u64> = (0..len).map(|i| value(me, i, c)).collect();
            let mut output = vec![0u64; size * len];
            match member.allgather(&input, &mut output) {
                Ok(()) => {
                    let want: Vec<u64> = (0..size)
                        .flat_map(|m| (0..len).map(move |i| value(m, i, c)))
                        .collect();
                    failures.check(output == want, || {
                        format!("member {me}: allgather of {len}: wrong result")
                    });
                }
                Err(error) => failures.add(format!("member {me}: allgather of {len}: {error}")),
            }
            // A second element type, through the same steps.
            let input = [me as f64 + 0.5; 1];
            let mut output = vec![0f64; size];
            match member.allgather(&input, &mut output) {
                Ok(()) => failures.check(
                    output.iter().enumerate().all(|(m, &x)| x == m as f64 + 0.5),
                    || format!("member {me}: allgather f64: {output:?}"),
                ),
                Err(error) => failures.add(format!("member {me}: allgather f64: {error}")),
            }
        }
    })
}

fn alltoall(ctx: &Ctx<'_>) -> Result<(), String> {
    every_team(ctx, |member, failures| {
        let (me, size) = (member.rank(), member.parties());
        for (c, count) in LENS.into_iter().enumerate() {
            let c = c as u64;
            // Block j (for member j) of member m's input: elements j * count.. of it.
            let input: Vec<u64> = (0..size * count).map(|i| value(me, i, c)).collect();
            let mut output = vec![0u64; size * count];
            match member.alltoall(&input, &mut output) {
                Ok(()) => {
                    // Block i of this member's output: block `me` of member i's input.
                    let want: Vec<u64> = (0..size)
                        .flat_map(|i| (0..count).map(move |k| value(i, me * count + k, c)))
                        .collect();
                    failures.check(output == want, || {
                        let wrong = output.iter().zip(&want).position(|(a, b)| a != b);
                        format!(
                            "member {me}: alltoall of {count} per block: first wrong at {wrong:?}"
                        )
                    });
                }
                Err(error) => failures.add(format!(
                    "member {me}: alltoall of {count} per block: {error}"
                )),
            }
        }
    })
}

/// A named u64 operator, made fresh for each call (`Op` is not `Clone`), and its definition.
type U64Op = (&'static str, fn() -> Op<u64>, fn(u64, u64) -> u64);

fn u64_ops() -> [U64Op; 5] {
    [
        ("sum", || Op::Sum, u64::wrapping_add),
        ("product", || Op::Product, u64::wrapping_mul),
        ("max", || Op::Max, u64::max),
        ("xor", || Op::Xor, |a, b| a ^ b),
        (
            "custom",
            || Op::Custom {
                identity: 0,
                combine: Arc::new(|a: u64, b: u64| (a + b) % 1_000_000_007),
            },
            |a, b| (a + b) % 1_000_000_007,
        ),
    ]
}

/// Member `m`'s prefix with `f` over members `0..=m` (`None` for an exclusive scan's member 0).
fn prefix<T: Copy>(
    m: usize,
    exclusive: bool,
    len: usize,
    input: impl Fn(usize) -> Vec<T>,
    f: impl Fn(T, T) -> T,
) -> Option<Vec<T>> {
    let last = if exclusive { m.checked_sub(1)? } else { m };
    let mut acc = input(0);
    assert_eq!(acc.len(), len);
    for k in 1..=last {
        for (a, b) in acc.iter_mut().zip(input(k)) {
            *a = f(*a, b);
        }
    }
    Some(acc)
}

fn scans(ctx: &Ctx<'_>) -> Result<(), String> {
    every_team(ctx, |member, failures| {
        let me = member.rank();
        let mut c = 0u64;
        for len in LENS {
            for exclusive in [false, true] {
                let scan = if exclusive {
                    "scan_exclusive"
                } else {
                    "scan_inclusive"
                };
                for (name, op, f) in u64_ops() {
                    c += 1;
                    let input =
                        |m: usize| -> Vec<u64> { (0..len).map(|i| value(m, i, c)).collect() };
                    // Member 0's exclusive output must stay as it was.
                    let before: Vec<u64> = (0..len).map(|i| u64::MAX - i as u64).collect();
                    let mut output = before.clone();
                    let result = if exclusive {
                        member.scan_exclusive(&input(me), &mut output, op())
                    } else {
                        member.scan_inclusive(&input(me), &mut output, op())
                    };
                    match result {
                        Ok(()) => {
                            let want = prefix(me, exclusive, len, input, f).unwrap_or(before);
                            failures.check(output == want, || {
                                format!("member {me}: {scan} {name} of {len}: wrong result")
                            });
                        }
                        Err(error) => {
                            failures.add(format!("member {me}: {scan} {name} of {len}: {error}"))
                        }
                    }
                }
                // f64: sums of small integers are exact in every order; a custom max.
                type F64Op = (&'static str, fn() -> Op<f64>, fn(f64, f64) -> f64);
                let f64_ops: [F64Op; 2] = [
                    ("f64 sum", || Op::Sum, |a, b| a + b),
                    (
                        "f64 custom max",
                        || Op::Custom {
                            identity: f64::NEG_INFINITY,
                            combine: Arc::new(f64::max),
                        },
                        f64::max,
                    ),
                ];
                for (name, op, f) in f64_ops {
                    let input = |m: usize| -> Vec<f64> {
                        (0..len).map(|i| ((m * 7 + i * 3) % 101) as f64).collect()
                    };
                    let before = vec![-0.5f64; len];
                    let mut output = before.clone();
                    let result = if exclusive {
                        member.scan_exclusive(&input(me), &mut output, op())
                    } else {
                        member.scan_inclusive(&input(me), &mut output, op())
                    };
                    match result {
                        Ok(()) => {
                            let want = prefix(me, exclusive, len, input, f).unwrap_or(before);
                            failures.check(output == want, || {
                                format!("member {me}: {scan} {name} of {len}: wrong result")
                            });
                        }
                        Err(error) => {
                            failures.add(format!("member {me}: {scan} {name} of {len}: {error}"))
                        }
                    }
                }
            }
        }
    })
}

/// Whether `result` is `InvalidArgument`, or else what it was.
fn expect_invalid(what: &str, me: usize, result: phasers_mpi::Result<()>) -> Result<(), String> {
    match result {
        Err(Error::InvalidArgument { .. }) => Ok(()),
        other => Err(format!(
            "member {me}: {what}: {other:?}, expected InvalidArgument"
        )),
    }
}

/// One member (member 0, the steps' root, or the last) passes an output of the wrong length; or
/// every member does; or an alltoall input is not one block per member; or a scan takes a
/// bitwise op on floats. Checked, every member gets `InvalidArgument`; unchecked, the members of
/// the offending member's process do and the others finish. Nobody waits for ever (the
/// watchdog would abort the job), and the team works afterwards.
fn wrong_lengths(ctx: &Ctx<'_>) -> Result<(), String> {
    type Call = fn(&mut HybridMember, bool) -> phasers_mpi::Result<()>;
    // Each call with a wrong output length where `bad`.
    let calls: [(&str, Call); 4] = [
        ("allgather", |m, bad| {
            let len = 2 * m.parties() + usize::from(bad);
            m.allgather(&[1u64, 2], &mut vec![0; len])
        }),
        ("alltoall", |m, bad| {
            let len = m.parties() + usize::from(bad);
            m.alltoall(&vec![1u64; m.parties()], &mut vec![0; len])
        }),
        ("scan_inclusive", |m, bad| {
            let len = 3 - usize::from(bad);
            m.scan_inclusive(&[1u64; 3], &mut vec![0; len], Op::Sum)
        }),
        ("scan_exclusive", |m, bad| {
            let len = 3 + usize::from(bad);
            m.scan_exclusive(&[1i64; 3], &mut vec![0; len], Op::Max)
        }),
    ];
    every([true, false], |checked| {
        let threads = 2;
        with_team(ctx, threads, checked, |member, failures| {
            let (me, size) = (member.rank(), member.parties());
            let process_of = |rank: usize| rank / threads;
            let report = |r: Result<(), String>| {
                if let Err(message) = r {
                    failures.add(message);
                }
            };
            for (name, call) in calls {
                for bad in [0, size - 1] {
                    let what = format!("{name} with a wrong output on member {bad}");
                    let result = call(member, me == bad);
                    if checked || process_of(me) == process_of(bad) {
                        report(expect_invalid(&what, me, result));
                    } else if let Err(error) = result {
                        report(Err(format!("member {me}: {what}: {error}, expected Ok")));
                    }
                }
                let what = format!("{name} with a wrong output everywhere");
                report(expect_invalid(&what, me, call(member, true)));
            }
            let what = "alltoall of an input that is not one block per member";
            let len = size + 1;
            report(expect_invalid(
                what,
                me,
                member.alltoall(&vec![1u64; len], &mut vec![0; len]),
            ));
            let what = "scan_inclusive of f64 with Op::Xor";
            report(expect_invalid(
                what,
                me,
                member.scan_inclusive(&[1.0f64], &mut [0.0], Op::Xor),
            ));
            // The team still works, and every member's calls line up again.
            let mut all = vec![0u64; size];
            match member.allgather(&[me as u64], &mut all) {
                Ok(()) => failures.check(all == (0..size as u64).collect::<Vec<_>>(), || {
                    format!("member {me}: allgather after bad calls: {all:?}")
                }),
                Err(error) => {
                    failures.add(format!("member {me}: allgather after bad calls: {error}"))
                }
            }
        })
        .map_err(|e| format!("checked {checked}: {e}"))
    })
}

/// Checked: members that pass different input lengths, call different scans or different ops,
/// or an allgather against a plain gather, all get `Error::Mismatch` naming what differs.
fn mismatches(ctx: &Ctx<'_>) -> Result<(), String> {
    /// What differs, a part of the error's text, and the calls.
    type Scenario = (
        &'static str,
        &'static str,
        fn(&mut HybridMember) -> phasers_mpi::Result<()>,
    );
    let scenarios: [Scenario; 4] = [
        ("length", "step 1 of allgather", |m| {
            let len = if m.rank() == m.parties() - 1 { 2 } else { 1 };
            m.allgather(&vec![1u64; len], &mut vec![0; len * m.parties()])
        }),
        ("operation", "step 1 of scan_exclusive with Op::Sum", |m| {
            let mut out = [0u64];
            if m.rank() == m.parties() - 1 {
                m.scan_exclusive(&[1], &mut out, Op::Sum)
            } else {
                m.scan_inclusive(&[1], &mut out, Op::Sum)
            }
        }),
        ("operation", "scan_inclusive with Op::Max", |m| {
            let op = if m.rank() == m.parties() - 1 {
                Op::Max
            } else {
                Op::Sum
            };
            m.scan_inclusive(&[1u64], &mut [0], op)
        }),
        ("operation", "gather of 1 u64 element to root 0 (", |m| {
            let mut all = vec![0u64; m.parties()];
            if m.rank() == m.parties() - 1 {
                // A plain gather to member 0 (never this one), an allgather's first step.
                m.gather(0, &[1u64], &mut [])
            } else {
                m.allgather(&[1], &mut all)
            }
        }),
    ];
    every(scenarios, |(what, text, scenario)| {
        with_team(ctx, 2, true, |member, failures| {
            let me = member.rank();
            match scenario(member) {
                Err(error @ Error::Mismatch { .. }) => {
                    let message = error.to_string();
                    failures.check(
                        matches!(error, Error::Mismatch { what: got, .. } if got == what)
                            && message.contains(text),
                        || format!("member {me}: {message:?}, expected a mismatch of {what} naming {text:?}"),
                    )
                }
                other => failures.add(format!(
                    "member {me}: {other:?}, expected Mismatch of {what}"
                )),
            }
            // The next call lines up again.
            if let Err(error) = member.barrier() {
                failures.add(format!("member {me}: barrier after the mismatch: {error}"));
            }
        })
        .map_err(|e| format!("{what}: {e}"))
    })
}
