//! The direct allreduce and reduce of unchecked teams without a timeout
//! (`src/hybrid/direct.rs`): results against the sequential definition on both sides of the
//! small/large threshold, with 1 to 3 threads per process, on every process count (and on 3
//! processes where the job has them: the exchange's fold for a count that is not a power of
//! two), mixed with the engine's calls; no allocation once warm; a local mismatch and a
//! member's wrong output; a checked team of one process, which takes the path too; and 64
//! members over every process, on 2 cores, with random late arrivals.
//!
//! This file also installs the suite's global allocator: the system's, counting each thread's
//! allocations so a case can check that its own calls make none.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::Communicator;
use phasers::Op;
use phasers_mpi::{mpi, Error, HybridMember, HybridTeam};

use crate::case::{every, Case, Ctx, Failures};
use crate::rng::Rng;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "hybrid_direct_allreduce_matches_its_sequential_definition",
            run: results,
        },
        Case {
            name: "hybrid_direct_allreduce_allocates_nothing_once_warm",
            run: no_allocation,
        },
        Case {
            name: "hybrid_direct_local_mismatch_and_wrong_output",
            run: local_errors,
        },
        Case {
            name: "hybrid_direct_checked_team_of_one_process",
            run: checked_alone,
        },
        Case {
            name: "hybrid_direct_stress_64_members",
            run: stress_64_members,
        },
    ]
}

/// The system allocator, counting the allocations of each thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // A thread being torn down has no counter left; its allocations are not ours to count.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

pub(crate) fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; counting
// touches only a thread-local `Cell` that never allocates (const-initialized, no destructor).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `body` on every member of an unchecked team of `threads` per process on `comm`.
fn with_team(
    ctx: &Ctx<'_>,
    comm: &SimpleCommunicator,
    threads: usize,
    body: impl Fn(&mut HybridMember, &Failures) + Sync,
) -> Result<(), String> {
    with_team_checked(ctx, comm, threads, false, body)
}

