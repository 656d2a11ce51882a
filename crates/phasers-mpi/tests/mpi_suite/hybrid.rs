//! Hybrid teams (ranks x threads) against the spec in /work/mpi-api.md: every collective against
//! its sequential definition, non-blocking calls on two teams in both orders, split, bad input,
//! checked-mode mismatches, and a 64-member stress of random collectives.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use mpi::traits::CommunicatorCollectives;
use phasers::Op;
use phasers_mpi::{mpi, Error, HybridMember, HybridTeam};

use crate::case::{every, Case, Ctx, Failures};
use crate::rng::Rng;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "hybrid_collectives_match_their_sequential_definitions",
            run: collectives,
        },
        Case {
            name: "hybrid_nonblocking_on_two_teams_in_either_order",
            run: nonblocking,
        },
        Case {
            name: "hybrid_split_colors_none_and_keys",
            run: split,
        },
        Case {
            name: "hybrid_bad_arguments_are_invalid_on_every_member",
            run: bad_arguments,
        },
        Case {
            name: "hybrid_checked_mismatch_reaches_every_member_alike",
            run: mismatches,
        },
        Case {
            name: "hybrid_stress_64_members_random_collectives",
            run: stress,
        },
    ]
}

/// Member `m`'s input for call `c`: small values, so every order of a sum or product of them is
/// exact (wrapping for integers; powers of two for float products).
fn input_u64(m: usize, len: usize, c: u64) -> Vec<u64> {
    (0..len)
        .map(|i| ((m as u64 * 1_000_003) ^ (i as u64 * 7_919) ^ c.wrapping_mul(31)) % 1000 + 1)
        .collect()
}

fn input_f64(m: usize, len: usize, c: u64, for_product: bool) -> Vec<f64> {
    input_u64(m, len, c)
        .into_iter()
        .map(|v| {
            if for_product {
                (1 + v % 2) as f64
            } else {
                v as f64
            }
        })
        .collect()
}

fn custom_u64() -> Op<u64> {
    Op::Custom {
        identity: 0,
        combine: Arc::new(|a: u64, b: u64| (a + b) % 1_000_000_007),
    }
}

fn custom_f64() -> Op<f64> {
    Op::Custom {
        identity: f64::NEG_INFINITY,
        combine: Arc::new(f64::max),
    }
}

/// A named operator and its sequential definition.
type NamedOp<T> = (&'static str, Op<T>, fn(T, T) -> T);
/// As [`NamedOp`], made fresh for each call (`Op` is not `Clone`), and whether the inputs must
/// suit a product.
type FloatOp = (&'static str, fn() -> Op<f64>, fn(f64, f64) -> f64, bool);

fn ops_u64() -> Vec<NamedOp<u64>> {
    vec![
        ("sum", Op::Sum, u64::wrapping_add),
        ("product", Op::Product, u64::wrapping_mul),
        ("min", Op::Min, u64::min),
        ("max", Op::Max, u64::max),
        ("and", Op::And, |a, b| a & b),
        ("or", Op::Or, |a, b| a | b),
        ("xor", Op::Xor, |a, b| a ^ b),
        ("custom", custom_u64(), |a, b| (a + b) % 1_000_000_007),
    ]
}

/// The sequential definition: member 0's input combined with member 1's, and so on.
fn fold<T: Copy>(
    size: usize,
    len: usize,
    input: impl Fn(usize) -> Vec<T>,
    f: impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut acc = input(0);
    assert_eq!(acc.len(), len);
    for m in 1..size {
        for (a, b) in acc.iter_mut().zip(input(m)) {
            *a = f(*a, b);
        }
    }
    acc
}

/// Builds a team of `threads[rank]` members per process and runs `body` on each member's thread.
fn with_team(
    ctx: &Ctx<'_>,
    threads: usize,
    checked: bool,
    node_aware: bool,
    emulate_nodes: Option<usize>,
    body: impl Fn(&mut HybridMember, &Failures) + Sync,
) -> Result<(), String> {
    let mut builder = HybridTeam::builder(ctx.mpi, ctx.comm, threads)
        .checked(checked)
        .node_aware(node_aware);
    if let Some(ranks) = emulate_nodes {
        builder = builder.emulate_nodes(ranks);
    }
    let team = builder.build().map_err(|e| format!("build: {e}"))?;
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut member in team.participants() {
            let (failures, body) = (&failures, &body);
            s.spawn(move || body(&mut member, failures));
        }
    });
    failures.into_result()
}

