//! Calls that differ across processes (issue 18): in a checked team, the default, every member
//! of every process gets the same `Error::Mismatch`, naming both sides' calls and processes,
//! and the team goes on working; never an MPI error, a hang or garbage. Each scenario runs with
//! 1 and 2 threads per process, flat and (on 4 or more ranks) over emulated nodes, in debug and
//! in release builds (`.ci/run` runs these cases in both).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use mpi::traits::CommunicatorCollectives;
use phasers::Op;
use phasers_mpi::{mpi, Error, HybridMember, HybridTeam, Result};

use crate::case::{every, Case, Ctx, Failures};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "hybrid_mismatch_checked_by_default_unchecked_opts_out",
            run: defaults,
        },
        Case {
            name: "hybrid_mismatch_free_calls_either_side_of_the_envelope_capacity_are_exact",
            run: capacity,
        },
        Case {
            name: "hybrid_mismatch_across_processes_1_thread_every_member_errs",
            run: |ctx| across(ctx, 1),
        },
        Case {
            name: "hybrid_mismatch_across_processes_2_threads_every_member_errs",
            run: |ctx| across(ctx, 2),
        },
    ]
}

/// One way to call differently: what `Error::Mismatch` must name, and the call, made the odd
/// way (`odd`) by the members of the last process and the usual way by everyone else.
type Scenario = (
    &'static str,
    &'static str,
    fn(&mut HybridMember, bool) -> Result<()>,
);

fn allreduce_u64(m: &mut HybridMember, len: usize, op: Op<u64>) -> Result<()> {
    let mut out = vec![0u64; len];
    m.allreduce(&vec![1u64; len], &mut out, op)
}

fn broadcast_u64(m: &mut HybridMember, root: usize, len: usize) -> Result<()> {
    let mut buffer = vec![m.rank() as u64; len];
    m.broadcast(root, &mut buffer)
}

fn scenarios() -> Vec<Scenario> {
    vec![
        // The cases.
        ("allreduce length 2 vs 102", "length", |m, odd| {
            allreduce_u64(m, if odd { 102 } else { 2 }, Op::Sum)
        }),
        ("broadcast vs allreduce", "collective", |m, odd| {
            if odd {
                broadcast_u64(m, 0, 2)
            } else {
                allreduce_u64(m, 2, Op::Sum)
            }
        }),
        ("broadcast length 2 vs 200", "length", |m, odd| {
            broadcast_u64(m, 0, if odd { 200 } else { 2 })
        }),
        ("broadcast root 0 vs 1", "root", |m, odd| {
            broadcast_u64(m, usize::from(odd), 2)
        }),
        ("allreduce Sum vs Max", "operation", |m, odd| {
            allreduce_u64(m, 2, if odd { Op::Max } else { Op::Sum })
        }),
        ("allreduce u64 vs f64", "element type", |m, odd| {
            if odd {
                let mut out = [0f64; 2];
                m.allreduce(&[1.0, 1.0], &mut out, Op::Sum)
            } else {
                allreduce_u64(m, 2, Op::Sum)
            }
        }),
        // The same size, another type.
        ("allreduce u64 vs i64", "element type", |m, odd| {
            if odd {
                let mut out = [0i64; 2];
                m.allreduce(&[1, 1], &mut out, Op::Sum)
            } else {
                allreduce_u64(m, 2, Op::Sum)
            }
        }),
        // Both too large for the envelope: the check comes before the data.
        (
            "allreduce of 1000 f64, Sum vs Product",
            "operation",
            |m, odd| {
                let mut out = vec![0f64; 1000];
                let op = if odd { Op::Product } else { Op::Sum };
                m.allreduce(&vec![1.0; 1000], &mut out, op)
            },
        ),
        ("allreduce Op::Sum vs Op::custom", "operation", |m, odd| {
            let op = if odd {
                Op::Custom {
                    identity: 0,
                    combine: Arc::new(u64::wrapping_add),
                }
            } else {
                Op::Sum
            };
            allreduce_u64(m, 2, op)
        }),
        ("gather length 1 vs 3", "length", |m, odd| {
            let len = if odd { 3 } else { 1 };
            let mut all = vec![0u32; if m.rank() == 0 { m.parties() * len } else { 0 }];
            m.gather(0, &vec![7u32; len], &mut all)
        }),
        ("split vs barrier", "collective", |m, odd| {
            if odd {
                m.split(0, 0).map(|_| ())
            } else {
                m.barrier()
            }
        }),
    ]
}

