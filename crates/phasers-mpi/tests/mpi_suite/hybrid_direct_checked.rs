//! Checked calls on the direct path (issue 32): a blocking barrier, broadcast, reduce and
//! allreduce of a checked team send the same envelope as the engine, so they meet the
//! non-blocking forms of other processes and of other members of their own process; their data
//! crosses either inside the envelope (up to 3,984 bytes) or after it, exact either way. The
//! envelope goes through the team's mailboxes in shared memory (every process here runs on one
//! node) or, on a team told its processes are on separate nodes, as MPI messages: the cases run
//! both.

use std::time::Duration;

use phasers::Op;
use phasers_mpi::{HybridMember, HybridTeam};

use crate::case::{every, Case, Ctx, Failures};
use crate::rng::Rng;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "hybrid_direct_checked_sizes_either_side_of_the_record_are_exact",
            run: sizes,
        },
        Case {
            name: "hybrid_direct_checked_blocking_meets_non_blocking_across_and_within_processes",
            run: mixed_forms,
        },
        Case {
            name: "hybrid_direct_checked_stress_64_members_on_both_paths",
            run: stress_both_paths,
        },
    ]
}

/// Payload bytes a record carries point to point (4032 - 48 = 3984): 498 `u64`s fit, 499 follow.
const FITS: usize = 498;
/// Lengths around every switch: the state line (7 words), the record, the last arrival's
/// combining (8 KiB), recursive halving (4 KiB), and a large array.
const LENGTHS: [usize; 8] = [0, 1, 7, 8, FITS, FITS + 1, 1100, 1 << 17];

fn value(member: usize, i: usize) -> u64 {
    (member as u64) << 32 | i as u64
}

/// How a team's envelopes travel.
#[derive(Clone, Copy, Debug)]
enum Transport {
    /// Through the mailboxes: every process of these tests runs on one node.
    Mailboxes,
    /// As MPI messages: the team is told each process is a node of its own.
    Messages,
}

fn team(ctx: &Ctx<'_>, threads: usize, transport: Transport) -> Result<HybridTeam, String> {
    let builder = HybridTeam::builder(ctx.mpi, ctx.comm, threads);
    let builder = match transport {
        Transport::Mailboxes => builder,
        Transport::Messages => builder.emulate_nodes(1),
    };
    builder.build().map_err(|e| format!("build: {e}"))
}

/// Every thread count of `threads` with either transport.
fn shapes(threads: [usize; 2]) -> [(usize, Transport); 4] {
    [
        (threads[0], Transport::Mailboxes),
        (threads[1], Transport::Mailboxes),
        (threads[0], Transport::Messages),
        (threads[1], Transport::Messages),
    ]
}

/// Every length of [`LENGTHS`] through barrier, broadcast, reduce and allreduce, on checked
/// teams of 1 and 3 threads per process: every result checked against the sequential one.
fn sizes(ctx: &Ctx<'_>) -> Result<(), String> {
    every(shapes([1, 3]), |(threads, transport)| {
        let team = team(ctx, threads, transport)?;
        let failures = Failures::default();
        std::thread::scope(|s| {
            for mut m in team.participants() {
                let failures = &failures;
                s.spawn(move || sizes_on(&mut m, failures));
            }
        });
        failures
            .into_result()
            .map_err(|e| format!("{threads} threads, {transport:?}: {e}"))
    })
}

fn sizes_on(m: &mut HybridMember, failures: &Failures) {
    let (me, size) = (m.rank(), m.parties());
    let last = size - 1;
    for len in LENGTHS {
        let input: Vec<u64> = (0..len).map(|i| value(me, i)).collect();
        let sum: Vec<u64> = (0..len)
            .map(|i| (0..size).map(|r| value(r, i)).fold(0, u64::wrapping_add))
            .collect();
        let mut out = vec![0u64; len];
        match m.allreduce(&input, &mut out, Op::Sum) {
            Ok(()) => failures.check(out == sum, || {
                format!("member {me}: allreduce of {len}: wrong result")
            }),
            Err(e) => failures.add(format!("member {me}: allreduce of {len}: {e}")),
        }
        let mut out = vec![0u64; if me == last { len } else { 0 }];
        match m.reduce(last, &input, &mut out, Op::Sum) {
            Ok(()) => failures.check(me != last || out == sum, || {
                format!("member {me}: reduce of {len}: wrong result")
            }),
            Err(e) => failures.add(format!("member {me}: reduce of {len}: {e}")),
        }
        let mut buffer = if me == last {
            input.clone()
        } else {
            vec![0; len]
        };
        let want: Vec<u64> = (0..len).map(|i| value(last, i)).collect();
        match m.broadcast(last, &mut buffer) {
            Ok(()) => failures.check(buffer == want, || {
                format!("member {me}: broadcast of {len}: wrong result")
            }),
            Err(e) => failures.add(format!("member {me}: broadcast of {len}: {e}")),
        }
        if let Err(e) = m.barrier() {
            failures.add(format!("member {me}: barrier after {len}: {e}"));
        }
    }
}