fn collectives(ctx: &Ctx<'_>) -> Result<(), String> {
    let mut configs = vec![
        (true, true, None),
        (true, false, None),
        (false, true, None),
        (false, false, None),
    ];
    if ctx.size >= 4 {
        // Two emulated nodes of two processes: the node-aware stages run.
        configs.push((true, true, Some(2)));
        configs.push((false, true, Some(2)));
    }
    every(configs, |(checked, node_aware, emulate)| {
        with_team(ctx, 2, checked, node_aware, emulate, |member, failures| {
            let (me, size) = (member.rank(), member.parties());
            let mut c = 0u64;
            let call = |what: String, result: phasers_mpi::Result<()>| {
                if let Err(error) = result {
                    failures.add(format!("member {me}: {what}: {error}"));
                }
            };
            for len in [0usize, 1, 7, 1000] {
                for root in [0, size - 1, size / 2] {
                    c += 1;
                    // broadcast
                    let mut buffer = if me == root { input_u64(root, len, c) } else { vec![0; len] };
                    call(format!("broadcast len {len} root {root}"), member.broadcast(root, &mut buffer));
                    failures.check(buffer == input_u64(root, len, c), || {
                        format!("member {me}: broadcast len {len} root {root}: wrong data")
                    });
                    // reduce, every u64 op
                    for (name, op, f) in ops_u64() {
                        let mut out = vec![0u64; if me == root { len } else { 0 }];
                        call(
                            format!("reduce {name} len {len} root {root}"),
                            member.reduce(root, &input_u64(me, len, c), &mut out, op),
                        );
                        if me == root {
                            let want = fold(size, len, |m| input_u64(m, len, c), f);
                            failures.check(out == want, || {
                                format!("member {me}: reduce {name} len {len} root {root}: wrong result")
                            });
                        }
                    }
                    // gather
                    let mut all = vec![0u64; if me == root { size * len } else { 0 }];
                    call(format!("gather len {len} root {root}"), member.gather(root, &input_u64(me, len, c), &mut all));
                    if me == root {
                        let want: Vec<u64> = (0..size).flat_map(|m| input_u64(m, len, c)).collect();
                        failures.check(all == want, || format!("member {me}: gather len {len} root {root}: wrong result"));
                    }
                    // scatter
                    let whole: Vec<u64> = if me == root {
                        (0..size).flat_map(|m| input_u64(m, len, c + 1)).collect()
                    } else {
                        Vec::new()
                    };
                    let mut mine = vec![0u64; len];
                    call(format!("scatter len {len} root {root}"), member.scatter(root, &whole, &mut mine));
                    failures.check(mine == input_u64(me, len, c + 1), || {
                        format!("member {me}: scatter len {len} root {root}: wrong block")
                    });
                }
                c += 1;
                for (name, op, f) in ops_u64() {
                    let mut out = vec![0u64; len];
                    call(format!("allreduce {name} len {len}"), member.allreduce(&input_u64(me, len, c), &mut out, op));
                    let want = fold(size, len, |m| input_u64(m, len, c), f);
                    failures.check(out == want, || format!("member {me}: allreduce {name} len {len}: wrong result"));
                }
                // `Op` is not `Clone`: each call makes its own.
                let f64_ops: [FloatOp; 4] = [
                    ("sum", || Op::Sum, |a, b| a + b, false),
                    ("product", || Op::Product, |a, b| a * b, true),
                    ("min", || Op::Min, f64::min, false),
                    ("custom max", custom_f64, f64::max, false),
                ];
                for (name, op, f, for_product) in f64_ops {
                    let mut out = vec![0f64; len];
                    call(
                        format!("allreduce f64 {name} len {len}"),
                        member.allreduce(&input_f64(me, len, c, for_product), &mut out, op()),
                    );
                    let want = fold(size, len, |m| input_f64(m, len, c, for_product), f);
                    failures.check(out == want, || format!("member {me}: allreduce f64 {name} len {len}: wrong result"));
                    let root = size - 1;
                    let mut out = vec![0f64; if me == root { len } else { 0 }];
                    call(
                        format!("reduce f64 {name} len {len}"),
                        member.reduce(root, &input_f64(me, len, c, for_product), &mut out, op()),
                    );
                    if me == root {
                        failures.check(out == want, || format!("member {me}: reduce f64 {name} len {len}: wrong result"));
                    }
                }
                call(format!("barrier after len {len}"), member.barrier());
            }
        })
        .map_err(|e| format!("checked {checked} node_aware {node_aware} emulated nodes {emulate:?}: {e}"))
    })
}