/// Every scenario on teams of `threads` threads per process: flat, node-aware, and (on 4 or
/// more ranks) node-aware over emulated nodes of 2 processes, whose envelope goes through the
/// node and leader stages.
fn across(ctx: &Ctx<'_>, threads: usize) -> Result<(), String> {
    let mut shapes = vec![("flat", false, None), ("node-aware", true, None)];
    if ctx.size >= 4 {
        shapes.push(("emulated nodes of 2", true, Some(2)));
    }
    every(shapes, |(shape, node_aware, nodes)| {
        let mut builder = HybridTeam::builder(ctx.mpi, ctx.comm, threads).node_aware(node_aware);
        if let Some(n) = nodes {
            builder = builder.emulate_nodes(n);
        }
        let team = builder
            .build()
            .map_err(|e| format!("{shape}: build: {e}"))?;
        let mut all = scenarios();
        if threads > 1 {
            // Only the very last member differs: its process finds it among its own members,
            // and every other process learns of it too.
            all.push((
                "last member only: allreduce length 2 vs 102",
                "length",
                |m, _| {
                    let last = m.rank() == m.parties() - 1;
                    allreduce_u64(m, if last { 102 } else { 2 }, Op::Sum)
                },
            ));
            // The last member alone takes the engine's path (a gather), its process's other
            // members the direct one: they meet all the same.
            all.push((
                "last member only: gather vs allreduce",
                "collective",
                |m, _| {
                    if m.rank() == m.parties() - 1 {
                        m.gather(0, &[1u64], &mut [])
                    } else {
                        allreduce_u64(m, 1, Op::Sum)
                    }
                },
            ));
        }
        let last_process = ctx.size - 1;
        let texts: Vec<Mutex<Vec<String>>> = all.iter().map(|_| Mutex::default()).collect();
        let failures = Failures::default();
        std::thread::scope(|s| {
            for mut member in team.participants() {
                let (all, texts, failures) = (&all, &texts, &failures);
                s.spawn(move || {
                    let me = member.rank();
                    let odd = member.process_rank() == last_process;
                    for (i, (name, what, call)) in all.iter().enumerate() {
                        let expected_other = if name.starts_with("last member") {
                            member.parties() - 1
                        } else {
                            last_process * threads
                        };
                        match call(&mut member, odd) {
                            Err(Error::Mismatch {
                                what: got,
                                rank,
                                ours,
                                other,
                                theirs,
                            }) => {
                                let at_last = format!("(process {last_process})");
                                failures.check(
                                    got == *what
                                        && rank == 0
                                        && other == expected_other
                                        && ours.ends_with("(process 0)")
                                        && theirs.ends_with(&at_last),
                                    || {
                                        format!(
                                            "{shape}: {name}: member {me}: mismatch of {got} \
                                             between {rank} ({ours}) and {other} ({theirs}), \
                                             expected {what} between 0 (process 0) and \
                                             {expected_other} {at_last}"
                                        )
                                    },
                                );
                                let error = Error::Mismatch {
                                    what: got,
                                    rank,
                                    ours,
                                    other,
                                    theirs,
                                };
                                texts[i].lock().unwrap().push(error.to_string());
                            }
                            other => failures.add(format!(
                                "{shape}: {name}: member {me}: {other:?}, expected a mismatch of \
                                 {what}"
                            )),
                        }
                        // The team goes on: a matched call right after works.
                        let mut sum = [0u64];
                        match member.allreduce(&[1], &mut sum, Op::Sum) {
                            Ok(()) => failures.check(sum[0] == member.parties() as u64, || {
                                format!("{shape}: after {name}: member {me}: sum {}", sum[0])
                            }),
                            Err(error) => failures.add(format!(
                                "{shape}: after {name}: member {me}: allreduce: {error}"
                            )),
                        }
                    }
                });
            }
        });
        let mut result = failures.into_result();
        // The same text on every member of every process.
        for ((name, _, _), texts) in all.iter().zip(texts) {
            let texts = texts.into_inner().unwrap();
            let mut hasher = DefaultHasher::new();
            texts.first().hash(&mut hasher);
            let mine = hasher.finish();
            let mut hashes = vec![0u64; ctx.size];
            ctx.comm.all_gather_into(&mine, &mut hashes[..]);
            if texts.iter().any(|t| Some(t) != texts.first()) || hashes.iter().any(|&h| h != mine) {
                let message = format!(
                    "{shape}: {name}: members report different mismatches: {texts:?} (hashes \
                     by rank {hashes:?})"
                );
                result = Err(match result {
                    Ok(()) => message,
                    Err(earlier) => format!("{earlier}; {message}"),
                });
            }
        }
        result
    })
}

