//! Checks every collective of the hybrid team against its definition, over several team shapes
//! (checked and unchecked, flat and node-aware, real and emulated nodes), with a different
//! number of threads per process.
//!
//! ```text
//! mpirun --allow-run-as-root -np 2 --bind-to none target/debug/examples/hybrid_team
//! mpirun --allow-run-as-root -np 4 --oversubscribe target/debug/examples/hybrid_team
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};

use phasers::Op;
use phasers_mpi::{Error, HybridMember, HybridTeam, Mpi, Threading};

const LENGTHS: [usize; 4] = [0, 1, 7, 1000];

fn values(rank: usize, len: usize) -> Vec<u64> {
    (0..len).map(|i| (rank * 1000 + i) as u64).collect()
}

fn floats(rank: usize, len: usize) -> Vec<f64> {
    values(rank, len).into_iter().map(|v| v as f64).collect()
}

fn roots(size: usize) -> Vec<usize> {
    let mut roots = vec![0, size / 2, size - 1];
    roots.dedup();
    roots
}

struct Checks<'a> {
    count: &'a AtomicUsize,
}

impl Checks<'_> {
    fn eq<T: PartialEq + std::fmt::Debug>(&self, got: T, want: T, what: &str) {
        assert_eq!(got, want, "{what}");
        self.count.fetch_add(1, Ordering::Relaxed);
    }
}

fn blocking(m: &mut HybridMember, c: &Checks) {
    let (rank, size) = (m.rank(), m.parties());
    for _ in 0..3 {
        m.barrier().unwrap();
    }
    for len in LENGTHS {
        for root in roots(size) {
            let mut buf = if rank == root {
                values(root, len)
            } else {
                vec![0; len]
            };
            m.broadcast(root, &mut buf).unwrap();
            c.eq(&buf, &values(root, len), "broadcast");

            let want_sum: Vec<u64> = (0..len)
                .map(|i| (0..size).map(|r| values(r, len)[i]).sum())
                .collect();
            let mut out = vec![0u64; if rank == root { len } else { 0 }];
            m.reduce(root, &values(rank, len), &mut out, Op::Sum)
                .unwrap();
            if rank == root {
                c.eq(&out, &want_sum, "reduce Sum");
            }
            let mut out = vec![0u64; if rank == root { len } else { 0 }];
            let custom = Op::custom(0u64, |a: u64, b: u64| a.wrapping_add(b));
            m.reduce(root, &values(rank, len), &mut out, custom)
                .unwrap();
            if rank == root {
                c.eq(&out, &want_sum, "reduce Custom");
            }
            let mut fout = vec![0f64; if rank == root { len } else { 0 }];
            m.reduce(root, &floats(rank, len), &mut fout, Op::Max)
                .unwrap();
            if rank == root {
                c.eq(&fout, &floats(size - 1, len), "reduce f64 Max");
            }

            let mut all = vec![0u64; if rank == root { len * size } else { 0 }];
            m.gather(root, &values(rank, len), &mut all).unwrap();
            if rank == root {
                let want: Vec<u64> = (0..size).flat_map(|r| values(r, len)).collect();
                c.eq(&all, &want, "gather");
            }

            let input: Vec<u64> = if rank == root {
                (0..size).flat_map(|r| values(r, len)).collect()
            } else {
                Vec::new()
            };
            let mut mine = vec![0u64; len];
            m.scatter(root, &input, &mut mine).unwrap();
            c.eq(&mine, &values(rank, len), "scatter");
        }
        let want_sum: Vec<u64> = (0..len)
            .map(|i| (0..size).map(|r| values(r, len)[i]).sum())
            .collect();
        let mut out = vec![0u64; len];
        m.allreduce(&values(rank, len), &mut out, Op::Sum).unwrap();
        c.eq(&out, &want_sum, "allreduce Sum");
        m.allreduce(&values(rank, len), &mut out, Op::Min).unwrap();
        c.eq(&out, &values(0, len), "allreduce Min");
        m.allreduce(&values(rank, len), &mut out, Op::Max).unwrap();
        c.eq(&out, &values(size - 1, len), "allreduce Max");
        let want_xor: Vec<u64> = (0..len)
            .map(|i| (0..size).fold(0, |x, r| x ^ values(r, len)[i]))
            .collect();
        m.allreduce(&values(rank, len), &mut out, Op::Xor).unwrap();
        c.eq(&out, &want_xor, "allreduce Xor");
        let custom = Op::custom(0u64, |a: u64, b: u64| a.wrapping_add(b));
        m.allreduce(&values(rank, len), &mut out, custom).unwrap();
        c.eq(&out, &want_sum, "allreduce Custom");
        let mut fout = vec![0f64; len];
        m.allreduce(&floats(rank, len), &mut fout, Op::Sum).unwrap();
        let want: Vec<f64> = want_sum.iter().map(|&v| v as f64).collect();
        c.eq(&fout, &want, "allreduce f64 Sum");
        let fmax = Op::custom(f64::NEG_INFINITY, f64::max);
        m.allreduce(&floats(rank, len), &mut fout, fmax).unwrap();
        c.eq(&fout, &floats(size - 1, len), "allreduce f64 Custom max");
    }
}