/// Two teams on one communicator; each member starts a call on both and polls both with
/// `test()`, finishing them in an order that depends on its rank.
fn nonblocking(ctx: &Ctx<'_>) -> Result<(), String> {
    const THREADS: usize = 3;
    let build = || {
        HybridTeam::builder(ctx.mpi, ctx.comm, THREADS)
            .build()
            .map_err(|e| e.to_string())
    };
    let (first, second) = (build()?, build()?);
    let failures = Failures::default();
    std::thread::scope(|s| {
        for (mut a, mut b) in first.participants().into_iter().zip(second.participants()) {
            let failures = &failures;
            s.spawn(move || {
                let (me, size) = (a.rank(), a.parties());
                for c in 0..20u64 {
                    let len = [1usize, 7, 0, 100][c as usize % 4];
                    let input = input_u64(me, len, c);
                    let mut sum = vec![0u64; len];
                    let mut all = vec![0u64; if me == 0 { size * len } else { 0 }];
                    let mut pa = match a.iallreduce(&input, &mut sum, Op::Sum) {
                        Ok(pending) => pending,
                        Err(error) => {
                            failures.add(format!("member {me}: call {c}: iallreduce: {error}"));
                            return;
                        }
                    };
                    let mut pb = match b.igather(0, &input, &mut all) {
                        Ok(pending) => pending,
                        Err(error) => {
                            failures.add(format!("member {me}: call {c}: igather: {error}"));
                            return;
                        }
                    };
                    let (mut done_a, mut done_b) = (false, false);
                    let a_first = (me + c as usize) % 2 == 0;
                    let mut polls = 0u64;
                    while !(done_a && done_b) {
                        polls += 1;
                        // Poll only one side until it is done, then the other.
                        let result = if (a_first && !done_a) || done_b {
                            pa.test().map(|d| done_a = d)
                        } else {
                            pb.test().map(|d| done_b = d)
                        };
                        if let Err(error) = result {
                            failures.add(format!("member {me}: call {c}: test: {error}"));
                            return;
                        }
                        if polls % 64 == 0 {
                            std::thread::yield_now();
                        }
                    }
                    let (ra, rb) = (pa.wait(), pb.wait());
                    if let Err(error) = ra.and(rb) {
                        failures.add(format!("member {me}: call {c}: wait after test: {error}"));
                    }
                    let want = fold(size, len, |m| input_u64(m, len, c), u64::wrapping_add);
                    failures.check(sum == want, || {
                        format!("member {me}: call {c}: iallreduce wrong")
                    });
                    if me == 0 {
                        let want: Vec<u64> = (0..size).flat_map(|m| input_u64(m, len, c)).collect();
                        failures.check(all == want, || {
                            format!("member {me}: call {c}: igather wrong")
                        });
                    }
                }
            });
        }
    });
    failures.into_result()
}