/// Matched checked calls whose data just fits the envelope and just does not: 208 bytes over
/// all processes where the envelope is one MPI reduction (26 words), 3,984 where it travels
/// point to point (498 words, this flat team's): the first read their result from the
/// envelope, the others send it after; both must give the sequential result. One thread per
/// process, so a split's entries (24 bytes a member) fit on up to 5 processes.
fn capacity(ctx: &Ctx<'_>) -> Result<(), String> {
    let team = HybridTeam::new(ctx.mpi, ctx.comm, 1).map_err(|e| format!("build: {e}"))?;
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut m in team.participants() {
            let failures = &failures;
            s.spawn(move || {
                let (me, size) = (m.rank(), m.parties());
                let last = size - 1;
                let check = |what: String, result: Result<()>, right: bool| match result {
                    Ok(()) => {
                        failures.check(right, || format!("member {me}: {what}: wrong result"))
                    }
                    Err(error) => failures.add(format!("member {me}: {what}: {error}")),
                };
                let value = |m: usize, i: usize| (m * 1000 + i) as u64;
                // A custom op's partial results fit only up to 498 / processes words.
                for len in [1usize, 26, 27, 498, 499] {
                    let input: Vec<u64> = (0..len).map(|i| value(me, i)).collect();
                    let sum: Vec<u64> = (0..len)
                        .map(|i| (0..size).map(|m| value(m, i)).sum())
                        .collect();
                    let mut out = vec![0u64; len];
                    let r = m.allreduce(&input, &mut out, Op::Sum);
                    check(format!("allreduce of {len}"), r, out == sum);
                    let mut out = vec![0u64; if me == last { len } else { 0 }];
                    let r = m.reduce(last, &input, &mut out, Op::Sum);
                    check(format!("reduce of {len}"), r, me != last || out == sum);
                    let custom = Op::Custom {
                        identity: 0,
                        combine: Arc::new(u64::wrapping_add),
                    };
                    let mut out = vec![0u64; len];
                    let r = m.allreduce(&input, &mut out, custom);
                    check(format!("custom allreduce of {len}"), r, out == sum);
                    let mut buffer = if me == last {
                        input.clone()
                    } else {
                        vec![0; len]
                    };
                    let r = m.broadcast(last, &mut buffer);
                    let want: Vec<u64> = (0..len).map(|i| value(last, i)).collect();
                    check(format!("broadcast of {len}"), r, buffer == want);
                }
                for len in [1usize, 17] {
                    let input: Vec<u64> = (0..len).map(|i| value(me, i)).collect();
                    let all: Vec<u64> = (0..size)
                        .flat_map(|m| (0..len).map(move |i| value(m, i)))
                        .collect();
                    let mut out = vec![0u64; if me == last { size * len } else { 0 }];
                    let r = m.gather(last, &input, &mut out);
                    check(format!("gather of {len}"), r, me != last || out == all);
                    let whole = if me == last { all.clone() } else { Vec::new() };
                    let mut mine = vec![0u64; len];
                    let r = m.scatter(last, &whole, &mut mine);
                    check(format!("scatter of {len}"), r, mine == input);
                }
                match m.split((me % 2) as u32, 0) {
                    Ok(Some(mut half)) => {
                        let mut sum = [0u64];
                        let r = half.allreduce(&[me as u64], &mut sum, Op::Sum);
                        let want = (0..size).filter(|m| m % 2 == me % 2).sum::<usize>() as u64;
                        check("allreduce after a split".to_owned(), r, sum[0] == want);
                    }
                    Ok(None) => failures.add(format!("member {me}: split: no sub-team")),
                    Err(error) => failures.add(format!("member {me}: split: {error}")),
                }
                check("barrier".to_owned(), m.barrier(), true);
            });
        }
    });
    failures.into_result()
}

/// A team is checked unless built `.unchecked()`, in every build profile.
fn defaults(ctx: &Ctx<'_>) -> Result<(), String> {
    let checked = HybridTeam::new(ctx.mpi, ctx.comm, 1).map_err(|e| e.to_string())?;
    let unchecked = HybridTeam::builder(ctx.mpi, ctx.comm, 1)
        .unchecked()
        .build()
        .map_err(|e| e.to_string())?;
    let env = std::env::var(phasers::team::CHECKED_ENV).ok();
    crate::case::ensure(
        (checked.is_checked() || env.is_some()) && !unchecked.is_checked(),
        || {
            format!(
                "checked by default: {}, unchecked(): {} ({} = {env:?})",
                checked.is_checked(),
                unchecked.is_checked(),
                phasers::team::CHECKED_ENV
            )
        },
    )
}