/// Processes of odd rank (and, with 2 threads, every process's member 1) call the
/// non-blocking form, with a pause first so that the other side is already waiting; the
/// others call the blocking one. Each call must complete with the right result: the blocking
/// callers learn from the envelope that some process is on the engine and run its stages
/// (large data), and a process whose members took both paths sends its direct ones to the
/// engine.
fn mixed_forms(ctx: &Ctx<'_>) -> Result<(), String> {
    every(shapes([1, 2]), |(threads, transport)| {
        let team = team(ctx, threads, transport)?;
        let failures = Failures::default();
        std::thread::scope(|s| {
            for mut m in team.participants() {
                let failures = &failures;
                s.spawn(move || {
                    let odd = m.process_rank() % 2 == 1 || m.local_rank() == 1;
                    mixed_on(&mut m, odd, failures);
                });
            }
        });
        failures
            .into_result()
            .map_err(|e| format!("{threads} threads, {transport:?}: {e}"))
    })
}

fn mixed_on(m: &mut HybridMember, non_blocking: bool, failures: &Failures) {
    let (me, size) = (m.rank(), m.parties());
    let pause = || {
        if non_blocking {
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    for len in [1usize, FITS + 1, 1 << 15] {
        let input: Vec<u64> = (0..len).map(|i| value(me, i)).collect();
        let sum: Vec<u64> = (0..len)
            .map(|i| (0..size).map(|r| value(r, i)).fold(0, u64::wrapping_add))
            .collect();
        let mut out = vec![0u64; len];
        pause();
        let result = if non_blocking {
            m.iallreduce(&input, &mut out, Op::Sum)
                .and_then(|pending| pending.wait())
        } else {
            m.allreduce(&input, &mut out, Op::Sum)
        };
        match result {
            Ok(()) => failures.check(out == sum, || {
                format!("member {me}: mixed allreduce of {len}: wrong result")
            }),
            Err(e) => failures.add(format!("member {me}: mixed allreduce of {len}: {e}")),
        }
        let mut buffer = if me == 0 { input.clone() } else { vec![0; len] };
        let want: Vec<u64> = (0..len).map(|i| value(0, i)).collect();
        pause();
        let result = if non_blocking {
            m.ibroadcast(0, &mut buffer)
                .and_then(|pending| pending.wait())
        } else {
            m.broadcast(0, &mut buffer)
        };
        match result {
            Ok(()) => failures.check(buffer == want, || {
                format!("member {me}: mixed broadcast of {len}: wrong result")
            }),
            Err(e) => failures.add(format!("member {me}: mixed broadcast of {len}: {e}")),
        }
        pause();
        let result = if non_blocking {
            m.ibarrier().and_then(|pending| pending.wait())
        } else {
            m.barrier()
        };
        if let Err(e) = result {
            failures.add(format!("member {me}: mixed barrier: {e}"));
        }
    }
}

/// 64 members over all processes (more threads than cores) run 120 calls: the collective and
/// length of each come from one seed shared by all, and each member flips its own coin for the
/// blocking or the non-blocking form, so most calls meet members on both paths in a process
/// (`arrivals.rs` sends the direct ones to the engine) and processes on both paths (the
/// envelope's engine flag). Members nap now and then, so arrivals come in every order. Every
/// result is checked.
fn stress_both_paths(ctx: &Ctx<'_>) -> Result<(), String> {
    const CALLS: u64 = 120;
    let threads = (64 / ctx.size).max(1);
    let (seed, rank) = (ctx.seed, ctx.rank);
    let team = team(ctx, threads, Transport::Mailboxes)?;
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut m in team.participants() {
            let failures = &failures;
            s.spawn(move || {
                let (me, size) = (m.rank(), m.parties());
                let mut shared = Rng::new(seed, 0, 0);
                let mut own = Rng::new(seed, rank, me + 1);
                for c in 0..CALLS {
                    let kind = shared.below(3);
                    let len = [1usize, 100, 600][shared.below(3) as usize];
                    let root = shared.below(size as u64) as usize;
                    let non_blocking = own.below(2) == 0;
                    own.maybe_sleep(16, Duration::from_micros(200));
                    let input: Vec<u64> = (0..len).map(|i| value(me, i) ^ c).collect();
                    let result = match kind {
                        0 => {
                            let mut out = vec![0u64; len];
                            let r = if non_blocking {
                                m.iallreduce(&input, &mut out, Op::Sum)
                                    .and_then(|p| p.wait())
                            } else {
                                m.allreduce(&input, &mut out, Op::Sum)
                            };
                            let sum: Vec<u64> = (0..len)
                                .map(|i| {
                                    (0..size)
                                        .map(|r| value(r, i) ^ c)
                                        .fold(0, u64::wrapping_add)
                                })
                                .collect();
                            r.map(|()| out == sum)
                        }
                        1 => {
                            let mut buffer = if me == root {
                                input.clone()
                            } else {
                                vec![0; len]
                            };
                            let r = if non_blocking {
                                m.ibroadcast(root, &mut buffer).and_then(|p| p.wait())
                            } else {
                                m.broadcast(root, &mut buffer)
                            };
                            let want: Vec<u64> = (0..len).map(|i| value(root, i) ^ c).collect();
                            r.map(|()| buffer == want)
                        }
                        _ => {
                            let r = if non_blocking {
                                m.ibarrier().and_then(|p| p.wait())
                            } else {
                                m.barrier()
                            };
                            r.map(|()| true)
                        }
                    };
                    match result {
                        Ok(right) => failures.check(right, || {
                            format!(
                                "member {me}: call {c} (kind {kind}, {len} words): wrong result"
                            )
                        }),
                        Err(e) => failures.add(format!("member {me}: call {c} (kind {kind}): {e}")),
                    }
                }
            });
        }
    });
    failures
        .into_result()
        .map_err(|e| format!("{} processes x {threads} threads: {e}", ctx.size))
}