/// Colors by rank parity, the last member opts out with NONE, keys reverse the order: each new
/// member's rank is its place by (key, old rank) among its color, and an allreduce on the
/// sub-team adds up exactly its members' old ranks.
fn split(ctx: &Ctx<'_>) -> Result<(), String> {
    with_team(ctx, 3, true, true, None, |member, failures| {
        let (me, size) = (member.rank(), member.parties());
        let color_of = |m: usize| {
            if m == size - 1 {
                phasers::team::NONE
            } else {
                (m % 2) as u32
            }
        };
        let key_of = |m: usize| -((m / 2) as i64);
        match member.split(color_of(me), key_of(me)) {
            Err(error) => failures.add(format!("member {me}: split: {error}")),
            Ok(None) => failures.check(me == size - 1, || format!("member {me} got no sub-team")),
            Ok(Some(mut sub)) => {
                let mut peers: Vec<usize> =
                    (0..size).filter(|&m| color_of(m) == color_of(me)).collect();
                peers.sort_by_key(|&m| (key_of(m), m));
                let place = peers
                    .iter()
                    .position(|&m| m == me)
                    .expect("in its own color");
                failures.check(
                    me != size - 1 && sub.rank() == place && sub.parties() == peers.len(),
                    || {
                        format!(
                            "member {me}: sub-team rank {} size {}, expected {place} of {}",
                            sub.rank(),
                            sub.parties(),
                            peers.len()
                        )
                    },
                );
                let mut sum = [0u64];
                match sub.allreduce(&[me as u64], &mut sum, Op::Sum) {
                    Ok(()) => failures.check(sum[0] == peers.iter().sum::<usize>() as u64, || {
                        format!("member {me}: sub-team sum {} for peers {peers:?}", sum[0])
                    }),
                    Err(error) => failures.add(format!("member {me}: sub-team allreduce: {error}")),
                }
                let mut gathered = vec![0u64; if sub.rank() == 0 { sub.parties() } else { 0 }];
                match sub.gather(0, &[me as u64], &mut gathered) {
                    Ok(()) if sub.rank() == 0 => {
                        let want: Vec<u64> = peers.iter().map(|&m| m as u64).collect();
                        failures.check(gathered == want, || {
                            format!("member {me}: sub-team gather {gathered:?}, expected {want:?}")
                        });
                    }
                    Ok(()) => {}
                    Err(error) => failures.add(format!("member {me}: sub-team gather: {error}")),
                }
            }
        }
        if let Err(error) = member.barrier() {
            failures.add(format!("member {me}: barrier after split: {error}"));
        }
    })
}

fn bad_arguments(ctx: &Ctx<'_>) -> Result<(), String> {
    every([true, false], |checked| {
        with_team(ctx, 2, checked, true, None, |member, failures| {
            let (me, size) = (member.rank(), member.parties());
            let invalid = |what: &str, result: phasers_mpi::Result<()>| match result {
                Err(Error::InvalidArgument { .. }) => {}
                other => failures.add(format!(
                    "member {me}: {what}: {other:?}, expected InvalidArgument"
                )),
            };
            // Every member passes the same bad root.
            let mut buffer = [1u64; 3];
            invalid("broadcast root = size", member.broadcast(size, &mut buffer));
            let mut out = [0u64; 3];
            invalid("allreduce f64 with a bitwise op", {
                let mut out = [0f64; 3];
                member.allreduce(&[1.0; 3], &mut out, Op::Xor)
            });
            invalid(
                "reduce root = size",
                member.reduce(size, &[1; 3], &mut out, Op::Sum),
            );
            if checked {
                // Only the root's output is wrong: in checked mode every member learns of it.
                let mut all = vec![0u64; if me == 0 { size * 2 + 1 } else { 0 }];
                invalid(
                    "gather with a root output too long",
                    member.gather(0, &[1, 2], &mut all),
                );
                let whole = vec![0u64; if me == 0 { size } else { 0 }];
                let mut mine = [0u64; 2];
                invalid(
                    "scatter with a root input too short",
                    member.scatter(0, &whole, &mut mine),
                );
            }
            // The team still works.
            let mut sum = [0u64];
            match member.allreduce(&[1], &mut sum, Op::Sum) {
                Ok(()) => failures.check(sum[0] == size as u64, || {
                    format!("member {me}: sum {} after bad calls", sum[0])
                }),
                Err(error) => {
                    failures.add(format!("member {me}: allreduce after bad calls: {error}"))
                }
            }
        })
        .map_err(|e| format!("checked {checked}: {e}"))
    })
}