fn non_blocking(m: &mut HybridMember, c: &Checks) {
    let (rank, size) = (m.rank(), m.parties());
    let by_test = rank % 2 == 0;
    for len in LENGTHS {
        let root = size - 1;
        let mut buf = if rank == root {
            values(root, len)
        } else {
            vec![0; len]
        };
        let mut p = m.ibroadcast(root, &mut buf).unwrap();
        if by_test {
            while !p.test().unwrap() {
                std::thread::yield_now();
            }
            assert!(p.test().unwrap());
            drop(p);
        } else {
            p.wait().unwrap();
        }
        c.eq(&buf, &values(root, len), "ibroadcast");

        let mut out = vec![0u64; len];
        let input = values(rank, len);
        let p = m.iallreduce(&input, &mut out, Op::Sum).unwrap();
        if by_test {
            drop(p); // dropping waits
        } else {
            p.wait().unwrap();
        }
        let want: Vec<u64> = (0..len)
            .map(|i| (0..size).map(|r| values(r, len)[i]).sum())
            .collect();
        c.eq(&out, &want, "iallreduce");

        let mut all = vec![0u64; if rank == 0 { len * size } else { 0 }];
        m.igather(0, &input, &mut all).unwrap().wait().unwrap();
        if rank == 0 {
            let want: Vec<u64> = (0..size).flat_map(|r| values(r, len)).collect();
            c.eq(&all, &want, "igather");
        }
        let src: Vec<u64> = if rank == 0 {
            (0..size).flat_map(|r| values(r, len)).collect()
        } else {
            Vec::new()
        };
        let mut mine = vec![0u64; len];
        m.iscatter(0, &src, &mut mine).unwrap().wait().unwrap();
        c.eq(&mine, &values(rank, len), "iscatter");
        let mut red = vec![0f64; if rank == 1 % size { len } else { 0 }];
        let fin = floats(rank, len);
        m.ireduce(1 % size, &fin, &mut red, Op::Min)
            .unwrap()
            .wait()
            .unwrap();
        if rank == 1 % size {
            c.eq(&red, &floats(0, len), "ireduce f64 Min");
        }
        let mut p = m.ibarrier().unwrap();
        while !p.test().unwrap() {}
    }
}

fn splits(m: &mut HybridMember, c: &Checks) {
    let (rank, size) = (m.rank(), m.parties());
    // Halves by parity, equal keys: new ranks follow old ranks exactly.
    let mut half = m.split((rank % 2) as u32, 0).unwrap().unwrap();
    let same: Vec<usize> = (0..size).filter(|r| r % 2 == rank % 2).collect();
    c.eq(half.parties(), same.len(), "split size");
    c.eq(
        half.rank(),
        same.iter().position(|&r| r == rank).unwrap(),
        "split rank",
    );
    let mut sum = [0u64];
    half.allreduce(&[rank as u64], &mut sum, Op::Sum).unwrap();
    c.eq(
        sum[0],
        same.iter().map(|&r| r as u64).sum::<u64>(),
        "split allreduce",
    );
    let mut old = vec![0usize; if half.rank() == 0 { half.parties() } else { 0 }];
    half.gather(0, &[rank], &mut old).unwrap();
    if half.rank() == 0 {
        c.eq(old, same.clone(), "split gather of old ranks");
    }
    // Reversed keys: the same members, in (key, old rank) order where the layout allows.
    let mut rev = m.split(0, -(rank as i64)).unwrap().unwrap();
    c.eq(rev.parties(), size, "reversed split size");
    let mut seen = vec![0usize; if rev.rank() == 0 { size } else { 0 }];
    rev.gather(0, &[rank], &mut seen).unwrap();
    if rev.rank() == 0 {
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        c.eq(
            sorted,
            (0..size).collect::<Vec<_>>(),
            "reversed split is a permutation",
        );
    }
    // Opting out.
    let color = if rank == 0 { phasers::team::NONE } else { 7 };
    let rest = m.split(color, 0).unwrap();
    c.eq(rest.is_none(), rank == 0, "split NONE");
    if let Some(mut rest) = rest {
        c.eq(rest.parties(), size - 1, "split without member 0");
        rest.barrier().unwrap();
    }
    // The parent and the halves still work, in either order.
    half.barrier().unwrap();
    m.barrier().unwrap();
}

