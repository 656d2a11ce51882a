//! Times a hybrid team's allreduce (`f64`, `Op::Sum`), checked (the default) and unchecked,
//! against `MPI_Allreduce` with one thread per process, and a checked and an unchecked barrier:
//! a quick look at what the check costs, not a benchmark (see the `phasers-mpi` command for
//! those). Lengths: 1 word, 17 (the most a checked call carries inside its envelope), 18 (the
//! first that sends its envelope first), 1024 and 1M.
//!
//! ```text
//! mpirun --allow-run-as-root -np 2 --bind-to none target/release/examples/hybrid_allreduce [threads]
//! ```

use std::time::{Duration, Instant};

use mpi::collective::SystemOperation;
use mpi::traits::CommunicatorCollectives;
use phasers::Op;
use phasers_mpi::{mpi, Error, HybridMember, HybridTeam, Mpi, Threading};

/// (elements, calls per round); `0` elements times a barrier.
const LENGTHS: [(usize, u32); 6] = [
    (0, 20_000),
    (1, 20_000),
    (17, 20_000),
    (18, 20_000),
    (1024, 5_000),
    (1 << 20, 10),
];
/// Rounds per length; each round times checked, then unchecked, and the best round counts, so
/// both see the same machine.
const ROUNDS: usize = 5;

fn time(m: &mut HybridMember, len: usize, reps: u32) -> Duration {
    let input = vec![1.0f64; len];
    let mut out = vec![0.0f64; len];
    m.barrier().unwrap();
    let start = Instant::now();
    for _ in 0..reps {
        if len == 0 {
            m.barrier().unwrap();
        } else {
            m.allreduce(&input, &mut out, Op::Sum).unwrap();
        }
    }
    let took = start.elapsed() / reps;
    if len > 0 {
        assert_eq!(out[0], m.parties() as f64);
    }
    took
}

fn main() -> Result<(), Error> {
    let mpi = Mpi::init(Threading::Serialized)?;
    let threads: usize = std::env::args()
        .nth(1)
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let checked = HybridTeam::new(&mpi, mpi.world(), threads)?;
    let unchecked = HybridTeam::builder(&mpi, mpi.world(), threads)
        .unchecked()
        .build()?;
    let mut best = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = checked
            .participants()
            .into_iter()
            .zip(unchecked.participants())
            .map(|(mut c, mut u)| {
                s.spawn(move || {
                    LENGTHS.map(|(len, reps)| {
                        let (mut tc, mut tu) = (Duration::MAX, Duration::MAX);
                        for _ in 0..ROUNDS {
                            tc = tc.min(time(&mut c, len, reps));
                            tu = tu.min(time(&mut u, len, reps));
                        }
                        (tc, tu)
                    })
                })
            })
            .collect();
        best = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .next()
            .unwrap()
            .to_vec();
    });
    for ((len, reps), (tc, tu)) in LENGTHS.into_iter().zip(best) {
        let what = if len == 0 {
            "barrier".to_owned()
        } else {
            format!("allreduce of {len} f64")
        };
        let mut plain = Duration::MAX;
        if len > 0 {
            let input = vec![1.0f64; len];
            let mut out = vec![0.0f64; len];
            for _ in 0..ROUNDS {
                let start = Instant::now();
                for _ in 0..reps {
                    mpi.world()
                        .all_reduce_into(&input[..], &mut out[..], SystemOperation::sum());
                }
                plain = plain.min(start.elapsed() / reps);
            }
        }
        if mpi.rank() == 0 {
            let plain = if len > 0 {
                format!(", MPI_Allreduce {plain:?}")
            } else {
                String::new()
            };
            println!(
                "{what}: hybrid team ({threads} thread(s) per process) checked {tc:?}, unchecked \
                 {tu:?} ({:+.0}%){plain}",
                (tc.as_secs_f64() / tu.as_secs_f64() - 1.0) * 100.0
            );
        }
    }
    Ok(())
}
