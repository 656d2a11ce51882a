//! The engine's calls (checked teams, teams with a timeout, non-blocking calls, broadcasts and
//! barriers: everything the direct path does not take) reuse their slot's buffers: once warm,
//! a member's calls allocate nothing, small or large (counted with the suite's allocator, in
//! `hybrid_direct.rs`).

use std::time::Duration;

use phasers::Op;
use phasers_mpi::{HybridMember, HybridTeam};

use crate::case::{every, Case, Ctx, Failures};
use crate::hybrid_direct::allocations;

pub fn cases() -> Vec<Case> {
    vec![Case {
        name: "hybrid_engine_calls_allocate_nothing_once_warm",
        run: no_allocation,
    }]
}

/// Elements of the large calls: 1M `f64`, 8 MB, far past the envelope's payload, so the data
/// follows the envelope in MPI collectives of its own.
const LARGE: usize = 1 << 20;
/// Rounds before the counted one: the first fills the slots' buffer lists and grows their
/// buffers; the second checks the lists settled.
const WARM_ROUNDS: usize = 2;

/// The team kinds whose calls take the engine: checked (the default), and unchecked with a
/// timeout.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Checked,
    Timeout,
}

fn no_allocation(ctx: &Ctx<'_>) -> Result<(), String> {
    let kinds = [Kind::Checked, Kind::Timeout];
    every(
        kinds.into_iter().flat_map(|k| [(k, 1usize), (k, 2)]),
        |(kind, threads)| {
            let builder = HybridTeam::builder(ctx.mpi, ctx.comm, threads);
            let builder = match kind {
                Kind::Checked => builder.checked(true),
                Kind::Timeout => builder.checked(false).timeout(Duration::from_secs(120)),
            };
            let team = builder.build().map_err(|e| format!("build: {e}"))?;
            let failures = Failures::default();
            std::thread::scope(|s| {
                for mut member in team.participants() {
                    let failures = &failures;
                    s.spawn(move || count_round(&mut member, failures));
                }
            });
            failures
                .into_result()
                .map_err(|e| format!("{kind:?}, {threads} threads per process: {e}"))
        },
    )
}

/// The member's buffers, made before counting.
struct Buffers {
    word: [u64; 1],
    sum: [u64; 1],
    array: Vec<f64>,
    total: Vec<f64>,
    cast: Vec<f64>,
    small_cast: [u64; 1],
}

/// Warm rounds, then one counted round that must allocate nothing on this member's thread.
fn count_round(member: &mut HybridMember, failures: &Failures) {
    let me = member.rank();
    let mut buffers = Buffers {
        word: [me as u64 + 1],
        sum: [0],
        array: vec![me as f64 + 1.0; LARGE],
        total: vec![0.0; LARGE],
        cast: vec![0.0; LARGE],
        small_cast: [0],
    };
    for _ in 0..WARM_ROUNDS {
        if let Err(error) = round(member, &mut buffers) {
            failures.add(format!("member {me}, warm round: {error}"));
            return;
        }
    }
    let before = allocations();
    let result = round(member, &mut buffers);
    let made = allocations() - before;
    if let Err(error) = result {
        failures.add(format!("member {me}, counted round: {error}"));
        return;
    }
    failures.check(made == 0, || {
        format!("member {me}: {made} allocations in a warm round of engine calls")
    });
}

/// One of each: allreduce of one `u64` and of 1M `f64`, blocking and non-blocking, broadcasts
/// of both sizes, a barrier; each result checked (checks allocate only when they fail).
fn round(member: &mut HybridMember, b: &mut Buffers) -> Result<(), String> {
    let size = member.parties();
    let want = (size * (size + 1) / 2) as u64;
    let last = size - 1;
    let check = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("wrong {what}"))
        }
    };
    member
        .allreduce(&b.word, &mut b.sum, Op::Sum)
        .map_err(|e| e.to_string())?;
    check(b.sum == [want], "small allreduce")?;
    member
        .allreduce(&b.array, &mut b.total, Op::Sum)
        .map_err(|e| e.to_string())?;
    check(
        b.total[0] == want as f64 && b.total[LARGE - 1] == want as f64,
        "large allreduce",
    )?;
    b.sum = [0];
    member
        .iallreduce(&b.word, &mut b.sum, Op::Max)
        .and_then(|pending| pending.wait())
        .map_err(|e| e.to_string())?;
    check(b.sum == [size as u64], "non-blocking allreduce")?;
    b.small_cast = [if member.rank() == 0 { 7 } else { 0 }];
    member
        .broadcast(0, &mut b.small_cast)
        .map_err(|e| e.to_string())?;
    check(b.small_cast == [7], "small broadcast")?;
    if member.rank() == last {
        b.cast.fill(3.0);
    } else {
        b.cast.fill(0.0);
    }
    member
        .broadcast(last, &mut b.cast)
        .map_err(|e| e.to_string())?;
    check(
        b.cast[0] == 3.0 && b.cast[LARGE - 1] == 3.0,
        "large broadcast",
    )?;
    member.barrier().map_err(|e| e.to_string())
}