fn errors(m: &mut HybridMember, c: &Checks) {
    let (rank, size) = (m.rank(), m.parties());
    let mut buf = [0u64; 3];
    let e = m.broadcast(size, &mut buf).unwrap_err();
    c.eq(
        matches!(e, Error::InvalidArgument { .. }),
        true,
        "root out of range",
    );
    if !m.is_checked() {
        return;
    }
    // A root output of the wrong length at one member reaches every member.
    let mut out = vec![0u64; if rank == 0 { 2 } else { 0 }];
    let e = m.reduce(0, &[1u64], &mut out, Op::Sum).unwrap_err();
    c.eq(
        matches!(e, Error::InvalidArgument { .. }),
        true,
        "bad root output",
    );
    // Mismatched roots: the same Mismatch everywhere, with global ranks.
    let root = if rank == size - 1 { 1 % size } else { 0 };
    let e = m.broadcast(root, &mut buf).unwrap_err();
    match e {
        Error::Mismatch {
            what,
            rank: r,
            other,
            ..
        } if size > 1 => c.eq((what, r, other), ("root", 0, size - 1), "root mismatch"),
        e => panic!("expected a root mismatch, got {e:?}"),
    }
    // Mismatched collectives.
    let e = if rank == 0 {
        m.barrier()
    } else {
        m.allreduce(&[1u64], &mut [0], Op::Sum)
    }
    .unwrap_err();
    c.eq(
        matches!(
            e,
            Error::Mismatch {
                what: "collective",
                ..
            }
        ),
        true,
        "collective mismatch",
    );
    // Mismatched lengths.
    let len = if rank == size - 1 { 2 } else { 1 };
    let e = m
        .allreduce(&vec![1u64; len], &mut vec![0; len], Op::Sum)
        .unwrap_err();
    c.eq(
        matches!(e, Error::Mismatch { what: "length", .. }),
        true,
        "length mismatch",
    );
    // Mismatched ops.
    let op = if rank == 0 { Op::Sum } else { Op::Max };
    let e = m.allreduce(&[1u64], &mut [0], op).unwrap_err();
    c.eq(
        matches!(
            e,
            Error::Mismatch {
                what: "operation",
                ..
            }
        ),
        true,
        "op mismatch",
    );
    // And the team still works.
    let mut sum = [0u64];
    m.allreduce(&[1], &mut sum, Op::Sum).unwrap();
    c.eq(sum[0], size as u64, "allreduce after errors");
}

fn main() -> Result<(), Error> {
    let mpi = Mpi::init(Threading::Serialized)?;
    let me = mpi.rank();
    // Processes hold different numbers of threads.
    let threads = 2 + me % 2;
    let count = AtomicUsize::new(0);
    let shapes = [
        ("checked, node-aware", true, true, None),
        ("unchecked, node-aware", false, true, None),
        ("checked, flat", true, false, None),
        ("unchecked, emulated nodes of 2", false, true, Some(2)),
        ("checked, emulated nodes of 2", true, true, Some(2)),
    ];
    for (name, checked, node_aware, nodes) in shapes {
        let mut builder = HybridTeam::builder(&mpi, mpi.world(), threads)
            .checked(checked)
            .node_aware(node_aware)
            .timeout(std::time::Duration::from_secs(60));
        if let Some(n) = nodes {
            builder = builder.emulate_nodes(n);
        }
        let team = builder.build()?;
        assert_eq!(team.is_checked(), checked);
        let c = Checks { count: &count };
        std::thread::scope(|s| {
            for mut m in team.participants() {
                let c = &c;
                s.spawn(move || {
                    blocking(&mut m, c);
                    non_blocking(&mut m, c);
                    splits(&mut m, c);
                    errors(&mut m, c);
                    m.barrier().unwrap();
                });
            }
        });
        if me == 0 {
            println!(
                "hybrid_team: {name} (size {}, node-aware stages: {}): ok",
                team.parties(),
                team.is_node_aware()
            );
        }
    }
    println!(
        "hybrid_team: process {me}: {} checks passed",
        count.load(Ordering::Relaxed)
    );
    Ok(())
}