/// In checked mode the last member differs (length, collective, root): every member of every
/// process gets `Error::Mismatch` naming what differs, with the same text everywhere.
fn mismatches(ctx: &Ctx<'_>) -> Result<(), String> {
    type Scenario = (
        &'static str,
        fn(&mut HybridMember) -> phasers_mpi::Result<()>,
    );
    let scenarios: [Scenario; 3] = [
        ("length", |m| {
            let len = if m.rank() == m.parties() - 1 { 2 } else { 1 };
            let mut out = vec![0u64; len];
            m.allreduce(&vec![1u64; len], &mut out, Op::Sum)
        }),
        ("collective", |m| {
            let mut buffer = [0u64; 1];
            if m.rank() == m.parties() - 1 {
                m.broadcast(0, &mut buffer)
            } else {
                let mut out = [0u64; 1];
                m.allreduce(&[1], &mut out, Op::Sum)
            }
        }),
        ("root", |m| {
            let root = usize::from(m.rank() == m.parties() - 1);
            let mut buffer = [0u64; 1];
            m.broadcast(root, &mut buffer)
        }),
    ];
    every(scenarios, |(what, scenario)| {
        let texts = std::sync::Mutex::new(Vec::new());
        with_team(ctx, 2, true, true, None, |member, failures| {
            let me = member.rank();
            match scenario(member) {
                Err(error @ Error::Mismatch { .. }) => {
                    if let Error::Mismatch { what: got, .. } = &error {
                        failures.check(*got == what, || {
                            format!("member {me}: mismatch of {got:?}, expected {what:?}")
                        });
                    }
                    texts.lock().unwrap().push(error.to_string());
                }
                other => failures.add(format!(
                    "member {me}: {other:?}, expected Mismatch of {what}"
                )),
            }
        })
        .map_err(|e| format!("{what}: {e}"))?;
        let texts = texts.into_inner().unwrap();
        let mut hasher = DefaultHasher::new();
        texts.first().hash(&mut hasher);
        let mine = hasher.finish();
        let mut all = vec![0u64; ctx.size];
        ctx.comm.all_gather_into(&mine, &mut all[..]);
        if texts.iter().any(|t| Some(t) != texts.first()) || all.iter().any(|&h| h != mine) {
            return Err(format!(
                "{what}: members report different mismatches: {texts:?} (hashes by rank {all:?})"
            ));
        }
        Ok(())
    })
}

/// 64 members (threads x ranks) run 150 collectives chosen at random from one seed shared by
/// all, with random lengths and roots, each result checked.
fn stress(ctx: &Ctx<'_>) -> Result<(), String> {
    let threads = (64 / ctx.size).max(1);
    let seed = ctx.seed;
    with_team(ctx, threads, true, true, None, |member, failures| {
        let (me, size) = (member.rank(), member.parties());
        // The same sequence on every member.
        let mut shared = Rng::new(seed, 0, 0);
        let mut own = Rng::new(seed, me, 1);
        for c in 0..150u64 {
            let (kind, len, root) = (
                shared.below(5),
                shared.below(9) as usize,
                shared.below(size as u64) as usize,
            );
            own.maybe_sleep(32, std::time::Duration::from_micros(300));
            let input = input_u64(me, len, c);
            let result = match kind {
                0 => {
                    let mut buffer = if me == root {
                        input_u64(root, len, c)
                    } else {
                        vec![0; len]
                    };
                    let r = member.broadcast(root, &mut buffer);
                    failures.check(buffer == input_u64(root, len, c), || {
                        format!("member {me}: call {c}: broadcast wrong")
                    });
                    r
                }
                1 => {
                    let mut out = vec![0u64; len];
                    let r = member.allreduce(&input, &mut out, Op::Max);
                    failures.check(
                        out == fold(size, len, |m| input_u64(m, len, c), u64::max),
                        || format!("member {me}: call {c}: allreduce wrong"),
                    );
                    r
                }
                2 => {
                    let mut out = vec![0u64; if me == root { len } else { 0 }];
                    let r = member.reduce(root, &input, &mut out, custom_u64());
                    if me == root {
                        failures.check(
                            out == fold(
                                size,
                                len,
                                |m| input_u64(m, len, c),
                                |a, b| (a + b) % 1_000_000_007,
                            ),
                            || format!("member {me}: call {c}: reduce wrong"),
                        );
                    }
                    r
                }
                3 => {
                    let mut all = vec![0u64; if me == root { size * len } else { 0 }];
                    let r = member.gather(root, &input, &mut all);
                    if me == root {
                        let want: Vec<u64> = (0..size).flat_map(|m| input_u64(m, len, c)).collect();
                        failures.check(all == want, || {
                            format!("member {me}: call {c}: gather wrong")
                        });
                    }
                    r
                }
                _ => member.barrier(),
            };
            if let Err(error) = result {
                failures.add(format!("member {me}: call {c} (kind {kind}): {error}"));
                return;
            }
        }
    })
}
