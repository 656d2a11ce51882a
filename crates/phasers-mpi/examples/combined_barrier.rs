//! Every thread of every rank meets at a combined barrier, then each process barrier algorithm.
//!
//! ```text
//! mpirun -np 2 --bind-to none target/debug/examples/combined_barrier
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use phasers_mpi::{CombinedBarrier, Mpi, ProcessAlgorithm, ProcessBarrier, Threading};

fn main() {
    if let Err(error) = run() {
        eprintln!("combined_barrier: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), phasers_mpi::Error> {
    let mpi = Mpi::init(Threading::Serialized)?;
    for algorithm in ProcessAlgorithm::ALL {
        let mut barrier = ProcessBarrier::new(&mpi, mpi.world(), algorithm)?;
        for _ in 0..1000 {
            barrier.wait()?;
        }
    }
    let threads = 3;
    let led = AtomicU64::new(0);
    let barrier = CombinedBarrier::builder(&mpi, mpi.world(), threads).build()?;
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let led = &led;
            s.spawn(move || {
                for round in 0..1000 {
                    let result = p.wait().unwrap();
                    assert_eq!(result.episode(), round);
                    if result.is_leader() {
                        led.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(led.load(Ordering::Relaxed), 1000);
    println!(
        "rank {} of {}: 1000 episodes of every process barrier and of the combined barrier \
         ({threads} threads per rank)",
        mpi.rank(),
        mpi.size()
    );
    Ok(())
}
