//! Times a hybrid team's allreduce of one `u64` and of 1M `f64` against `MPI_Allreduce` with
//! one thread per process: a quick look, not a benchmark (see the `phasers` command for those).
//!
//! ```text
//! mpirun --allow-run-as-root -np 2 --bind-to none target/release/examples/hybrid_allreduce [threads]
//! ```

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::traits::CommunicatorCollectives;
use phasers::Op;
use phasers_mpi::{mpi, Error, HybridTeam, Mpi, Threading};

fn main() -> Result<(), Error> {
    let mpi = Mpi::init(Threading::Serialized)?;
    let threads: usize = std::env::args()
        .nth(1)
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let team = HybridTeam::builder(&mpi, mpi.world(), threads)
        .checked(false)
        .build()?;
    let lengths = [(1usize, 20_000u32), (1 << 20, 20)];
    let mut hybrid = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = team
            .members()
            .into_iter()
            .map(|mut m| {
                s.spawn(move || {
                    let mut times = Vec::new();
                    for (len, reps) in lengths {
                        let input = vec![1.0f64; len];
                        let mut out = vec![0.0f64; len];
                        m.barrier().unwrap();
                        let start = Instant::now();
                        for _ in 0..reps {
                            m.allreduce(&input, &mut out, Op::Sum).unwrap();
                        }
                        times.push(start.elapsed() / reps);
                        assert_eq!(out[0], m.size() as f64);
                    }
                    times
                })
            })
            .collect();
        hybrid = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .next()
            .unwrap();
    });
    for ((len, reps), hybrid) in lengths.into_iter().zip(hybrid) {
        let input = vec![1.0f64; len];
        let mut out = vec![0.0f64; len];
        let start = Instant::now();
        for _ in 0..reps {
            mpi.world()
                .all_reduce_into(&input[..], &mut out[..], SystemOperation::sum());
        }
        let plain = start.elapsed() / reps;
        if mpi.rank() == 0 {
            println!(
                "allreduce of {len} f64: hybrid team ({threads} thread(s) per process) {hybrid:?}, \
                 MPI_Allreduce {plain:?}"
            );
        }
    }
    Ok(())
}