fn with_team_checked(
    ctx: &Ctx<'_>,
    comm: &SimpleCommunicator,
    threads: usize,
    checked: bool,
    body: impl Fn(&mut HybridMember, &Failures) + Sync,
) -> Result<(), String> {
    let team = HybridTeam::builder(ctx.mpi, comm, threads)
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

/// Member `m`'s input for call `c`: small values, so every order of a sum or of a product of
/// them is exact (wrapping for integers; ones and twos for float products).
fn input_u64(m: usize, len: usize, c: u64) -> Vec<u64> {
    (0..len)
        .map(|i| ((m as u64 * 1_000_003) ^ (i as u64 * 7_919) ^ c.wrapping_mul(31)) % 1000 + 1)
        .collect()
}

fn fold<T: Copy>(size: usize, input: impl Fn(usize) -> Vec<T>, f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = input(0);
    for m in 1..size {
        for (a, b) in acc.iter_mut().zip(input(m)) {
            *a = f(*a, b);
        }
    }
    acc
}

type U64Op = (&'static str, fn() -> Op<u64>, fn(u64, u64) -> u64);
type F64Op = (&'static str, fn() -> Op<f64>, fn(f64, f64) -> f64);

const U64_OPS: [U64Op; 7] = [
    ("sum", || Op::Sum, u64::wrapping_add),
    ("product", || Op::Product, u64::wrapping_mul),
    ("min", || Op::Min, u64::min),
    ("max", || Op::Max, u64::max),
    ("and", || Op::And, |a, b| a & b),
    ("or", || Op::Or, |a, b| a | b),
    ("xor", || Op::Xor, |a, b| a ^ b),
];

const F64_OPS: [F64Op; 4] = [
    ("sum", || Op::Sum, |a, b| a + b),
    ("product", || Op::Product, |a, b| a * b),
    ("min", || Op::Min, f64::min),
    ("max", || Op::Max, f64::max),
];

/// Lengths on both sides of the direct path's thresholds: the exchange halves from 4 KiB (512
/// `u64`), the process combines alone up to 8 KiB (1024 `u64`).
const LENGTHS: [usize; 7] = [0, 1, 7, 512, 1024, 1025, 20_000];

/// The first `count` processes of `ctx.comm` (`None` on the others).
fn first(ctx: &Ctx<'_>, count: usize) -> Option<SimpleCommunicator> {
    let color = if ctx.rank < count {
        Color::with_value(0)
    } else {
        Color::undefined()
    };
    ctx.comm.split_by_color(color)
}

fn results(ctx: &Ctx<'_>) -> Result<(), String> {
    let mut comms = vec![(ctx.size, first(ctx, ctx.size))];
    if ctx.size >= 4 {
        // Three processes: the exchange folds the third into the power of two and back.
        comms.push((3, first(ctx, 3)));
    }
    every(comms, |(processes, comm)| {
        let Some(comm) = comm else {
            return Ok(());
        };
        every([1usize, 2, 3], |threads| {
            with_team(ctx, &comm, threads, |member, failures| {
                check_member(member, failures)
            })
            .map_err(|e| format!("{processes} processes x {threads} threads: {e}"))
        })
    })
}

fn check_member(member: &mut HybridMember, failures: &Failures) {
    let (me, size) = (member.rank(), member.parties());
    let mut c = 0u64;
    for len in LENGTHS {
        for (name, op, f) in U64_OPS {
            c += 1;
            let mut out = vec![0u64; len];
            match member.allreduce(&input_u64(me, len, c), &mut out, op()) {
                Ok(()) => failures.check(out == fold(size, |m| input_u64(m, len, c), f), || {
                    format!("member {me}: u64 {name} of {len}: wrong result")
                }),
                Err(error) => failures.add(format!("member {me}: u64 {name} of {len}: {error}")),
            }
        }
        for (name, op, f) in F64_OPS {
            c += 1;
            let product = name == "product";
            let input = |m: usize| -> Vec<f64> {
                input_u64(m, len, c)
                    .into_iter()
                    .map(|v| {
                        if product {
                            (1 + v % 2) as f64
                        } else {
                            v as f64
                        }
                    })
                    .collect()
            };
            let mut out = vec![0f64; len];
            match member.allreduce(&input(me), &mut out, op()) {
                Ok(()) => failures.check(out == fold(size, input, f), || {
                    format!("member {me}: f64 {name} of {len}: wrong result")
                }),
                Err(error) => failures.add(format!("member {me}: f64 {name} of {len}: {error}")),
            }
        }
        for root in [0, size - 1, size / 2] {
            c += 1;
            // Only the root's output is written; the others pass none.
            let mut out = vec![0u64; if me == root { len } else { 0 }];
            match member.reduce(root, &input_u64(me, len, c), &mut out, Op::Max) {
                Ok(()) if me == root => failures.check(
                    out == fold(size, |m| input_u64(m, len, c), u64::max),
                    || format!("member {me}: reduce of {len} to {root}: wrong result"),
                ),
                Ok(()) => {}
                Err(error) => {
                    failures.add(format!("member {me}: reduce of {len} to {root}: {error}"))
                }
            }
        }
        // The engine's calls in between: the direct calls keep the slots' turns.
        c += 1;
        let mut word = [if me == 0 { c } else { 0 }];
        if let Err(error) = member.broadcast(0, &mut word) {
            failures.add(format!(
                "member {me}: broadcast after length {len}: {error}"
            ));
        }
        failures.check(word == [c], || {
            format!("member {me}: broadcast after {len}")
        });
        let input = input_u64(me, len, c);
        let mut out = vec![0u64; len];
        match member.iallreduce(&input, &mut out, Op::Sum) {
            Ok(pending) => {
                if let Err(error) = pending.wait() {
                    failures.add(format!("member {me}: iallreduce of {len}: {error}"));
                }
            }
            Err(error) => failures.add(format!("member {me}: iallreduce of {len}: {error}")),
        }
        failures.check(
            out == fold(size, |m| input_u64(m, len, c), u64::wrapping_add),
            || format!("member {me}: iallreduce of {len}: wrong result"),
        );
    }
}

/// Once every buffer has grown (the first calls), a member's allreduces allocate nothing: one
/// word, and an array above the small/large threshold.
fn no_allocation(ctx: &Ctx<'_>) -> Result<(), String> {
    const CALLS: u64 = 50;
    every([1usize, 2], |threads| {
        with_team(ctx, ctx.comm, threads, |member, failures| {
            let (me, size) = (member.rank(), member.parties());
            let word = [me as u64 + 1];
            let mut sum = [0u64];
            let array = vec![me as f64 + 1.0; 4096];
            let mut total = vec![0f64; 4096];
            let mut round = |failures: &Failures| {
                for _ in 0..CALLS {
                    let small = member.allreduce(&word, &mut sum, Op::Sum);
                    let large = member.allreduce(&array, &mut total, Op::Sum);
                    if let Err(error) = small.and(large) {
                        failures.add(format!("member {me}: {error}"));
                        return;
                    }
                }
            };
            round(failures);
            let before = allocations();
            round(failures);
            let made = allocations() - before;
            let want = (size * (size + 1) / 2) as u64;
            failures.check(sum == [want] && total[4095] == want as f64, || {
                format!(
                    "member {me}: sums {sum:?} and {}, expected {want}",
                    total[4095]
                )
            });
            failures.check(made == 0, || {
                format!(
                    "member {me} ({threads} threads per process): {made} allocations in {} \
                     warm allreduces",
                    2 * CALLS
                )
            });
        })
        .map_err(|e| format!("{threads} threads: {e}"))
    })
}

/// Local member 1 of every process passes a longer input, then another op on a large array:
/// every member of every process gets `Mismatch` each time (each process sends zeros on, so
/// none waits). Then member 0 passes an output of
/// the wrong length: every member of its process gets `InvalidArgument`, as on the engine's
/// path, and the other processes go on. The team goes on working.
fn local_errors(ctx: &Ctx<'_>) -> Result<(), String> {
    with_team(ctx, ctx.comm, 2, |member, failures| {
        let (me, size) = (member.rank(), member.parties());
        let len = if member.local_rank() == 1 { 3 } else { 2 };
        let mut out = vec![0u64; len];
        match member.allreduce(&vec![1u64; len], &mut out, Op::Sum) {
            Err(Error::Mismatch { what: "length", .. }) => {}
            other => failures.add(format!(
                "member {me}: {other:?}, expected a length Mismatch"
            )),
        }
        // Large arrays go to a reduction group per op: an op that differs must be found first.
        let op = if member.local_rank() == 1 {
            Op::Max
        } else {
            Op::Sum
        };
        let mut out = vec![0f64; 2000];
        match member.allreduce(&[1.0; 2000], &mut out, op) {
            Err(Error::Mismatch {
                what: "operation", ..
            }) => {}
            other => failures.add(format!("member {me}: {other:?}, expected an op Mismatch")),
        }
        let mut out = vec![0u64; if me == 0 { 5 } else { 4 }];
        let result = member.allreduce(&[1u64; 4], &mut out, Op::Sum);
        if member.process_rank() == 0 {
            failures.check(matches!(result, Err(Error::InvalidArgument { .. })), || {
                format!("member {me}: {result:?}, expected InvalidArgument")
            });
        } else {
            failures.check(result.is_ok(), || format!("member {me}: {result:?}"));
        }
        let mut sum = [0u64];
        let result = member.allreduce(&[1], &mut sum, Op::Sum);
        failures.check(result.is_ok() && sum == [size as u64], || {
            format!("member {me}: {result:?} {sum:?} after the errors, expected {size}")
        });
    })
}

/// A checked team of one process (process 0 alone): results, allocations, and the checks of
/// its meeting: an operator that differs is every member's `Mismatch`, a wrong output every
/// member's `InvalidArgument`.
fn checked_alone(ctx: &Ctx<'_>) -> Result<(), String> {
    let Some(alone) = first(ctx, 1) else {
        return Ok(());
    };
    with_team_checked(ctx, &alone, 2, true, |member, failures| {
        let me = member.rank();
        if !member.is_checked() {
            failures.add(format!("member {me}: the team is not checked"));
        }
        check_member(member, failures);
        let op = if me == 1 { Op::Max } else { Op::Sum };
        let mut out = [0u64];
        match member.allreduce(&[1], &mut out, op) {
            Err(Error::Mismatch {
                what: "operation", ..
            }) => {}
            other => failures.add(format!("member {me}: {other:?}, expected Mismatch")),
        }
        let mut out = vec![0u64; if me == 0 { 2 } else { 1 }];
        let result = member.allreduce(&[1], &mut out, Op::Sum);
        failures.check(matches!(result, Err(Error::InvalidArgument { .. })), || {
            format!("member {me}: {result:?}, expected InvalidArgument")
        });
        let (word, mut sum) = ([me as u64 + 1], [0u64]);
        let array = vec![me as f64 + 1.0; 4096];
        let mut total = vec![0f64; 4096];
        let mut round = || {
            for _ in 0..20 {
                let small = member.allreduce(&word, &mut sum, Op::Sum);
                let large = member.allreduce(&array, &mut total, Op::Sum);
                if let Err(error) = small.and(large) {
                    failures.add(format!("member {me}: {error}"));
                    return;
                }
            }
        };
        round();
        let before = allocations();
        round();
        let made = allocations() - before;
        failures.check(made == 0 && sum == [3] && total[0] == 3.0, || {
            format!(
                "member {me}: {made} allocations, sums {sum:?} and {}",
                total[0]
            )
        });
    })
}

/// 64 members in all (64 / processes threads per process, so far more threads than cores),
/// each call of one word and of an array above the small/large threshold checked against its
/// definition, while random members arrive late: the in-process meeting's last arrival, its
/// done flag and the inline result are taken by every member in every order.
fn stress_64_members(ctx: &Ctx<'_>) -> Result<(), String> {
    const EPISODES: u64 = 30;
    // 16 KiB of u64: above the 8 KiB threshold, so `phasers::Reduction` combines it.
    const LARGE: usize = 2048;
    let threads = (64 / ctx.size).max(1);
    let rank = ctx.rank;
    with_team(ctx, ctx.comm, threads, |member, failures| {
        let (me, size) = (member.rank(), member.parties());
        let mut rng = Rng::new(0x5eed, rank, me);
        for c in 0..EPISODES {
            for len in [1, LARGE] {
                rng.maybe_sleep(16, std::time::Duration::from_micros(300));
                let mut out = vec![0u64; len];
                match member.allreduce(&input_u64(me, len, c), &mut out, Op::Sum) {
                    Ok(()) => failures.check(
                        out == fold(size, |m| input_u64(m, len, c), u64::wrapping_add),
                        || format!("member {me}: episode {c}, sum of {len}: wrong result"),
                    ),
                    Err(error) => {
                        failures.add(format!("member {me}: episode {c}, sum of {len}: {error}"))
                    }
                }
            }
        }
    })
    .map_err(|e| format!("{} processes x {threads} threads: {e}", ctx.size))
}
